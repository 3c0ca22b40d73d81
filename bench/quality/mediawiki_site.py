"""A MediaWiki 1.39 wiki (Debian's `mediawiki` package, SQLite) with real text, served by our own
Apache httpd with mod_php, for the quality harness (issue 23 item 7; standard library only).

  setup DIR --pages N --port P [--port2 P2] --host H --log LOG  (P2: a second Listen port)
        a new wiki in DIR (LocalSettings.php, SQLite in DIR/db; the code stays in /usr/share/mediawiki,
        found through MW_CONFIG_FILE: Apache prepends a file that defines it): N article pages (one per
        installed package: description, changelog entries, links to other pages, categories), 3-6
        revisions each by four users, category pages, some talk pages and redirects, imported with
        maintenance/importDump.php; and DIR/apache/httpd.conf (short URLs /wiki/Title as
        https://www.mediawiki.org/wiki/Manual:Short_URL/Apache describes, /w/index.php for the rest)
  edit DIR --round R
        the site changes: rounds 1 and 2 (between the traffic runs) add revisions to some pages, add a
        page and delete a few pages; round 3 (after the logs were written, before validation: the logs
        are older than the site, as in production) also deletes every old revision of some pages
        (maintenance/deleteOldRevisions.php), so their `oldid=` and `diff=` URLs in the logs now answer
        with MediaWiki's error page, status 200 — a soft error.

Everything anonymous users can reach is read-only (no anonymous edits or sign-ups): action=edit shows
"View source".  Deterministic: seeded (the changelog text comes from this machine's packages).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import escape

sys.path.insert(0, str(Path(__file__).resolve().parent))

import content  # noqa: E402

MW = Path("/usr/share/mediawiki")
USERS = ("Alice", "Bob", "Carol", "Dave")
PASSWORD = "Quality-harness-1"
SUMMARIES = ("copy edit", "new upstream version", "links", "more detail", "typo", "categories", "changelog")
SETTINGS = """
# --- bench/quality/mediawiki_site.py ---
$wgArticlePath = "/wiki/$1";
$wgUsePathInfo = true;
$wgDefaultSkin = "monobook";
$wgMainCacheType = CACHE_DB;
$wgCacheDirectory = "{cache}";
$wgGroupPermissions['*']['edit'] = false;
$wgGroupPermissions['*']['createaccount'] = false;
$wgJobRunRate = 0;
$wgRCMaxAge = 20 * 365 * 86400;
$wgEnableEmail = false;
$wgShowExceptionDetails = true;
$wgUseImageMagick = false;
"""


def title_of(name: str) -> str:
    return name[:1].upper() + name[1:]


def php(root: Path, script: str, *args: str, stdin: str | None = None) -> str:
    env = dict(os.environ, MW_CONFIG_FILE=str(root / "LocalSettings.php"))
    r = subprocess.run(["php", str(MW / "maintenance" / script), *args], cwd=MW, env=env, input=stdin,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{script} failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    give_to_server(root)
    return r.stdout


def give_to_server(root: Path) -> None:
    """Apache's workers (www-data when we are root) write the SQLite files the maintenance scripts made."""
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "www-data:www-data", str(root / "db"), str(root / "cache")], check=True)


def article(p: content.Package, others: list[str], rev: int, rnd: random.Random) -> str:
    see = "".join(f"* [[{o}]]\n" for o in rnd.sample(others, min(3 + rev % 2, len(others))))
    changes = "".join(f"=== {v} ===\n<pre>\n{t[:900]}\n</pre>\n" for v, _, t in p.changes[: rev + 1])
    words = p.description.split()
    cut = len(words) * (rev + 2) // (rev + 3)
    return (f"'''{p.name}''' is a package of the section [[:Category:{p.section}|{p.section}]]: {p.summary}.\n\n"
            f"== Description ==\n{' '.join(words[:cut])}\n\n"
            f"Version: <code>{p.version}</code>" + (f", homepage {p.homepage}" if p.homepage else "") + "\n\n"
            + (f"== Recent changes ==\n{changes}\n" if changes else "")
            + f"== See also ==\n{see}\n[[Category:{p.section}]]\n[[Category:Packages]]\n")


def revision(text: str, when: datetime, user: str, summary: str) -> str:
    return (f"<revision><timestamp>{when:%Y-%m-%dT%H:%M:%SZ}</timestamp><contributor><username>{user}</username>"
            f"</contributor><comment>{escape(summary)}</comment><model>wikitext</model><format>text/x-wiki</format>"
            f"<text xml:space=\"preserve\">{escape(text)}</text></revision>")


def page(title: str, ns: int, revs: list[str]) -> str:
    return f"<page><title>{escape(title)}</title><ns>{ns}</ns>{''.join(revs)}</page>\n"


def dump(pages: list[str]) -> str:
    return ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n'
            + "".join(pages) + "</mediawiki>\n")


def import_pages(root: Path, xml: str) -> None:
    f = root / "import.xml"
    f.write_text(xml, encoding="utf-8")
    php(root, "importDump.php", "--quiet", str(f))
    php(root, "rebuildrecentchanges.php")
    php(root, "initSiteStats.php", "--update")
    php(root, "runJobs.php", "--quiet")


def setup(a: argparse.Namespace) -> None:
    root = Path(a.dir).resolve()
    if root.exists():
        shutil.rmtree(root)
    (root / "db").mkdir(parents=True)
    (root / "cache").mkdir()
    env = dict(os.environ, MW_CONFIG_FILE=str(root / "LocalSettings.php"))
    r = subprocess.run(["php", "maintenance/install.php", "--dbtype", "sqlite", "--dbpath", str(root / "db"),
                        "--dbname", "wiki", "--server", f"http://{a.host}:{a.port}", "--scriptpath", "/w",
                        "--pass", PASSWORD, "--confpath", str(root), "--lang", "en", "--skins", "MonoBook",
                        "Quality Wiki", "Admin"], cwd=MW, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"install.php failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    with open(root / "LocalSettings.php", "a", encoding="utf-8") as fh:
        fh.write(SETTINGS.format(cache=root / "cache"))
    for u in USERS:
        php(root, "createAndPromote.php", u, PASSWORD)
    rnd = random.Random(a.seed)
    pkgs = content.packages(limit=a.pages, seed=a.seed)
    titles = [title_of(p.name) for p in pkgs]
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    out = []
    for p, t in zip(pkgs, titles):
        when = start + timedelta(hours=rnd.randrange(24 * 300))
        revs = []
        for k in range(rnd.randint(3, 6)):
            when += timedelta(hours=rnd.randint(5, 24 * 40))
            revs.append(revision(article(p, [x for x in titles if x != t], k, rnd), when, rnd.choice(USERS),
                                 rnd.choice(SUMMARIES)))
        out.append(page(t, 0, revs))
        if rnd.random() < 0.2:  # a talk page
            out.append(page(f"Talk:{t}", 1, [revision(f"Is {p.name} still maintained? ~~~~\n\n: {p.summary}.",
                                                      when + timedelta(days=2), rnd.choice(USERS), "question")]))
        if rnd.random() < 0.1:  # a redirect from another spelling
            out.append(page(t.replace("-", " ") if "-" in t else t + " (package)", 0,
                            [revision(f"#REDIRECT [[{t}]]", when, "Alice", "redirect")]))
    sections = sorted({p.section for p in pkgs})
    for s in sections + ["Packages"]:
        out.append(page(f"Category:{s}", 14, [revision(f"Packages of the section ''{s}''.", start, "Alice", "new")]))
    main_text = ("Descriptions and changes of the packages of this machine.\n\n== Sections ==\n"
                 + "".join(f"* [[:Category:{s}|{s}]]\n" for s in sections)
                 + "\n== Pages ==\n" + "".join(f"* [[{t}]]\n" for t in titles[:40])
                 + "\nSee also [[Special:AllPages]] and [[Special:RecentChanges]].\n")
    import_pages(root, dump(out))
    php(root, "edit.php", "--user", "Alice", "--summary", "sections", "Main_Page", stdin=main_text)  # after install's
    apache_conf(root, a.port, a.host, Path(a.log).resolve(), port2=a.port2)
    (root / "pages.txt").write_text("\n".join(titles) + "\n")
    print(f"mediawiki: {len(pkgs)} article pages, {len(sections)} categories in {root}", file=sys.stderr)


def edit(a: argparse.Namespace) -> None:
    root = Path(a.dir).resolve()
    rnd = random.Random(a.seed * 1000 + a.round)
    titles = (root / "pages.txt").read_text().split()
    gone = set((root / "deleted.txt").read_text().split()) if (root / "deleted.txt").exists() else set()
    live = [t for t in titles if t not in gone]
    extra = content.packages(limit=30, seed=a.seed + 17 * a.round)
    when = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(days=30 * a.round)
    n = max(3, len(live) * (15 if a.round == 3 else 6) // 100)
    changed = rnd.sample(live, min(n, len(live)))
    out = []
    for i, t in enumerate(changed):
        text = php(root, "getText.php", t)
        text += f"\n== Update {a.round} ==\n{rnd.choice(extra).description[:600]}\n"
        out.append(page(t, 0, [revision(text, when + timedelta(minutes=i), rnd.choice(USERS), f"update {a.round}")]))
    news = extra[a.round % len(extra)]
    out.append(page(f"News {a.round}", 0, [revision(f"== News {a.round} ==\n{news.description}\n[[{changed[0]}]]\n",
                                                    when, "Alice", "news")]))
    import_pages(root, dump(out))
    deleted = rnd.sample([t for t in live if t not in changed], min(max(2, len(live) * (8 if a.round == 3 else 2) // 100),
                                                                     len(live) - len(changed)))
    (root / "delete.txt").write_text("\n".join(deleted) + "\n")
    php(root, "deleteBatch.php", "-u", "Admin", "-r", f"cleanup {a.round}", str(root / "delete.txt"))
    with open(root / "deleted.txt", "a", encoding="utf-8") as fh:
        fh.write("\n".join(deleted) + "\n")
    pruned: list[str] = []
    if a.round == 3:  # old revisions removed: their oldid= and diff= URLs now show an error page (200)
        with sqlite3.connect(root / "db" / "wiki.sqlite") as db:
            pool = [r[0] for r in db.execute("SELECT page_id FROM page WHERE page_namespace = 0 AND "
                                             "page_is_redirect = 0 ORDER BY page_id")]
        pruned = [str(i) for i in rnd.sample(pool, min(len(pool) // 5, len(pool)))]
        if pruned:
            php(root, "deleteOldRevisions.php", "--delete", *pruned)
    php(root, "rebuildrecentchanges.php")
    print(f"mediawiki: round {a.round}: {len(changed)} pages edited, 1 added, {len(deleted)} deleted, "
          f"old revisions of {len(pruned)} pages deleted", file=sys.stderr)


def apache_conf(root: Path, port: int, host: str, log: Path, connect: str = "127.0.0.1", port2: int = 0) -> Path:
    run = root / "apache"
    run.mkdir(parents=True, exist_ok=True)
    (root / "prepend.php").write_text(f"<?php define( 'MW_CONFIG_FILE', '{root / 'LocalSettings.php'}' );\n")
    mods = "/usr/lib/apache2/modules"
    user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
    conf = run / "httpd.conf"
    conf.write_text(f"""# generated by bench/quality/mediawiki_site.py
ServerRoot "{run}"
DefaultRuntimeDir "{run}"
PidFile "{run}/httpd.pid"
Mutex file:{run} default
Listen {connect}:{port}
{f"Listen {connect}:{port2}" if port2 else ""}
ServerName {host}
{user}LoadModule mpm_prefork_module {mods}/mod_mpm_prefork.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule dir_module {mods}/mod_dir.so
LoadModule mime_module {mods}/mod_mime.so
LoadModule alias_module {mods}/mod_alias.so
LoadModule php_module {mods}/libphp8.2.so
TypesConfig /etc/mime.types
StartServers 2
MinSpareServers 2
MaxSpareServers 6
MaxRequestWorkers 8
ErrorLog "{run}/error.log"
LogFormat "%{{Host}}i %h %l %u %t \\"%r\\" %>s %O \\"%{{Referer}}i\\" \\"%{{User-Agent}}i\\"" host_combined
CustomLog "{log}" host_combined
UseCanonicalName Off
DocumentRoot "{run}/empty"
RedirectMatch 301 ^/$ /wiki/Main_Page
Alias /wiki "{MW}/index.php"
Alias /w "{MW}"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{run}/empty">
    Require all granted
</Directory>
<Directory "{MW}">
    Options FollowSymLinks
    AllowOverride None
    DirectoryIndex index.php
    Require all granted
    <FilesMatch "\\.php$">
        SetHandler application/x-httpd-php
    </FilesMatch>
    php_value auto_prepend_file "{root / 'prepend.php'}"
</Directory>
<Directory "{MW}/maintenance">
    Require all denied
</Directory>
""")
    (run / "empty").mkdir(exist_ok=True)
    (run / "empty" / "robots.txt").write_text("User-agent: *\nDisallow:\n")  # crawlers welcome
    return conf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("dir")
    s.add_argument("--pages", type=int, default=200)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--port2", type=int, default=0, help="a second port the site answers on (0: none)")
    s.add_argument("--host", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--seed", type=int, default=1)
    e = sub.add_parser("edit")
    e.add_argument("dir")
    e.add_argument("--round", type=int, required=True)
    e.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    {"setup": setup, "edit": edit}[a.cmd](a)


if __name__ == "__main__":
    main()

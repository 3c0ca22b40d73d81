"""A Sphinx documentation site with real text, served by Debian's Apache httpd, for the quality
harness (run with the app's own Python: var/quality/venv/bin/python bench/quality/docs_site.py).

  setup DIR --pages N       Sphinx sources (one page per installed package: description, changelog,
                            copyright; a page per common licence; section indexes) built to HTML
  edit DIR --round R        between traffic runs: pages edited, a page added, the site rebuilt
  apache-conf DIR --port P [--port2 P2]  an httpd.conf (P2: a second Listen port) for /usr/sbin/apache2 -f: the built site with directory
                            listings (mod_autoindex, its sort links), content negotiation
                            (MultiViews: /page serves /page.html), DirectoryIndex, and the access log
                            in the combined format with the Host header first (Debian's
                            vhost_combined with the host:port the client asked for, aliases kept)
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import content  # noqa: E402

CONF = """project = "Machine packages"
author = "the Debian maintainers"
copyright = "their authors"
extensions = []
html_theme = "alabaster"
html_show_sourcelink = True
html_copy_source = True
html_last_updated_fmt = None
"""


def slug(name: str) -> str:
    return name.replace("+", "plus").replace(".", "-").lower()


def title(text: str, ch: str = "=") -> str:
    return f"{text}\n{ch * max(3, len(text))}\n"


def literal(text: str) -> str:
    return "::\n\n" + "\n".join("   " + ln for ln in text.splitlines()) + "\n"


def package_page(p: content.Package, others: list[content.Package], rnd: random.Random) -> str:
    see = "\n".join(f"* :doc:`/packages/{slug(o.name)}`" for o in rnd.sample(others, min(3, len(others))))
    changes = "".join(title(f"{v} ({a.split('<')[0].strip() or 'unknown'})", "~") + "\n" + literal(t[:1500]) + "\n"
                      for v, a, t in p.changes[:3])
    return (title(p.name) + f"\n*{p.summary}*\n\n{p.description}\n\n"
            f":Version: {p.version}\n:Section: :doc:`/sections/{slug(p.section)}`\n"
            + (f":Homepage: {p.homepage}\n" if p.homepage else "") + "\n"
            + (title("Recent changes", "-") + "\n" + changes if changes else "")
            + title("See also", "-") + "\n" + see + "\n\n"
            + (title("Copyright", "-") + "\n" + literal(p.copyright[:3000]) if p.copyright else ""))


def setup(a: argparse.Namespace) -> None:
    root = Path(a.dir)
    src = root / "src"
    if src.exists():
        subprocess.run(["rm", "-rf", str(src)], check=True)
    for d in ("packages", "sections", "licenses"):
        (src / d).mkdir(parents=True, exist_ok=True)
    (src / "conf.py").write_text(CONF)
    rnd = random.Random(a.seed)
    pkgs = content.packages(limit=a.pages, seed=a.seed)
    by_section: dict[str, list] = {}
    for p in pkgs:
        by_section.setdefault(p.section, []).append(p)
        (src / "packages" / f"{slug(p.name)}.rst").write_text(package_page(p, pkgs, rnd))
    for s, ps in by_section.items():
        (src / "sections" / f"{slug(s)}.rst").write_text(
            title(f"Section {s}") + "\n.. toctree::\n   :maxdepth: 1\n\n"
            + "".join(f"   /packages/{slug(p.name)}\n" for p in ps))
    lic = sorted(content.licences().items())[: a.licences]
    for name, text in lic:
        (src / "licenses" / f"{slug(name)}.rst").write_text(title(name) + "\n" + literal(text[:20000]))
    (src / "index.rst").write_text(
        title("Packages of this machine") + "\nDescriptions, changes and copyright of the installed packages.\n\n"
        ".. toctree::\n   :maxdepth: 1\n   :caption: Sections\n\n"
        + "".join(f"   sections/{slug(s)}\n" for s in sorted(by_section))
        + "\n.. toctree::\n   :maxdepth: 1\n   :caption: Licences\n\n"
        + "".join(f"   licenses/{slug(n)}\n" for n, _ in lic)
        + "\n* :ref:`genindex`\n* :ref:`search`\n")
    build(root)
    print(f"docs: {len(pkgs)} package pages, {len(by_section)} sections, {len(lic)} licences in {root / 'html'}")


def build(root: Path) -> None:
    exe = Path(sys.executable).with_name("sphinx-build")
    subprocess.run([str(exe), "-Q", "-b", "html", str(root / "src"), str(root / "html")], check=True)


def edit(a: argparse.Namespace) -> None:
    root = Path(a.dir)
    rnd = random.Random(a.seed * 1000 + a.round)
    pages = sorted((root / "src" / "packages").glob("*.rst"))
    extra = content.packages(limit=30, seed=a.seed + 17 * a.round)
    for f in rnd.sample(pages, min(a.pages, len(pages))):
        f.write_text(f.read_text() + "\n" + title(f"Update {a.round}", "-") + "\n" + rnd.choice(extra).description + "\n")
    news = root / "src" / f"news-{a.round}.rst"
    news.write_text(title(f"News {a.round}") + "\n" + extra[0].description + "\n\n:orphan:\n")
    build(root)
    print(f"docs: round {a.round}: {a.pages} pages edited, 1 page added, rebuilt")


def apache_conf(a: argparse.Namespace) -> None:
    root = Path(a.dir).resolve()
    run = root / "apache"
    run.mkdir(parents=True, exist_ok=True)
    mods = "/usr/lib/apache2/modules"
    user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
    (run / "httpd.conf").write_text(f"""# generated by bench/quality/docs_site.py
ServerRoot "{run}"
DefaultRuntimeDir "{run}"
PidFile "{run}/httpd.pid"
Mutex file:{run} default
Listen {a.connect}:{a.port}
{f"Listen {a.connect}:{a.port2}" if a.port2 else ""}
ServerName {a.host}
{user}LoadModule mpm_event_module {mods}/mod_mpm_event.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule dir_module {mods}/mod_dir.so
LoadModule autoindex_module {mods}/mod_autoindex.so
LoadModule mime_module {mods}/mod_mime.so
LoadModule negotiation_module {mods}/mod_negotiation.so
LoadModule alias_module {mods}/mod_alias.so
TypesConfig /etc/mime.types
StartServers 1
ServerLimit 2
ThreadsPerChild 8
MaxRequestWorkers 16
ErrorLog "{run}/error.log"
LogFormat "%{{Host}}i %h %l %u %t \\"%r\\" %>s %O \\"%{{Referer}}i\\" \\"%{{User-Agent}}i\\"" host_combined
CustomLog "{a.log}" host_combined
UseCanonicalName Off
DocumentRoot "{root / 'html'}"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{root / 'html'}">
    Options Indexes MultiViews FollowSymLinks
    AllowOverride None
    IndexOptions FancyIndexing HTMLTable
    DirectoryIndex index.html
    Require all granted
</Directory>
""")
    print(run / "httpd.conf")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("dir")
    s.add_argument("--pages", type=int, default=250)
    s.add_argument("--licences", type=int, default=10)
    s.add_argument("--seed", type=int, default=1)
    e = sub.add_parser("edit")
    e.add_argument("dir")
    e.add_argument("--round", type=int, required=True)
    e.add_argument("--pages", type=int, default=8)
    e.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("apache-conf")
    c.add_argument("dir")
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--port2", type=int, default=0, help="a second port the site answers on (0: none)")
    c.add_argument("--host", required=True)
    c.add_argument("--connect", default="127.0.0.1")
    c.add_argument("--log", required=True)
    a = ap.parse_args()
    {"setup": setup, "edit": edit, "apache-conf": apache_conf}[a.cmd](a)


if __name__ == "__main__":
    main()

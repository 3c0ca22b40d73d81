"""The quality harness end to end (`make quality`): four real web applications on loopback
behind real servers writing real access logs, three traffic runs each (train, validate, test) with
edits between them, the content truth of the test log, our candidates and our validated rule set
learned from train+validate, and `dustbuster eval` on the test log; writes docs/quality.md.

  .venv/bin/python bench/quality/run.py                       # all four apps, docs/quality.md
  .venv/bin/python bench/quality/run.py --apps trac --small --out /tmp/q --no-doc   # the CI size

Apps (installed by bench/quality/install.sh into var/quality/venv, Apache from Debian):
  trac  Trac 1.6 under gunicorn (access log: combined, Host header first)
  docs  a Sphinx site under Apache httpd 2.4 (mod_autoindex, MultiViews; the same log format)
  mediawiki  MediaWiki 1.39 (Debian, SQLite) under Apache httpd 2.4 + mod_php (mediawiki_site.py)
  wordpress  WordPress 6.1 (Debian, its own MariaDB) under Apache httpd 2.4 + mod_php (wordpress_site.py)
Order per app: three traffic runs with edits between them, the test log's truth, one more edit
(the site changes after its logs: pages edited and deleted, old revisions removed), then mine and
validate against the changed site, the crawl-efficiency crawls (crawleff.py), eval, and the
hand-written canonicalizers' row (handcanon.py, the ceiling).
Everything listens on 127.0.0.1; the host names are pinned to it in sites.json ("resolve").
Every app answers on two ports (App.ports: two Listen lines in the generated httpd.conf, two
gunicorn binds) under two host names (the bare host and www.): sites.json's "origins" name all
four, the traffic's sessions enter by each sometimes, and the crawls start from the front page of
each (crawleff.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TOP = 50
RUNS = ("train", "validate", "test")
GUNICORN_FORMAT = '%({host}i)s %(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'


KINDS = {"trac": ("trac.quality.test", "Trac 1.6 (wiki, tickets, timeline, reports, queries, git browser) "
                                     "under gunicorn"),
         "docs": ("docs.quality.test", "Sphinx documentation site under Apache httpd 2.4 (autoindex, MultiViews)"),
         "mediawiki": ("wiki.quality.test", "MediaWiki 1.39 (Debian package, SQLite) under Apache httpd 2.4 with "
                                            "mod_php (short URLs /wiki/Title, /w/index.php)"),
         "wordpress": ("wordpress.quality.test", "WordPress 6.1 (Debian package, its own MariaDB 10.11) under Apache "
                                                 "httpd 2.4 with mod_php (pretty permalinks, Twenty Twenty-Three)")}
#: how clients spell the apps' URLs (bench/quality/traffic.py --spelling, --noop): MediaWiki's three
#: spellings of an article (Manual:Short_URL: /wiki/T, /w/index.php?title=T, /w/index.php/T) and its
#: action=view and printable=yes views; parameters the app ignores (a search-highlight parameter
#: where the app reads none) or that name its defaults (MediaWiki's uselang, useskin)
TRAFFIC = {
    "mediawiki": ["--spelling", r"/wiki/([^?]+) /w/index.php?title=\1",
                  "--spelling", r"/wiki/([^?]+) /w/index.php/\1",
                  "--spelling", r"/wiki/([^?]+) /wiki/\1?action=view",
                  "--spelling", r"/wiki/([^?]+) /w/index.php?title=\1&action=view",
                  "--spelling", r"/wiki/([^?]+) /wiki/\1?printable=yes",
                  "--spelling", r"/wiki/([^?]+) /w/index.php?title=\1&printable=yes",
                  "--noop", "uselang=en", "--noop", "useskin=monobook"],
    "docs": ["--noop", "highlight=package"],  # Sphinx's search-result highlight: read by its JavaScript only
    "wordpress": ["--noop", "highlight=package"],  # not a registered query variable (WP::parse_request)
    "trac": [],
}
APACHE_APPS = ("docs", "mediawiki", "wordpress")  #: served by our own /usr/sbin/apache2 -f site/apache/httpd.conf
PHP_APPS = ("mediawiki", "wordpress")  #: Debian packages run with the project's Python driving them


@dataclass
class Size:
    pages: int
    tickets: int
    requests: int
    seconds: float


SIZES = {"full": {"trac": Size(80, 200, 1000, 600), "docs": Size(250, 0, 2500, 600),
                  "mediawiki": Size(200, 0, 2000, 420),
                  "wordpress": Size(200, 0, 2000, 420)},
         "small": {"trac": Size(30, 20, 300, 60), "docs": Size(40, 0, 500, 60), "mediawiki": Size(30, 0, 300, 90),
                   "wordpress": Size(30, 0, 300, 90)}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None and proc.args[0] != "/usr/sbin/apache2":
            raise SystemExit(f"the server exited ({proc.returncode}): {proc.args}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {seconds:.0f}s")


def sh(cmd: list[str], log: Path | None = None, **kw) -> subprocess.CompletedProcess:
    """Run a step; its stderr goes to the app's steps log, and a failure stops the harness."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)
    if log is not None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(cmd)}\n{r.stderr}({time.perf_counter() - t0:.1f}s, exit {r.returncode})\n")
    if r.returncode != 0:
        raise SystemExit(f"step failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return r


@dataclass
class App:
    name: str
    host: str
    kind: str  #: a few words for the report
    out: Path
    venv: Path
    size: Size
    port: int = field(default_factory=free_port)
    port2: int = field(default_factory=free_port)  #: the second port the site answers on
    proc: subprocess.Popen | None = None

    @property
    def ports(self) -> list[int]:
        return [self.port, self.port2]

    @property
    def origins(self) -> list[str]:
        """Every origin the site answers to: the bare host and www., on both ports."""
        return [f"http://{h}:{p}" for h in (self.host, f"www.{self.host}") for p in self.ports]

    @property
    def py(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def access_log(self) -> Path:
        return self.out / "access.log"

    @property
    def apache_conf(self) -> Path:
        return self.out / "site" / "apache" / "httpd.conf"

    def setup(self, steps: Path) -> None:
        if self.name in PHP_APPS:
            sh([sys.executable, str(HERE / f"{self.name}_site.py"), "setup", str(self.out / "site"), "--pages",
                str(self.size.pages), "--port", str(self.port), "--port2", str(self.port2), "--host", self.host,
                "--log", str(self.access_log)], steps)
        elif self.name == "trac":
            sh([self.py, str(HERE / "trac_site.py"), "setup", str(self.out / "env"), str(self.out / "repo"),
                "--pages", str(self.size.pages), "--tickets", str(self.size.tickets)], steps)
        else:
            sh([self.py, str(HERE / "docs_site.py"), "setup", str(self.out / "site"), "--pages", str(self.size.pages)], steps)
            sh([self.py, str(HERE / "docs_site.py"), "apache-conf", str(self.out / "site"), "--port", str(self.port),
                "--port2", str(self.port2), "--host", self.host, "--log", str(self.access_log)], steps)

    def edit(self, rnd: int, steps: Path) -> None:
        """Round 1 and 2: between the traffic runs; round 3: after the logs, before validation."""
        if self.name in PHP_APPS:
            sh([sys.executable, str(HERE / f"{self.name}_site.py"), "edit", str(self.out / "site"), "--round", str(rnd)],
               steps)
        elif self.name == "trac":
            sh([self.py, str(HERE / "trac_site.py"), "edit", str(self.out / "env"), "--round", str(rnd)], steps)
        else:
            sh([self.py, str(HERE / "docs_site.py"), "edit", str(self.out / "site"), "--round", str(rnd)], steps)

    def database(self, cmd: str) -> None:
        """WordPress's own mysqld (db-start, db-stop): up before Apache, down after it."""
        if self.name == "wordpress":
            sh([sys.executable, str(HERE / "wordpress_site.py"), cmd, str(self.out / "site")])

    def start(self) -> None:
        self.database("db-start")
        err = open(self.out / "server.err", "a")
        if self.name == "trac":
            cmd = [str(self.venv / "bin" / "gunicorn"), "-w", "2", "-b", f"127.0.0.1:{self.port}",
                   "-b", f"127.0.0.1:{self.port2}", "--env", f"TRAC_ENV={self.out / 'env'}", "--access-logfile", str(self.access_log),
                   "--access-logformat", GUNICORN_FORMAT, "trac.web.main:dispatch_request"]
        else:
            cmd = ["/usr/sbin/apache2", "-f", str(self.apache_conf), "-k", "start"]
        self.proc = subprocess.Popen(cmd, cwd=self.out, stdout=err, stderr=err, start_new_session=True)
        for port in self.ports:
            wait_port(port, self.proc)

    def stop(self) -> None:
        if self.name in APACHE_APPS:
            subprocess.run(["/usr/sbin/apache2", "-f", str(self.apache_conf), "-k", "stop"], capture_output=True)
            pid = self.apache_conf.parent / "httpd.pid"
            for _ in range(50):  # the next app may take the port: wait for the old server to go
                if not pid.exists():
                    break
                time.sleep(0.2)
            self.database("db-stop")
        elif self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def sites_json(self) -> Path:
        hosts = [self.host, f"www.{self.host}"]
        p = self.out / "sites.json"
        p.write_text(json.dumps({self.host: {"origins": self.origins,
                                             "allow_private": True, "resolve": {h: "127.0.0.1" for h in hosts},
                                             "rate_per_s": 500, "concurrency": 4}}, indent=1))
        return p


def dust(*args: str, steps: Path, stdout: Path | None = None) -> float:
    """A dustbuster command; returns its wall time in seconds."""
    t0 = time.perf_counter()
    r = sh([sys.executable, "-m", "dustbuster", *args], steps)
    if stdout is not None:
        stdout.write_text(r.stdout)
    return time.perf_counter() - t0


def traffic(app: App, steps: Path) -> dict[str, Path]:
    """Three runs cut from the server's own access log; the site is edited between runs."""
    logs = {}
    for i, run in enumerate(RUNS):
        if i:
            app.edit(i, steps)
        start = app.access_log.stat().st_size if app.access_log.exists() else 0
        others = [o for o in app.origins if o != app.base]
        sh([sys.executable, str(HERE / "traffic.py"), "--base", app.base, *(x for o in others for x in ("--origin", o)),
            "--seed", str(i + 1), "--requests", str(app.size.requests), "--seconds", str(app.size.seconds),
            *TRAFFIC.get(app.name, [])], steps)
        time.sleep(1.0)  # the server writes its log line after the response
        with open(app.access_log, "rb") as fh:
            fh.seek(start)
            data = fh.read()
        logs[run] = app.out / f"{run}.log"
        logs[run].write_bytes(data)
    return logs


def top_candidates(cands: Path, out: Path, n: int = TOP) -> None:
    """The n highest-ranked substring candidates and the candidates of the other types of a mine
    document (its one ``rules`` list, in its order)."""
    doc = json.loads(cands.read_text())
    top = {id(r) for r in [r for r in doc["rules"] if r.get("type", "substring") == "substring"][:n]}
    doc["rules"] = [r for r in doc["rules"] if r.get("type", "substring") != "substring" or id(r) in top]
    out.write_text(json.dumps(doc, indent=1))


def leftovers(truth: Path, rules: Path, n: int = 4, candidates: Path | None = None, top: int = 10) -> dict:
    """The duplicates the validated set leaves: contents still reached under several canonical
    URLs, counted by how those URLs differ (host, query only, path), with a few examples; and the
    ``top`` families of the duplicate URL pairs left apart (each content's first canonical URL
    paired with each of its others), grouped by how the pair differs (pair_family), with a count,
    one example and, with ``candidates`` (the mine document), why: a mined candidate merges the
    example (so validation refuted it or left it undecided: rules.json keeps only the valid rules)
    or none does."""
    from collections import Counter, defaultdict
    from urllib.parse import urlsplit

    from dustbuster.core.canon.canonize import Canonizer
    from dustbuster.core.model.rules import rules_from_document

    valid = [r for r in rules_from_document(json.loads(rules.read_text())) if r.status == "valid"]
    canon = Canonizer(valid)
    groups: dict = defaultdict(dict)  # cluster: canonical form -> its first URL
    clusters: dict[str, int] = {}
    for line in open(truth, encoding="utf-8"):
        r = json.loads(line)
        if r.get("cluster") is not None:
            groups[r["cluster"]].setdefault(canon(r["url"]), r["url"])
            clusters[r["url"]] = r["cluster"]
    selects = SelectingParams({canon(u): c for u, c in clusters.items()})
    kinds: Counter = Counter()
    examples: dict = defaultdict(list)
    families: Counter = Counter()
    family_pairs: dict = defaultdict(list)
    for forms in groups.values():
        if len(forms) < 2:
            continue
        a, b = sorted(forms)[:2]
        ua, ub = urlsplit(a), urlsplit(b)
        kind = "host" if ua.netloc != ub.netloc else "query only" if ua.path == ub.path else "path"
        kinds[kind] += 1
        if len(examples[kind]) < n:
            examples[kind].append([a, b])
        first, *others = sorted(forms)
        for o in others:
            fam = pair_family(first, o)
            families[fam] += 1
            if len(family_pairs[fam]) < 3:
                family_pairs[fam].append((forms[first], forms[o], first, o))
    cands = []
    if candidates is not None and candidates.is_file():
        cands = list(rules_from_document(json.loads(candidates.read_text())))
    out = []
    for fam, count in families.most_common(top):
        pairs = family_pairs[fam]
        row = {"family": fam, "pairs": count, "example": list(pairs[0][2:])}
        state = page_state(*pairs[0][2:])
        picked = "" if state else selects.example(*pairs[0][2:])
        if picked:
            row["why"] = picked
        elif state:
            row["why"] = (f"no rule should merge them: {state} names a state of the page (an old revision "
                          "equal to today's page, by chance)")
        elif candidates is not None:
            merging = [r for r in cands if any((c := Canonizer(valid + [r]))(x) == c(y) for x, y, _, _ in pairs)]
            row["why"] = (f"mined, not published: {merging[0].text}" + (f" (+{len(merging) - 1} more)"
                                                                          if len(merging) > 1 else "")
                          if merging else "no mined candidate merges them")
        out.append(row)
    return {"contents": sum(kinds.values()), "by_difference": dict(kinds), "examples": dict(examples),
            "families": out}


class SelectingParams:
    """The parameters that select other contents in the truth: two URLs of the truth (their
    canonical forms under the validated set) that differ only in its value (or in having it) show
    different contents.  Two URLs of one content with one path that differ in such a parameter are
    one page by chance (an old revision equal to today's page) where it selects other contents in
    that path's folder too — no rule should merge them — and a rule that drops it everywhere merges
    other pages where it does so in other folders only."""

    def __init__(self, clusters: dict[str, int]) -> None:
        self.clusters = clusters
        self.memo: dict[str, dict[str, tuple[str, str]]] = {}

    def example(self, a: str, b: str) -> str:
        """Why ``a`` and ``b`` (one content) are left apart, when a parameter they differ in selects
        other contents in the truth (module doc); "" otherwise, and for two paths."""
        from urllib.parse import parse_qsl, urlsplit

        ua, ub = urlsplit(a), urlsplit(b)
        if ua.path != ub.path:
            return ""
        qa = dict(parse_qsl(ua.query, keep_blank_values=True))
        qb = dict(parse_qsl(ub.query, keep_blank_values=True))
        for k in sorted(set(qa) | set(qb)):
            if qa.get(k) == qb.get(k):
                continue
            paths = self._selects(k)
            folder = ua.path.rsplit("/", 1)[0] + "/"
            if folder in paths:
                x, y = paths[folder]
                return f"no rule should merge them: {k}= selects other contents under {folder} ({x} and {y} differ)"
            if paths:
                x, y = next(iter(paths.values()))
                return (f"a rule dropping {k}= merges other contents ({x} and {y} differ): only one narrower "
                        "than the parameter could merge them")
        return ""

    def _selects(self, name: str) -> dict[str, tuple[str, str]]:
        """Folder -> two URLs of the truth in it that differ only in ``name`` and show different contents."""
        if name not in self.memo:
            from collections import defaultdict
            from urllib.parse import parse_qsl, urlsplit

            seen: dict = defaultdict(dict)  # (host, path, the rest of the query) -> value -> (cluster, URL)
            out: dict[str, tuple[str, str]] = {}
            for url, cluster in self.clusters.items():
                u = urlsplit(url)
                q = parse_qsl(u.query, keep_blank_values=True)
                value = next((v for k, v in q if k == name), None)
                row = seen[(u.netloc, u.path, tuple(sorted((k, v) for k, v in q if k != name)))]
                folder = u.path.rsplit("/", 1)[0] + "/"
                if folder not in out:
                    for other, (c, o) in row.items():
                        if other != value and c != cluster:
                            out[folder] = (o, url)
                            break
                row.setdefault(value, (cluster, url))
            self.memo[name] = out
        return self.memo[name]


def page_state(a: str, b: str) -> str:
    """The parameter that tells two URLs of one content apart when its values there look like a
    revision id or a timestamp (core/validation/paramstrata.py revision_like) — the truth holds
    them together because that revision equals today's page; "" otherwise."""
    from urllib.parse import parse_qsl, urlsplit

    from dustbuster.core.validation.paramstrata import revision_like

    qa = dict(parse_qsl(urlsplit(a).query, keep_blank_values=True))
    qb = dict(parse_qsl(urlsplit(b).query, keep_blank_values=True))
    for k in sorted(set(qa) | set(qb)):
        if qa.get(k) != qb.get(k) and any(v and revision_like(v) for v in (qa.get(k), qb.get(k))):
            return f"{k}="
    return ""


def pair_family(a: str, b: str) -> str:
    """How two canonical URLs of one content differ, as a family name: the host (www.), the port,
    a parameter present in one only, a parameter's value, path vs query spelling (one's last path
    segment is a parameter value of the other), or the differing path segments."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    ua, ub = urlsplit(a), urlsplit(b)
    out = []
    if (ua.hostname or "").removeprefix("www.") != (ub.hostname or "").removeprefix("www."):
        out.append("host")
    elif ua.hostname != ub.hostname:
        out.append("host: www. or not")
    if ua.port != ub.port:
        out.append("port")
    qa, qb = dict(parse_qsl(ua.query, keep_blank_values=True)), dict(parse_qsl(ub.query, keep_blank_values=True))
    if ua.path != ub.path:
        la = unquote(ua.path.rstrip("/").rsplit("/", 1)[-1]).replace(" ", "_")
        lb = unquote(ub.path.rstrip("/").rsplit("/", 1)[-1]).replace(" ", "_")
        in_b = [k for k, v in qb.items() if la and v.replace(" ", "_") == la]
        in_a = [k for k, v in qa.items() if lb and v.replace(" ", "_") == lb]
        if in_b or in_a:
            (p, q, k) = (ua.path, ub, in_b[0]) if in_b else (ub.path, ua, in_a[0])
            out.append(f"path vs query spelling: {p.rsplit('/', 1)[0]}/… vs {q.path}?{k}=…")
            qa.pop(k, None), qb.pop(k, None)
        else:
            sa, sb = ua.path.split("/"), ub.path.split("/")
            while sa and sb and sa[-1] == sb[-1]:
                sa, sb = sa[:-1], sb[:-1]
            i = 0
            while i < min(len(sa), len(sb)) and sa[i] == sb[i]:
                i += 1
            out.append(f"path: {'/'.join(sa[i:]) or '(none)'} vs {'/'.join(sb[i:]) or '(none)'}")
    only = sorted(set(qa) ^ set(qb))
    if only:
        out.append("parameter present/absent: " + ", ".join(only))
    vals = sorted(k for k in set(qa) & set(qb) if qa[k] != qb[k])
    if vals:
        out.append("value of parameter: " + ", ".join(vals))
    return "; ".join(out) or "other (spelling of the same parts)"


def by_type(truth: Path, rules: Path) -> dict:
    """Each rule type's contribution: the duplicate URLs removed correctly by the validated set, and
    by the set without that type's rules (the difference is what only that type removes)."""
    from collections import defaultdict

    from dustbuster.core.canon.canonize import Canonizer
    from dustbuster.core.model.rules import rules_from_document

    valid = [r for r in rules_from_document(json.loads(rules.read_text())) if r.status == "valid"]
    clusters: dict = defaultdict(list)
    for line in open(truth, encoding="utf-8"):
        r = json.loads(line)
        if r.get("cluster") is not None:
            clusters[r["cluster"]].append(r["url"])

    def removed(rs: list) -> int:
        canon = Canonizer(rs)
        return sum(len(us) - len({canon(u) for u in us}) for us in clusters.values())

    def kind(r) -> str:
        return "parameter (scoped)" if r.type == "parameter" and r.scope else r.type

    total = removed(valid)
    out = {"all": {"rules": len(valid), "removed": total}}
    for k in sorted({kind(r) for r in valid}):
        out[k] = {"rules": sum(1 for r in valid if kind(r) == k),
                  "only_this_type": total - removed([r for r in valid if kind(r) != k])}
    return out


def hand_row(name: str, truth: Path, scores: Path) -> None:
    """The hand-written per-app canonicalizer (bench/quality/handcanon.py, the ceiling) scored on the
    same truth by dustbuster.core.report.evaluate, as `dustbuster eval` scores a rule file (it takes only
    rule files), appended to the eval document as the row kind "ceiling"."""
    from dustbuster.cli.eval import load_truth
    from dustbuster.core.report.evaluate import by_class, consistent, score

    import handcanon  # bench/quality/handcanon.py

    canon = handcanon.CANONICALIZERS.get(name)
    if canon is None:
        return
    pages, _ = load_truth(str(truth))
    memo: dict[str, str] = {}

    def cached(u: str) -> str:
        if u not in memo:
            memo[u] = canon(u)
        return memo[u]

    overall = score(pages, cached, 5)
    assert not consistent(overall), consistent(overall)
    doc = json.loads(scores.read_text())
    doc["results"].append({"name": "hand-written per-app canonicalizer (ceiling)", "kind": "ceiling",
                           "overall": overall.to_json(),
                           "classes": {k: v.to_json() for k, v in by_class(pages, cached, 1).items()}})
    scores.write_text(json.dumps(doc, indent=1))


CRAWL_BUDGET = {"full": 1500, "small": 200}  #: downloads per crawl of the crawl-efficiency stage


def run_app(app: App, learned: bool = False, small: bool = False, crawl: bool = True, twice: bool = False,
            hold: float = 0.0) -> dict:
    if app.out.exists():
        shutil.rmtree(app.out)
    app.out.mkdir(parents=True)
    steps = app.out / "steps.log"
    port_aliases(app.ports)
    t0 = time.perf_counter()
    app.setup(steps)
    app.start()
    try:
        logs = traffic(app, steps)
        traffic_s = time.perf_counter() - t0
        sites = app.sites_json()
        learn = [str(logs["train"]), str(logs["validate"])]
        truth = app.out / "truth.jsonl"
        truth_s = dust("truth", str(logs["test"]), "--site", app.host, "--sites", str(sites), "-o", str(truth),
                       "-q", steps=steps)
        # the logs are older than the site (as in production): it changes once more after the last log
        # was written and the test log's truth taken, and before anything is validated against it
        app.edit(len(RUNS), steps)
        cands = app.out / "candidates.json"
        mine_s = dust("mine", *learn, "--json", "-q", steps=steps, stdout=cands)
        top = app.out / f"candidates-top{TOP}.json"
        top_candidates(cands, top)
        rules = app.out / "rules.json"
        validate_s = dust("validate", *learn, "--site", app.host, "--sites", str(sites), "-o", str(rules), "-q",
                          steps=steps)
        repeat = {}
        if twice:  # issue 36 item 6: the same logs, seed and site give the same published set
            again = app.out / "rules-again.json"
            dust("validate", *learn, "--site", app.host, "--sites", str(sites), "-o", str(again), "-q", steps=steps)
            repeat = {"repeat": same_set(rules, again)}
            print(f"{app.name}: two validate runs: {repeat['repeat']['summary']}", file=sys.stderr)
        paper = app.out / "rules-paper.json"  # the paper's rule language, the same validation
        dust("validate", *learn, "--site", app.host, "--sites", str(sites), "-o", str(paper), "-q",
             "--language", "paper", steps=steps)
        if learned:  # issue 15: the seq2seq model's candidates, validated (bench/quality/learnedstage.py)
            from learnedstage import learned_stage

            extra = {"learned": learned_stage(app, logs, sites, truth, rules, dust, steps, small)}
        else:
            extra = {}
        if crawl:  # issue 28: crawls with no rules, our rules, the hand canonicalizer (bench/quality/crawleff.py)
            from crawleff import crawl_efficiency

            t1 = time.perf_counter()
            extra["crawl"] = crawl_efficiency(app, rules, CRAWL_BUDGET["small" if small else "full"])
            extra["crawl"]["seconds"] = round(time.perf_counter() - t1, 1)
        if hold:
            hold_site(app, sites, hold)
    finally:
        app.stop()
    scores = app.out / "eval.json"
    sets = [str(top), str(rules), str(paper)]
    dust("eval", "--truth", str(truth), *sets, "--json", "-q", steps=steps, stdout=scores)
    hand_row(app.name, truth, scores)
    dust("eval", "--truth", str(truth), *sets, "--html", str(app.out / "report.html"), "-q",
         steps=steps, stdout=app.out / "eval.txt")
    lines = {run: sum(1 for _ in open(p, "rb")) for run, p in logs.items()}
    return {"app": app.name, "kind": app.kind, "host": app.host, "size": app.size.__dict__, "lines": lines,
            "seconds": {"traffic": round(traffic_s, 1), "truth": round(truth_s, 1), "mine": round(mine_s, 1),
                        "validate": round(validate_s, 1), "total": round(time.perf_counter() - t0, 1)},
            "ruleset": json.loads(rules.read_text()), "eval": json.loads(scores.read_text()),
            "paper_ruleset": json.loads(paper.read_text()), "by_type": by_type(truth, rules),
            "left": leftovers(truth, rules, candidates=cands),
            "ports": app.ports, "out": str(app.out)} | repeat | extra


def hold_site(app: App, sites: Path, minutes: float) -> None:
    """Keep the app running after its stages, for a person to validate against it again (``--hold``):
    until the file ``OUT/APP/HOLD`` is removed, or ``minutes`` have passed."""
    flag = app.out / "HOLD"
    flag.write_text(f"{sites}\n")
    print(f"{app.name}: holding the site ({sites}); rm {flag} to stop it (at most {minutes:g} min)",
          file=sys.stderr, flush=True)
    end = time.monotonic() + 60 * minutes
    while flag.exists() and time.monotonic() < end:
        time.sleep(2)
    flag.unlink(missing_ok=True)


def same_set(first: Path, second: Path) -> dict:
    """Two published sets compared rule for rule (their texts): the same, or what only one holds."""
    a = [r["display"] for r in json.loads(first.read_text())["rules"]]
    b = [r["display"] for r in json.loads(second.read_text())["rules"]]
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    summary = (f"the same {len(a)} rules" if not only_a and not only_b and a == b else
               f"{len(a)} and {len(b)} rules, {len(only_a)} only in the first, {len(only_b)} only in the second"
               + ("" if only_a or only_b else " (the same rules in another order)"))
    return {"same": a == b, "first": len(a), "second": len(b), "only_first": only_a, "only_second": only_b,
            "summary": summary}


def port_aliases(ports: list[int]) -> None:
    """Tell the hand-written canonicalizers (handcanon.py, here and in the crawls' processes) which
    ports of this run serve the main port's site."""
    os.environ["QUALITY_PORT_ALIASES"] = ",".join(f"{p}={ports[0]}" for p in ports[1:])


def has_jax() -> bool:
    try:
        import jax  # noqa: F401
    except ImportError:
        print("note: no JAX here (pip install -e '.[learned]'): the learned canonizer's stage is left out",
              file=sys.stderr)
        return False
    return True


def report_only(out: Path, small: bool) -> int:
    from report import write_doc  # bench/quality/report.py

    results = []
    for name in KINDS:
        p = out / name / "result.json"
        if p.exists():
            res = json.loads(p.read_text())
            res["left"] = leftovers(out / name / "truth.jsonl", out / name / "rules.json",
                                    candidates=out / name / "candidates.json")
            port_aliases(res.get("ports") or [0])
            scores = out / name / "eval.json"  # the ceiling scored again: handcanon.py as it is now
            doc = json.loads(scores.read_text())
            doc["results"] = [r for r in doc["results"] if r.get("kind") != "ceiling"]
            scores.write_text(json.dumps(doc, indent=1))
            hand_row(name, out / name / "truth.jsonl", scores)
            res["eval"] = json.loads(scores.read_text())
            (out / name / "result.json").write_text(json.dumps(res, indent=1))
            results.append(res)
    if not results:
        raise SystemExit(f"no results in {out}: run the harness first")
    write_doc(results, ROOT / "docs" / "quality.md", small=small)
    print(f"wrote {ROOT / 'docs' / 'quality.md'} from {len(results)} apps' results in {out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default="docs,trac,mediawiki,wordpress",
                    help="comma-separated: docs, trac, mediawiki, wordpress (default all four)")
    ap.add_argument("--small", action="store_true", help="the CI size: a few hundred URLs, a minute or two")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "quality"), help="work folder (default %(default)s)")
    ap.add_argument("--venv", default=str(ROOT / "var" / "quality" / "venv"), help="the apps' virtualenv")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/quality.md")
    ap.add_argument("--no-learned", action="store_true",
                    help="leave out the learned canonizer's stage (issue 15; it needs the [learned] extra)")
    ap.add_argument("--no-crawls", action="store_true",
                    help="leave out the crawl-efficiency stage (three Scrapy crawls per app, issue 28)")
    ap.add_argument("--twice", action="store_true",
                    help="validate each app twice on the same logs and seed, and compare the two sets")
    ap.add_argument("--hold", type=float, default=0.0, metavar="MINUTES",
                    help="keep each app running after its stages (at most MINUTES, until OUT/APP/HOLD is "
                         "removed), to validate against the same site again")
    ap.add_argument("--report-only", action="store_true",
                    help="run nothing: write docs/quality.md again from the last results in --out (the "
                         "hand-written canonicalizers' row scored again)")
    a = ap.parse_args(argv)
    out, venv = Path(a.out).resolve(), Path(a.venv).resolve()
    if set(a.apps.split(",")) - set(PHP_APPS) and not (venv / "bin" / "gunicorn").exists():
        raise SystemExit(f"no apps' virtualenv at {venv}: run bash bench/quality/install.sh first")
    sizes = SIZES["small" if a.small else "full"]
    if a.report_only:
        return report_only(out, a.small)
    kinds = KINDS
    results = []
    for name in a.apps.split(","):
        host, kind = kinds[name]
        t0 = time.perf_counter()
        print(f"{name}: {kind} ...", file=sys.stderr, flush=True)
        res = run_app(App(name, host, kind, out / name, venv, sizes[name]), learned=not a.no_learned and has_jax(),
                      small=a.small, crawl=not a.no_crawls, twice=a.twice, hold=a.hold)
        (out / name / "result.json").write_text(json.dumps(res, indent=1))
        results.append(res)
        print(f"{name}: done in {time.perf_counter() - t0:.0f}s; {out / name / 'eval.txt'}", file=sys.stderr)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    if not a.no_doc:
        # the apps not run this time keep their last result (the doc always shows both)
        ran = {r["app"] for r in results}
        for name in kinds:
            prev = out / name / "result.json"
            if name not in ran and prev.exists():
                results.append(json.loads(prev.read_text()))
        results.sort(key=lambda r: list(kinds).index(r["app"]))
        from report import write_doc  # bench/quality/report.py

        write_doc(results, ROOT / "docs" / "quality.md", small=a.small)
        print(f"wrote {ROOT / 'docs' / 'quality.md'}", file=sys.stderr)
        if any("learned" in r for r in results):
            from learnedreport import write_learned  # bench/quality/learnedreport.py

            write_learned(out, ROOT / "docs" / "learned.md")
            print(f"wrote {ROOT / 'docs' / 'learned.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())

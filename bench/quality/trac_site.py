"""A Trac 1.6 project with real text, for the quality harness (run with the app's own Python:
var/quality/venv/bin/python bench/quality/trac_site.py ...).

  setup ENV REPO --pages N --tickets M   a new environment: wiki pages (one per installed package:
                                         description, copyright, changelog; several versions each),
                                         tickets from changelog entries (components = sections,
                                         milestones, comments, some closed), a git repository of
                                         copyright files and licences browsed by Trac
  edit ENV --round R                     what happens between two traffic runs: pages edited,
                                         tickets commented and closed, a new page and tickets

Everything Trac offers anonymous visitors is on: wiki with history and diffs, timeline, roadmap,
reports, custom queries with sort orders, source browser with revisions and logs, changesets,
search, text/CSV/RSS exports, login links with return-to URLs.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import content  # noqa: E402

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
AUTHORS = ("alice", "bob", "carol", "dave", "erin", "frank")


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("+", "plus").replace(".", "-").split("-") if part)


def page_name(p: content.Package) -> str:
    return f"Packages/{camel(p.section)}/{camel(p.name)}"


def page_text(p: content.Package, others: list[content.Package], rnd: random.Random) -> str:
    see = " ".join(f"[wiki:{page_name(o)} {o.name}]" for o in rnd.sample(others, min(3, len(others))))
    changes = "\n".join(f"=== {v} ===\n{{{{{{\n{t[:1200]}\n}}}}}}\n" for v, _a, t in p.changes[:3])
    return (f"= {p.name} =\n''{p.summary}''\n\n{p.description}\n\n"
            f"|| Version || {p.version} ||\n|| Section || [wiki:Packages/{camel(p.section)} {p.section}] ||\n"
            + (f"|| Homepage || {p.homepage} ||\n" if p.homepage else "")
            + f"\n== Recent changes ==\n{changes}\n== See also ==\n{see}\n\n"
            f"== Copyright ==\n{{{{{{\n{p.copyright[:2500]}\n}}}}}}\n")


def trac_admin(env: Path, *args: str) -> None:
    exe = Path(sys.executable).with_name("trac-admin")
    subprocess.run([str(exe), str(env), *args], check=True, stdout=subprocess.DEVNULL)


def make_repo(repo: Path, pkgs: list[content.Package]) -> None:
    """A git repository of copyright files and licences, one commit per package, dated."""
    if repo.exists():
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="alice", GIT_AUTHOR_EMAIL="alice@quality.test",
               GIT_COMMITTER_NAME="alice", GIT_COMMITTER_EMAIL="alice@quality.test")
    git = lambda *a, **kw: subprocess.run(["git", "-C", str(repo), *a], check=True, env=kw.get("env", env),  # noqa: E731
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    git("init", "-q", "-b", "main")
    for i, (name, text) in enumerate(sorted(content.licences().items())[:8]):
        (repo / "licenses").mkdir(exist_ok=True)
        (repo / "licenses" / name).write_text(text)
    git("add", ".")
    when = T0.isoformat()
    git("commit", "-q", "-m", "Import the common licences", env=dict(env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when))
    for i, p in enumerate(pkgs):
        d = repo / "debian" / p.section / p.name
        d.mkdir(parents=True, exist_ok=True)
        (d / "copyright").write_text(p.copyright or p.description)
        (d / "README").write_text(f"{p.name} {p.version}\n\n{p.summary}\n\n{p.description}\n")
        git("add", ".")
        when = (T0 + timedelta(hours=71 * (i + 1))).isoformat()
        git("commit", "-q", "-m", f"{p.name} {p.version}: {p.summary}",
            env=dict(env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when))


def setup(a: argparse.Namespace) -> None:
    from trac.env import Environment
    from trac.ticket.model import Component, Milestone, Ticket
    from trac.wiki.model import WikiPage

    env_dir, repo = Path(a.env), Path(a.repo)
    if env_dir.exists():
        subprocess.run(["rm", "-rf", str(env_dir)], check=True)
    pkgs = content.packages(limit=a.pages, seed=a.seed)
    make_repo(repo, pkgs[: max(10, a.pages // 4)])
    trac_admin(env_dir, "initenv", "Quality Trac", "sqlite:db/trac.db")
    ini = env_dir / "conf" / "trac.ini"
    text = ini.read_text()
    text += ("\n[components]\ntracopt.versioncontrol.git.* = enabled\n\n[git]\ncached_repository = disabled\n"
             "persistent_cache = disabled\n")
    ini.write_text(text.replace("log_type = none", "log_type = none"))
    trac_admin(env_dir, "config", "set", "timeline", "default_daysback", "14")
    trac_admin(env_dir, "repository", "add", "main", str(repo), "git")
    trac_admin(env_dir, "repository", "resync", "main")
    env = Environment(str(env_dir))
    rnd = random.Random(a.seed)
    sections = sorted({p.section for p in pkgs})
    for c in Component.select(env):
        c.delete()
    for s in sections:
        c = Component(env)
        c.name, c.owner = s, rnd.choice(AUTHORS)
        c.insert()
    for i, m in enumerate(Milestone.select(env)):
        m.description = f"Release {i + 1}: the packages of {', '.join(sections[i::4][:5])}."
        m.update()
    by_section: dict[str, list] = {}
    for i, p in enumerate(pkgs):
        by_section.setdefault(p.section, []).append(p)
        page = WikiPage(env, page_name(p))
        page.text = page_text(p, pkgs, rnd)
        page.save(rnd.choice(AUTHORS), f"{p.name}: description", T0 + timedelta(hours=30 * i))
        for v in range(rnd.choice((0, 0, 1, 2, 3))):  # history: later versions of some pages
            page.text += f"\n== Note {v + 1} ==\n{rnd.choice(pkgs).description[:400]}\n"
            page.save(rnd.choice(AUTHORS), f"note {v + 1}", T0 + timedelta(days=v + 1, hours=30 * i))
    for s, ps in sorted(by_section.items()):
        page = WikiPage(env, f"Packages/{camel(s)}")
        page.text = f"= Section {s} =\n" + "\n".join(f" * [wiki:{page_name(p)} {p.name}]: {p.summary}" for p in ps)
        page.save("alice", "section index", T0)
    home = WikiPage(env, "Packages")
    home.text = "= Packages =\n" + "\n".join(f" * [wiki:Packages/{camel(s)} {s}]" for s in sorted(by_section))
    home.save("alice", "index", T0)
    start = WikiPage(env, "WikiStart")
    start.text = ("= Quality Trac =\nThe packages of this machine: [wiki:Packages], the [report:1 active tickets], "
                  "the [timeline timeline] and the [browser source].\n\n" + start.text)
    start.save("alice", "front page", T0)
    tickets(env, pkgs, a.tickets, rnd)
    print(f"trac: {len(pkgs)} package pages, {a.tickets} tickets, {len(sections)} components in {env_dir}")


def tickets(env, pkgs: list, n: int, rnd: random.Random) -> None:
    from trac.ticket.model import Milestone, Ticket

    milestones = [m.name for m in Milestone.select(env)]
    entries = [(p, c) for p in pkgs for c in p.changes]
    rnd.shuffle(entries)
    for i, (p, (version, author, text)) in enumerate(entries[:n]):
        t = Ticket(env)
        t["summary"] = f"{p.name} {version}: {(text.splitlines() or [''])[0].strip(' *')[:90]}"
        t["description"] = text[:3000]
        t["reporter"] = rnd.choice(AUTHORS)
        t["component"] = p.section
        t["milestone"] = rnd.choice(milestones)
        t["type"] = rnd.choice(("defect", "enhancement", "task"))
        t["priority"] = rnd.choice(("blocker", "critical", "major", "minor", "trivial"))
        t["version"] = ""
        t["keywords"] = " ".join(rnd.sample(content.words(p.description) or ["debian"], 2))
        t["status"] = "new"
        when = T0 + timedelta(hours=41 * i)
        t.insert(when=when)
        for k in range(rnd.choice((0, 1, 1, 2))):
            t.save_changes(rnd.choice(AUTHORS), rnd.choice(p.changes)[2][:600], when + timedelta(hours=k + 1))
        if rnd.random() < 0.35:
            t["status"], t["resolution"] = "closed", rnd.choice(("fixed", "fixed", "wontfix", "duplicate"))
            t.save_changes(rnd.choice(AUTHORS), "Done in the package upload.", when + timedelta(days=2))


def edit(a: argparse.Namespace) -> None:
    """Between traffic runs: a few pages edited, tickets commented and closed, one new page and a
    few new tickets (real sites change while they are crawled)."""
    from trac.env import Environment
    from trac.ticket.model import Ticket
    from trac.wiki.model import WikiPage

    env = Environment(a.env)
    rnd = random.Random(a.seed * 1000 + a.round)
    now = datetime.now(timezone.utc)
    names = [r[0] for r in env.db_query("SELECT DISTINCT name FROM wiki WHERE name LIKE 'Packages/%%' ORDER BY name")]
    pkgs = content.packages(limit=40, seed=a.seed + 17 * a.round)
    for name in rnd.sample(names, min(a.pages, len(names))):
        page = WikiPage(env, name)
        page.text += f"\n== Update {a.round} ==\n{rnd.choice(pkgs).description[:500]}\n"
        page.save(rnd.choice(AUTHORS), f"update {a.round}", now)
    ids = [r[0] for r in env.db_query("SELECT id FROM ticket ORDER BY id")]
    for tid in rnd.sample(ids, min(a.tickets, len(ids))):
        t = Ticket(env, tid)
        if t["status"] != "closed" and rnd.random() < 0.5:
            t["status"], t["resolution"] = "closed", "fixed"
        t.save_changes(rnd.choice(AUTHORS), rnd.choice(pkgs).summary, now)
    p = pkgs[a.round % len(pkgs)]
    page = WikiPage(env, f"News/Round{a.round}")
    page.text = f"= News {a.round} =\n{p.description}\n"
    page.save("alice", "news", now)
    tickets(env, pkgs[:5], 3, rnd)
    print(f"trac: round {a.round}: {a.pages} pages edited, {a.tickets} tickets changed, 1 page and 3 tickets new")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("env")
    s.add_argument("repo")
    s.add_argument("--pages", type=int, default=200)
    s.add_argument("--tickets", type=int, default=150)
    s.add_argument("--seed", type=int, default=1)
    e = sub.add_parser("edit")
    e.add_argument("env")
    e.add_argument("--round", type=int, required=True)
    e.add_argument("--pages", type=int, default=8)
    e.add_argument("--tickets", type=int, default=8)
    e.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    setup(a) if a.cmd == "setup" else edit(a)


if __name__ == "__main__":
    main()

"""docs/learned.md's results section from the apps' result.json ("learned", bench/quality/learnedstage.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from report import _pct  # bench/quality/report.py: the same percentages as docs/quality.md

BEGIN, END = "<!-- learned-results: written by bench/quality/learnedstage.py -->", "<!-- /learned-results -->"
APPS = ("trac", "docs", "sim")


def _row(label: str, s: dict, rules, fetches) -> str:
    fm = f"{s['false_merge_groups']} ({s['false_merge_urls']})"
    return (f"| {label} | {rules} | {_pct(s['redundancy'])} | {_pct(s['coverage'])} | {fm} | {s['precision']:.3f} | "
            f"{s['recall']:.3f} | **{s['f1']:.3f}** | {fetches} |")


def _outcome(c: dict | None) -> str:
    """A candidate's verdict as a reader wants it: valid, or refuted / undecided and on what."""
    if c is None:
        return "not decided"
    if c["outcome"] == "valid":
        return f"**valid** (+{c['positives']}/−{c['negatives']} of {c['applicable']} URLs it changes)"
    if "positives" not in c:
        return c["outcome"]
    if c.get("reason") == "no_applicable_urls":
        return "undecided: it changes no log URL"
    why = {"refuted": "refuted", "refuted_on_fewer_samples": "refuted", "too_few_samples": "undecided: too few URLs",
           "no_applicable_urls": "undecided: it changes no log URL"}.get(c.get("reason", ""), c["outcome"])
    n = c["applicable"]
    return f"{why} (+{c['positives']}/−{c['negatives']}; it changes {n} log URL{'s' if n != 1 else ''})"


def app_section(res: dict) -> list[str]:
    ln = res["learned"]
    ev = {r.get("file") or r["name"]: r for r in ln["eval"]["results"]}
    keep = next(r for r in ln["eval"]["results"] if r["name"] == "KeepAll")["overall"]
    model = next(r for r in ln["eval"]["results"] if r["name"].startswith("learned model"))
    base = next(r for k, r in ev.items() if k.endswith("/rules.json"))
    comb = next(r for k, r in ev.items() if k.endswith("/rules-learned.json"))
    mj, tr = ln["model_json"], ln["model_json"]["meta"]["training_data"]
    info = mj.get("info") or {}
    b_fetch = (res.get("ruleset") or {}).get("stats", {}).get("fetches", "–")
    c_fetch = ln["ruleset"]["stats"]["fetches"]
    learned_valid = [r for r in ln["ruleset"]["rules"] if (r.get("evidence") or {}).get("source") == "learned"]
    out = [f"### {res['app']}: {res.get('kind', '')}", "",
           f"Test log: {keep['urls']} pages, {keep['duplicates_before']} duplicate URLs.  Training data: "
           f"{ln['training_fetches']} pages of the train + validate logs fetched (budget {ln.get('budget', 2000)}), "
           f"{tr['clusters']} content clusters, {tr['rewrite_pairs']} rewrite + "
           f"{tr['pairs'] - tr['rewrite_pairs']} identity pairs, {tr['function_tokens']} function tokens.", "",
           "| canonicalizer | rules | redundancy | coverage | false merges: groups (URLs) | precision | recall | F1 | "
           "pages fetched |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
           _row("KeepAll", keep, "–", "–"),
           _row("(a) the model alone (unvalidated, the paper's use)", model["overall"], "–",
                f"{ln['training_fetches']} (training)"),
           _row("(b) our validated rules", base["overall"], base.get("applied", "–"), f"{b_fetch} (validation)"),
           _row("(c) rules + the model's validated candidates", comb["overall"], comb.get("applied", "–"),
                f"{ln['training_fetches']} + {c_fetch}"), ""]
    cands = ln["candidates"]["rules"]
    st = ln["candidates"]["stats"]
    out.append(f"The model rewrote {st['rewrites']} of the {st['urls']} train + validate URLs, {st['left_by_rules']} "
               f"of them to a page the validated rules keep apart; {len(cands)} candidate rules, "
               f"{len(learned_valid)} validated:")
    out.append("")
    outcome = {c["rule"]: c for c in ln["ruleset"]["stats"].get("extra_candidates", [])}
    for r in cands[:15]:
        n = r["support"]
        out.append(f"* `{r['display']}` ({n} rewrite{'s' if n != 1 else ''}) — {_outcome(outcome.get(r['display']))}")
    if len(cands) > 15:
        out.append(f"* … and {len(cands) - 15} more")
    out += ["", f"Model: {mj.get('param_count', '–'):,} parameters, {mj.get('npz_bytes', 0) / 1e6:.2f} MB on disk, "
            f"vocabulary {mj.get('vocab_size', '–')} tokens, trained in "
            f"{info.get('train_seconds', float('nan')):.0f} s ({info.get('epochs', '–')} epochs, final loss "
            f"{info.get('final_loss', float('nan')):.4f}, exact match on its training pairs "
            f"{_pct(mj['meta'].get('train_exact_match'))}); stage times {ln['seconds']}.", ""]
    fm = model["overall"]["false_merge_examples"][:2]
    if fm:
        out.append("False merges of the model alone, e.g.:")
        out.append("")
        for m in fm:
            out.append(f"    {m['canonical']}  ←")
            for u, c in m["urls"][:3]:
                out.append(f"        content {c}: {u}")
        out.append("")
    return out


def write_learned(out: Path, doc: Path) -> None:
    lines = [BEGIN, ""]
    for name in APPS:
        p = out / name / "result.json"
        if p.exists():
            res = json.loads(p.read_text())
            if "learned" in res:
                lines += app_section(res)
    lines.append(END)
    text = doc.read_text() if doc.exists() else f"# The learned canonizer\n\n{BEGIN}\n{END}\n"
    pat = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    doc.write_text(pat.sub(lambda _m: "\n".join(lines), text) if pat.search(text) else text + "\n" + "\n".join(lines) + "\n")

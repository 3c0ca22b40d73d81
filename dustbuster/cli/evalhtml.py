"""The HTML report of ``dustbuster eval --html``: one self-contained file (inline CSS and SVG, no
scripts, nothing fetched) with the overall table and, per URL class, a bar chart of each
canonicalizer's discovered redundancy, F1 and false-merged URLs."""

from __future__ import annotations

from html import escape

from dustbuster.core.report.evaluate import one_per_content

MAX_CLASSES = 30  #: the largest classes get a chart; --json has all
COLORS = ("#888888", "#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2")
CSS = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:right}th:first-child,td:first-child{text-align:left}
h2{margin-top:2em}.chart{display:inline-block;margin:0 1.5em 1.5em 0;vertical-align:top}.legend span{margin-right:1em}
.sw{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}small{color:#666}"""


def _pct(x) -> str:
    return "–" if x is None else f"{x:.1%}"


def _table(doc: dict) -> str:
    rows = []
    for r in doc["results"]:
        s = r["overall"]
        rows.append(f"<tr><td>{escape(r['name'])}</td><td>{s['urls']}</td><td>{s['crawled']}</td>"
                    f"<td>{_pct(s['redundancy'])}</td><td>{_pct(s['coverage'])}</td><td>{_pct(s['removed_share'])}</td>"
                    f"<td>{s['false_merge_groups']} ({s['false_merge_urls']})</td><td>{s['precision']:.3f}</td>"
                    f"<td>{s['recall']:.3f}</td><td>{s['f1']:.3f}</td></tr>")
    return ("<table><tr><th>canonicalizer</th><th>URLs</th><th>after</th><th>redundancy</th><th>coverage</th>"
            "<th>removed correctly</th><th>false merges: groups (URLs)</th><th>precision</th><th>recall</th>"
            "<th>F1</th></tr>" + "".join(rows) + "</table>")


def _bars(title: str, values: list[float], vmax: float, fmt) -> str:
    """A small horizontal bar chart: one bar per canonicalizer."""
    w, bh, gap, left = 260, 14, 4, 4
    h = len(values) * (bh + gap) + 20
    parts = [f'<svg width="{w + 70}" height="{h}" role="img" aria-label="{escape(title)}">',
             f'<text x="0" y="12" font-size="12">{escape(title)}</text>']
    for i, v in enumerate(values):
        y = 18 + i * (bh + gap)
        length = 0 if vmax <= 0 else max(1.0, w * v / vmax) if v > 0 else 0
        parts.append(f'<rect x="{left}" y="{y}" width="{length:.1f}" height="{bh}" fill="{COLORS[i % len(COLORS)]}"/>')
        parts.append(f'<text x="{left + length + 4:.1f}" y="{y + bh - 3}" font-size="11">{escape(fmt(v))}</text>')
    return "".join(parts) + "</svg>"


def _class_section(doc: dict, cls: str) -> str:
    res = doc["results"]
    got = [r["classes"].get(cls) for r in res]
    s0 = next(s for s in got if s)
    red = [s["redundancy"] if s else 0.0 for s in got]
    f1 = [s["f1"] if s else 0.0 for s in got]
    fm = [float(s["false_merge_urls"]) if s else 0.0 for s in got]
    charts = (_bars("discovered redundancy", red, 1.0, lambda v: f"{v:.1%}")
              + _bars("F1 (crawl simulation)", f1, 1.0, lambda v: f"{v:.3f}")
              + _bars("false-merged URLs", fm, max(fm) or 1.0, lambda v: f"{v:.0f}"))
    return (f"<h3>{escape(cls)} <small>{s0['urls']} URLs, {s0['clusters']} contents, "
            f"{s0['duplicates_before']} duplicate URLs</small></h3><div class=chart>{charts}</div>")


def truth_identities(path: str, urls: set) -> dict[str, dict]:
    """What the truth file recorded of each of ``urls``' identity (status, title, declared
    canonical, final URL), for the false-merge examples; {} for records written without them."""
    import json

    out: dict[str, dict] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict) and d.get("url") in urls:
                out[d["url"]] = {k: d[k] for k in ("status", "title", "canonical", "final_url") if d.get(k)}
    return out


def _ident(d: dict | None) -> str:
    if not d:
        return ""
    bits = [f"“{escape(str(d['title']))}”" if d.get("title") else "",
            f"canonical <code>{escape(str(d['canonical']))}</code>" if d.get("canonical") else "",
            f"at <code>{escape(str(d['final_url']))}</code>" if d.get("final_url") else ""]
    return " <small>" + ", ".join(b for b in bits if b) + "</small>"


def _examples(doc: dict, idents: dict | None = None) -> str:
    idents = idents or {}
    out = []
    for r in doc["results"]:
        ex = r["overall"]["false_merge_examples"]
        if not ex:
            continue
        items = "".join(
            f"<li><code>{escape(m['canonical'])}</code><ul>"
            + "".join(f"<li>content {escape(str(c))}: <code>{escape(u)}</code>{_ident(idents.get(u))}</li>"
                      for u, c in one_per_content(m["urls"])[:5])
            + "</ul></li>" for m in ex)
        out.append(f"<h3>{escape(r['name'])}: {r['overall']['false_merge_groups']} groups</h3><ul>{items}</ul>")
    return "<h2>False merges (examples)</h2>" + "".join(out) if out else ""


def render(doc: dict, idents: dict | None = None) -> str:
    legend = "".join(f'<span><i class=sw style="background:{COLORS[i % len(COLORS)]}"></i>{escape(r["name"])}</span>'
                     for i, r in enumerate(doc["results"]))
    classes = list(doc["results"][0]["classes"])
    more = len(classes) - MAX_CLASSES
    classes = classes[:MAX_CLASSES]
    lo = doc["left_out"]
    return (f"<!doctype html><html><head><meta charset=utf-8><title>dustbuster eval: {escape(doc['truth'])}</title>"
            f"<style>{CSS}</style></head><body><h1>DUST quality against the content truth</h1>"
            f"<p><code>{escape(doc['truth'])}</code>: {doc['pages']} pages evaluated, {lo['failed']} failed fetches "
            "left out.  Discovered redundancy and coverage: WWW 2007 §3; precision, recall, F1: SIGIR 2017 §3.2 "
            "crawl simulation; a false merge is a canonical URL whose URLs show different content.</p>"
            + _table(doc) + f"<h2>Per URL class</h2><p class=legend>{legend}</p>"
            + "".join(_class_section(doc, c) for c in classes)
            + (f"<p><small>{more} smaller classes are in the JSON output (--json).</small></p>" if more > 0 else "")
            + _examples(doc, idents) + "</body></html>\n")


__all__ = ["render"]

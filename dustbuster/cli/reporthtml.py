"""The HTML page of ``dustbuster report``: one self-contained file (inline CSS and SVG, no scripts,
nothing fetched): the summary, the plot of duplicates per URL class, the rules with their evidence
and what the site could do, the parameters that make the most duplicates, examples."""

from __future__ import annotations

from html import escape

MAX_CLASSES = 20
CSS = """body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:72em}table{border-collapse:collapse;margin:1em 0}
td,th{padding:.3em .6em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}td.n{text-align:right}
h2{margin-top:2em}.big{font-size:2em;font-weight:600}.cards{display:flex;gap:2em;flex-wrap:wrap}.card small{display:block;color:#666}
code{background:#f4f4f4;padding:0 .2em;overflow-wrap:anywhere}td{max-width:34em}ul{margin:0;padding-left:1.2em}small{color:#666}"""


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _cards(rep: dict) -> str:
    cards = [(_pct(rep["duplicate_share"]), f"of the {rep['urls']} URLs crawled are duplicates by the rules"),
             (str(rep["canonical"]), "URLs left to crawl"), (str(rep["duplicate_hits"]), "hits on duplicate URLs"),
             (str(len(rep["rules"])), "validated rules")]
    t = rep.get("truth")
    if t:
        cards += [(_pct(t["duplicate_share"]), f"duplicates by content ({t['pages']} distinct pages)"),
                  (_pct(t["found_share"]), "of those found by the rules"), (str(t["false_merges"]), "false merges")]
    return '<div class="cards">' + "".join(f'<div class="card"><span class="big">{escape(v)}</span><small>{escape(k)}</small></div>'
                                           for v, k in cards) + "</div>"


def plot(classes: list[dict]) -> str:
    """Duplicates and URLs per URL class: one horizontal bar pair per class (inline SVG)."""
    rows = [c for c in classes if c["urls"]][:MAX_CLASSES]
    vmax = max((c["urls"] for c in rows), default=1) or 1
    label, w, bh, gap = 190, 420, 16, 8
    h = len(rows) * (bh + gap) + 40
    out = [f'<svg id="plot" width="{label + w + 120}" height="{h}" role="img" aria-label="duplicates per URL class">',
           f'<rect x="{label}" y="4" width="12" height="12" fill="#c9d6e8"/><text x="{label + 16}" y="15">URLs</text>',
           f'<rect x="{label + 70}" y="4" width="12" height="12" fill="#e45756"/><text x="{label + 86}" y="15">duplicates</text>']
    for i, c in enumerate(rows):
        y = 28 + i * (bh + gap)
        wu, wd = w * c["urls"] / vmax, w * c["duplicates"] / vmax
        out.append(f'<g class="bar"><text x="{label - 6}" y="{y + 12}" text-anchor="end">{escape(c["class"][:30])}</text>'
                   f'<rect x="{label}" y="{y}" width="{wu:.1f}" height="{bh}" fill="#c9d6e8"/>'
                   f'<rect x="{label}" y="{y}" width="{wd:.1f}" height="{bh}" fill="#e45756"/>'
                   f'<text x="{label + wu + 6:.1f}" y="{y + 12}">{c["duplicates"]} / {c["urls"]}</text></g>')
    out.append("</svg>")
    return "".join(out)


def _rules(rep: dict) -> str:
    rows = []
    for r in rep["rules"]:
        ev = r["evidence"]
        samples = "".join(f"<li><code>{escape(a)}</code> = <code>{escape(b)}</code></li>" for a, b, *_ in r["samples"])
        todo = "".join(f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in r["advice"].items())
        rows.append(f'<tr class="rule"><td><code>{escape(r["rule"])}</code><br><small>{escape(r["type"])}</small></td>'
                    f'<td class="n">{r["urls_rewritten"]}</td><td>{ev.get("positives")} same, {ev.get("negatives")} different '
                    f'of {ev.get("fetches")} fetches; {ev.get("distinct_pages")} distinct pages<br><small>'
                    f'{escape(str(ev.get("reason")))}</small><ul>{samples}</ul></td><td><ul>{todo}</ul></td></tr>')
    return ("<table><tr><th>rule</th><th>URLs rewritten</th><th>evidence (validation fetches)</th>"
            "<th>what the site could do</th></tr>" + "".join(rows) + "</table>")


def render(rep: dict) -> str:
    params = "".join(f'<tr><td><code>{escape(p["name"])}</code></td><td class="n">{p["duplicates"]}</td></tr>'
                     for p in rep["parameters"])
    classes = "".join(f'<tr><td>{escape(c["class"])}</td><td class="n">{c["urls"]}</td><td class="n">{c["duplicates"]}</td></tr>'
                      for c in rep["classes"][:MAX_CLASSES])
    examples = "".join(f'<tr><td><code>{escape(e["url"])}</code></td><td><code>{escape(e["canonical"])}</code></td></tr>'
                       for e in rep["examples"])
    version = "" if rep.get("version") is None else f" (rule set version {rep['version']})"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Duplicate URLs of {escape(rep["site"])}</title>'
            f"<style>{CSS}</style></head><body><h1>Duplicate URLs of {escape(rep['site'])}</h1>"
            f"<p>{rep['urls']} distinct URLs ({rep['hits']} hits) in the site's log; rules validated by fetching{version}.</p>"
            f"{_cards(rep)}<h2>Duplicates per URL class</h2>{plot(rep['classes'])}"
            f"<h2>Rules, their evidence, and what the site could do</h2>{_rules(rep)}"
            f"<h2>Parameters that make the most duplicates</h2>" + (
                f"<table id=\"params\"><tr><th>parameter</th><th>duplicate URLs</th></tr>{params}</table>" if params
                else "<p id=\"params\">No duplicate URL here differs from its canonical URL by a query parameter.</p>")
            + f"<h2>Paths</h2><table id=\"classes\"><tr><th>URL class</th><th>URLs</th><th>duplicates</th></tr>{classes}</table>"
            f"<h2>Examples</h2><table><tr><th>URL</th><th>its canonical URL</th></tr>{examples}</table>"
            "<p><small>dustbuster report: key-only crawlers fetch the URL linked and skip its duplicates; a 301 or a "
            "declared canonical fixes them for every crawler.</small></p></body></html>\n")

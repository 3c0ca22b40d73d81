// dustbuster dashboard: polls /dashboard/state.json every 2 s and draws what it says.
// No framework and no build step.  Everything from the server goes into the page as text
// (textContent), never as HTML: URLs come from access logs that anyone can write to.
"use strict";

const POLL_MS = 2000;
const TOKEN_KEY = "dustbuster-token";
const state = { site: null, token: sessionStorage.getItem(TOKEN_KEY) || "", last: {}, open: new Set(), timer: null };

// ------------------------------------------------------------------ small helpers
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const svgNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
const fmt = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1) + " %");
function clock(t) {
  if (!t) return "–";
  const d = new Date(t * 1000);
  return d.toLocaleTimeString("en-GB", { hour12: false });
}
function ago(t, now) {
  if (!t) return "";
  const s = Math.max(0, Math.round(now - t));
  return s < 90 ? `${s} s ago` : s < 5400 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
}
// a link only for http(s) URLs; anything else (javascript:, data:...) stays plain text
function link(url) {
  return /^https?:\/\//i.test(url) ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: url })
                                   : el("span", { text: url });
}
function changed(key, data) {
  const s = JSON.stringify(data);
  if (state.last[key] === s) return false;
  state.last[key] = s;
  return true;
}
function fill(id, ...children) {
  const body = document.querySelector(`#${id} .body`);
  body.replaceChildren(...children.flat().filter((c) => c));
}

// ------------------------------------------------------------------ the site list
function spark(values) {
  const s = svg("svg", { class: "spark", viewBox: "0 0 110 22", preserveAspectRatio: "none" });
  if (values.length > 1) {
    const max = Math.max(...values, 1);
    const pts = values.map((v, i) => `${(i * 108) / (values.length - 1) + 1},${21 - (v / max) * 19}`);
    s.append(svg("polyline", { points: pts.join(" ") }));
  }
  return s;
}

function renderSites(rows) {
  const tbody = document.querySelector("#sites tbody");
  tbody.replaceChildren(...rows.map((r) => el("tr", { "data-site": r.site, class: r.site === state.site ? "selected" : null,
      onclick: () => selectSite(r.site) },
    el("td", {}, el("a", { href: `#site=${encodeURIComponent(r.site)}`, text: r.site })),
    el("td", { class: "num", text: fmt(r.lines) }),
    el("td", { class: "num", text: fmt(r.urls) }),
    el("td", {}, spark(r.spark || [])),
    el("td", { class: "num", text: fmt(r.candidates) }),
    el("td", {}, r.version === null ? el("span", { class: "muted", text: "none yet" })
                                    : `v${r.version} · ${r.rules} rule${r.rules === 1 ? "" : "s"}`),
    el("td", { class: "num", text: r.redundancy ? pct(r.redundancy.discovered_redundancy) : "–" }),
    el("td", {}, r.validating ? el("span", { class: "badge likely", text: "validating…" }) : ""))));
}

// ------------------------------------------------------------------ one site
function chart(points) {
  const W = 640, H = 170, L = 52, B = 22;
  const s = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img",
                         "aria-label": "lines in and unique URLs over time" });
  s.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W, y2: H - B }));
  if (points.length === 0) return s;
  const t0 = points[0].t, t1 = points[points.length - 1].t;
  const max = Math.max(1, ...points.map((p) => Math.max(p.lines, p.urls)));
  const x = (t) => (t1 > t0 ? L + ((t - t0) / (t1 - t0)) * (W - L - 4) : W - 4);
  const y = (v) => H - B - (v / max) * (H - B - 8);
  for (const key of ["lines", "urls"]) {
    const pts = points.map((p) => `${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}`);
    if (pts.length === 1) pts.unshift(`${L},${y(points[0][key]).toFixed(1)}`);
    s.append(svg("polyline", { class: key, points: pts.join(" ") }));
  }
  const label = (tx, ty, text, anchor) => {
    const t = svg("text", { x: tx, y: ty, "text-anchor": anchor || "start" });
    t.textContent = text;
    s.append(t);
  };
  label(L - 4, 12, fmt(max), "end");
  label(L - 4, H - B, "0", "end");
  label(L, H - 6, clock(t0));
  label(W - 2, H - 6, clock(t1), "end");
  return s;
}

function renderTraffic(points) {
  const last = points[points.length - 1];
  fill("traffic",
    el("div", { class: "legend" },
      el("span", { class: "k-lines" }, "▬ lines in: ", el("b", { "data-k": "lines", text: fmt(last && last.lines) })),
      el("span", { class: "k-urls" }, "▬ unique URLs: ", el("b", { "data-k": "urls", text: fmt(last && last.urls) })),
      el("span", { class: "muted", text: `${points.length} window${points.length === 1 ? "" : "s"}` })),
    chart(points));
}

function renderRedundancy(r, published) {
  if (!r) {
    fill("redundancy", el("p", { class: "muted", text: published ? "Waiting for the site's next window (its newest URLs)."
                                                               : "No published rule set yet: nothing is merged." }));
    return;
  }
  fill("redundancy",
    el("div", { class: "big", "data-k": "redundancy", text: pct(r.discovered_redundancy) }),
    el("p", {}, `Of the site's ${fmt(r.unique_before)} newest unique URLs, ${fmt(r.unique_before - r.unique_after)} `,
      `are duplicates under the published rules: they canonicalize to ${fmt(r.unique_after)} URLs.`));
}

function renderRound(running, last, now, budget) {
  const parts = [];
  if (running) {
    const bar = el("progress", { max: Math.max(running.to_decide, 1), value: Math.min(running.decided, running.to_decide) });
    parts.push(el("p", {}, el("span", { class: "badge likely", text: "in progress" }), " ",
      `Window ${running.window}: `, el("b", { "data-k": "decided", text: `${running.decided} of ${running.to_decide}` }),
      ` candidate rules decided (${running.valid} valid, ${running.invalid} invalid, ${running.undecided} undecided`,
      running.cached ? `, ${running.cached} from the verdict cache` : "", `), ${running.to_decide - running.decided} to go at most; `,
      el("b", { text: fmt(running.fetches) }), ` pages fetched (${running.fetch_rate}/s) in ${running.seconds} s.`), bar);
    parts.push(outcomes(running.fetch_outcomes));
  } else {
    parts.push(el("p", { class: "muted", text: "No validation round running on this worker now." }));
  }
  if (last) {
    const what = { published: "a new rule-set version published", unchanged: "the rule set unchanged",
                   unconfigured: "not validated: the site is not in DUST_VALIDATOR_SITES (nothing fetched)",
                   tombstone: "no valid rule any more: the rule set was removed", failed: "the round failed (see the worker's log)" };
    parts.push(el("p", {}, `Last round: window ${last.window}, finished ${clock(last.finished)} (${ago(last.finished, now)}) after `,
      `${last.seconds} s: ${last.decided} rules decided (${last.valid} valid, ${last.invalid} invalid, ${last.undecided} undecided), `,
      `${fmt(last.fetches)} pages fetched; `, el("b", { "data-k": "outcome", text: what[last.outcome] || last.outcome }), "."));
  } else if (!running) {
    parts.push(el("p", { class: "muted", text: "Rounds run on the worker that holds the site's candidates partition, " +
                                                "for the sites configured in DUST_VALIDATOR_SITES." }));
  }
  if (budget) {
    parts.push(el("p", { class: "kv muted", "data-k": "budget" }, "fetch budget (DUST_VALIDATOR_FETCHES_PER_HOUR): ",
      el("span", {}, "used in the last hour ", el("b", { text: fmt(budget.used_last_hour) })),
      el("span", {}, "left ", el("b", { text: budget.left == null ? "no limit" : fmt(budget.left) })),
      el("span", {}, "per hour ", el("b", { text: fmt(budget.per_hour) })),
      budget.refused ? el("span", {}, "refused ", el("b", { text: fmt(budget.refused) })) : null));
  }
  fill("round", parts);
}

function outcomes(map) {
  const keys = Object.keys(map || {});
  if (!keys.length) return null;
  return el("p", { class: "kv muted" }, "fetch outcomes:", keys.map((k) => el("span", {}, `${k} `, el("b", { text: fmt(map[k]) }))));
}

function identitySide(d) {
  d = d || {};
  const bits = [String(d.status ?? "?")];
  if (d.title) bits.push(`“${d.title}”`);
  if (d.canonical) bits.push(`canonical ${d.canonical}`);
  if (d.final_url) bits.push(`at ${d.final_url}`);
  return el("span", { text: bits.join(", ") });
}

function ruleDetails(r, testUrls, version) {
  const ev = r.evidence || {};
  const key = r.display;
  const d = el("details", { class: "rule", "data-rule": r.display, open: state.open.has(key) ? "" : null },
    el("summary", {},
      el("span", { class: "muted", text: `${r.n}.` }),
      el("span", { class: "rule-text", text: r.display }),
      el("span", { class: "badge valid", text: "valid" }),
      el("span", { class: "muted" }, `${fmt(ev.positives)} positive${ev.positives === 1 ? "" : "s"}, `,
        `${fmt(ev.negatives)} negative${ev.negatives === 1 ? "" : "s"} · changes ${fmt(r.changes.count)} test URLs`)),
    el("div", { class: "evidence" },
      el("div", { class: "kv" },
        ["positives", "negatives", "skipped", "fetches", "applicable"].map((k) => el("span", {}, `${k}: `, el("b", { text: fmt(ev[k]) }))),
        el("span", {}, `${r.type}, ${r.direction}`),
        r.validated_at ? el("span", { class: "muted", text: `validated ${new Date(r.validated_at * 1000).toLocaleString("en-GB")}` }) : null,
        ev.reason === "cached" ? el("span", { class: "muted", text: "verdict from the validator's cache" }) : null),
      el("h4", { text: r.samples_version === version ? "Sample pairs fetched and compared (u → R(u), outcome)"
        : `Sample pairs fetched and compared when the rule was decided, for version ${r.samples_version} ` +
          "(this version took its verdict from the validator's cache)" }),
      r.samples.length ? el("ul", { class: "pairs samples" }, r.samples.map((s) => el("li", {}, link(s.u), " → ", link(s.v), " ",
          el("span", { class: s.outcome === "similar" ? "good" : "bad", text: s.outcome })))) :
        el("p", { class: "muted", text: "No sample pairs in the rule's evidence." }),
      (r.identities || []).length ? el("h4", { text: "What the pages say about themselves (status, title, declared canonical, final URL)" }) : null,
      (r.identities || []).length ? el("ul", { class: "pairs identities" }, r.identities.map((x) => el("li", {},
          identitySide(x.u), " | ", identitySide(x.v), " ",
          el("span", { class: x.outcome === "similar" || x.outcome === "same_target" ? "good" : "bad", text: x.outcome })))) : null,
      (r.parameters || []).length ? el("p", { class: "kv muted" }, "by parameter:", r.parameters.map((f) =>
          el("span", {}, `${f.family} `, el("b", { text: `${fmt(f.positives)} of ${fmt(f.urls)}` })))) : null,
      el("h4", { text: `Test URLs it changes: ${fmt(r.changes.count)} of the site's ${fmt(testUrls)} newest URLs` }),
      r.changes.examples.length ? el("ul", { class: "pairs changes" }, r.changes.examples.map(([u, v]) => el("li", {}, link(u), " → ", link(v)))) :
        el("p", { class: "muted", text: "None of the newest URLs." })));
  d.addEventListener("toggle", () => { if (d.open) state.open.add(key); else state.open.delete(key); });
  return d;
}

function renderPublished(p) {
  if (!p) {
    fill("published", el("p", { class: "muted", text: "No validated rule set for this site yet." }));
    return;
  }
  const sc = p.set_check || {};
  const verdict = sc.passed === true ? el("span", { class: "good", text: "passed" }) :
                  sc.passed === false ? el("span", { class: "bad", text: "refuted" }) : el("span", { class: "muted", text: "undecided" });
  fill("published",
    el("p", {}, el("b", { "data-k": "version", text: `Version ${p.version}` }), `, made ${p.created ? new Date(p.created * 1000).toLocaleString("en-GB") : "–"}: `,
      `${p.rules.length} rule${p.rules.length === 1 ? "" : "s"} in canonization order, from ${fmt(p.stats.candidates)} candidates `,
      `(${fmt(p.stats.fetches)} pages fetched). Click a rule for its evidence.`),
    el("div", { class: "rules" }, p.rules.map((r) => ruleDetails(r, p.test_urls, p.version))),
    el("h4", { text: "Set-level check (the rules composed, validated like one rule)" }),
    el("p", { class: "kv", "data-k": "set-check" }, el("span", {}, "result: ", verdict),
      ["rounds", "fetches", "positives", "negatives", "changed_test_urls"].filter((k) => k in sc)
        .map((k) => el("span", {}, `${k.replace(/_/g, " ")}: `, el("b", { text: fmt(sc[k]) })))),
    (sc.dropped || []).length ? el("details", { class: "dropped" },
      el("summary", { text: `${sc.dropped.length} candidate rule${sc.dropped.length === 1 ? "" : "s"} dropped by the set-level check` }),
      el("ul", { class: "pairs" }, sc.dropped.map((d) => el("li", {},
        el("span", { text: typeof d === "object" ? `${d.rule || ""}: ${d.why || ""}` : String(d) }))))) : null);
}

const CANDIDATES_SHOWN = 15;

function candidateTable(rules, offset) {
  return el("table", { class: "candidates" },
    el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "rule" }), el("th", { class: "num", text: "support" }),
      el("th", { class: "num", text: "T_high / disq." }), el("th", { text: "status" }))),
    el("tbody", {}, rules.map((r, i) => el("tr", { "data-rule": r.display },
      el("td", { class: "muted", text: String(offset + i + 1) }),
      el("td", { class: "rule-text", text: r.display }),
      el("td", { class: "num", text: fmt(r.support) }),
      el("td", { class: "num", text: fmt(r.type === "parameter" ? r.disqualified : r.support_high) }),
      el("td", {}, el("span", { class: "badge likely", text: "likely, not validated" }),
        r.unsafe ? el("span", { class: "badge unsafe", title: r.unsafe, text: "UNSAFE" }) : null)))));
}

function renderCandidates(c) {
  if (!c) {
    fill("candidates", el("p", { class: "muted", text: "No candidate set read yet." }));
    return;
  }
  const head = c.rules.slice(0, CANDIDATES_SHOWN), rest = c.rules.slice(CANDIDATES_SHOWN);
  const more = rest.length ? el("details", { class: "more", open: state.open.has("#more-candidates") ? "" : null },
    el("summary", { text: `${rest.length} more candidates` }), candidateTable(rest, CANDIDATES_SHOWN)) : null;
  if (more) more.addEventListener("toggle", () => more.open ? state.open.add("#more-candidates") : state.open.delete("#more-candidates"));
  fill("candidates",
    el("p", { class: "notice" }, "Window ", el("b", { text: String(c.window) }), ` (read ${clock(c.received)}): `,
      `${fmt(c.count)} likely rules mined from ${fmt(c.stats.lines)} lines, ranked by support. `,
      el("b", { text: "Not validated" }), ": the validator decides them by fetching pages; only the published set is applied."),
    candidateTable(head, 0), more,
    c.count > c.rules.length ? el("p", { class: "muted", text: `… and ${c.count - c.rules.length} more with lower support.` }) : null);
}

function renderVersions(vs, now) {
  if (!vs.length) {
    fill("versions", el("p", { class: "muted", text: "No rule-set version seen by this worker yet." }));
    return;
  }
  const list = (xs, cls, sign) => xs.map((x) => el("div", { class: cls }, `${sign} `, el("span", { class: "rule-text", text: x })));
  fill("versions", el("table", {},
    el("thead", {}, el("tr", {}, ["version", "applied", "rules", "added", "removed"].map((h) => el("th", { text: h })))),
    el("tbody", {}, vs.slice().reverse().map((v) => el("tr", {},
      el("td", {}, v.refused ? el("span", { class: "bad", text: `v${v.version ?? "?"} refused: ${v.refused}` })
                             : v.version === null ? el("span", { class: "bad", text: "removed (tombstone)" }) : `v${v.version}`),
      el("td", {}, `${clock(v.applied)} `, el("span", { class: "muted", text: ago(v.applied, now) })),
      el("td", { class: "num", text: v.refused ? "–" : fmt(v.rules) }),
      el("td", {}, list(v.added, "added", "+")),
      el("td", {}, list(v.removed, "removed", "−")))))));
}

function renderDetail(d, now) {
  document.getElementById("site-section").hidden = !d;
  if (!d) return;
  document.getElementById("site-title").textContent = d.site;
  if (changed("traffic", d.traffic)) renderTraffic(d.traffic);
  if (changed("redundancy", [d.redundancy, !!d.published])) renderRedundancy(d.redundancy, d.published);
  renderRound(d.round, d.last_round, now, d.fetch_budget);
  if (changed("published", d.published)) renderPublished(d.published);
  if (changed("candidates", d.candidates)) renderCandidates(d.candidates);
  renderVersions(d.versions, now);
}

// ------------------------------------------------------------------ polling
function render(data) {
  document.getElementById("main").hidden = false;
  document.getElementById("token-form").hidden = true;
  document.getElementById("worker").textContent = `worker ${data.worker}`;
  document.getElementById("empty").hidden = data.sites.length > 0;
  document.getElementById("sites-section").hidden = data.sites.length === 0;
  if (data.site !== state.site) { state.site = data.site; state.last = {}; }
  renderSites(data.sites);
  renderDetail(data.detail, data.now);
  const live = document.getElementById("live");
  live.className = "live on";
  live.textContent = `live · updated ${clock(data.now)}`;
}

function askToken(refused) {
  document.getElementById("main").hidden = true;
  document.getElementById("token-form").hidden = false;
  document.getElementById("token-error").hidden = !refused;
  const live = document.getElementById("live");
  live.className = "live off";
  live.textContent = "token required";
}

async function poll() {
  clearTimeout(state.timer);
  const want = state.site || new URLSearchParams(location.hash.slice(1)).get("site") || "";
  const headers = state.token ? { Authorization: `Bearer ${state.token}` } : {};
  try {
    const r = await fetch(`/dashboard/state.json?site=${encodeURIComponent(want)}`, { headers, cache: "no-store" });
    if (r.status === 401) {
      askToken(!!state.token);
      return;  // polling resumes when a token is given
    }
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    render(await r.json());
  } catch (err) {
    const live = document.getElementById("live");
    live.className = "live off";
    live.textContent = `disconnected (${err.message}); retrying`;
  }
  state.timer = setTimeout(poll, POLL_MS);
}

function selectSite(site) {
  if (site === state.site) return;
  history.replaceState(null, "", `#site=${encodeURIComponent(site)}`);
  state.site = site;
  state.last = {};
  poll();
}

function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {  // a link with #token=… : keep it for this tab, take it out of the address bar
    state.token = hash.get("token");
    sessionStorage.setItem(TOKEN_KEY, state.token);
    hash.delete("token");
    history.replaceState(null, "", hash.toString() ? `#${hash}` : location.pathname);
  }
  state.site = hash.get("site");
  window.addEventListener("hashchange", () => {
    const s = new URLSearchParams(location.hash.slice(1)).get("site");
    if (s && s !== state.site) { state.site = s; state.last = {}; poll(); }
  });
  document.getElementById("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.token = document.getElementById("token").value.trim();
    sessionStorage.setItem(TOKEN_KEY, state.token);
    poll();
  });
  poll();
}

start();

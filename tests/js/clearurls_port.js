// ClearURLs' rule application, ported to Node for tests/test_consumers.py:
//   node tests/js/clearurls_port.js JOBDIR...
// Each JOBDIR holds clearurls.json (the --to clearurls export) and urls.b64: lines "LINK EXPECTED",
// both base64 (UTF-8).  The port writes out.b64 beside them: lines "GOT HREF", GOT the URL the
// browser ends up requesting for LINK, HREF the browser's serialisation of EXPECTED (new URL().href,
// what a navigation to it would request), both base64; GOT is "!error ..." when LINK is no URL.
//
// The ClearURLs add-on (https://github.com/ClearURLs/Addon, LGPL-3.0) is no package of any registry,
// so its functions are ported here, one for one, from commit d16a571d3a7f (2025-04-09); each keeps
// its name and cites its file.  The URL parsing and query handling are the add-on's too: it uses
// the WHATWG URL and URLSearchParams classes, which Node implements to the same standard as the
// browsers (the live-iterator behaviour of searchParams.keys() while fields are deleted included).
//
// What a browser does with one navigation (clearurls.js clearUrl, the webRequest.onBeforeRequest
// handler): the request URL is the browser's serialisation of the link (new URL(link).href); every
// provider whose urlPattern matches (and no exception) cleans it (removeFieldsFormURL); the first
// provider that changed something answers {redirectUrl}, and the browser requests that URL, which
// passes through the handler again, until no provider changes it.  The output is that last URL.
"use strict";

const fs = require("fs");
const path = require("path");

// core_js/utils/Multimap.js: a key -> Set of values map (only what URLHashParams uses)
class Multimap {
    constructor() { this._map = new Map(); }
    put(key, value) {
        const values = this._map.get(key) || new Set();
        values.add(value);
        this._map.set(key, values);
    }
    delete(key) { return this._map.delete(key); }
    keys() { return this._map.keys(); }
    forEach(callback) {
        for (const [key, values] of this._map.entries()) for (const value of values) callback(key, value);
    }
}

// core_js/utils/URLHashParams.js: the fragment read as "k=v&k2" fields
class URLHashParams {
    constructor(url) {
        this._params = new Multimap();
        for (const p of url.hash.slice(1).split("&")) {
            const param = p.split("=");
            if (!param[0]) continue;
            this._params.put(param[0], param.length === 2 && param[1] ? param[1] : null);
        }
    }
    delete(name) { this._params.delete(name); }
    keys() { return this._params.keys(); }
    toString() {
        const rtn = [];
        this._params.forEach((key, value) => rtn.push(value ? key + "=" + value : key));
        return rtn.join("&");
    }
}

// core_js/tools.js
function extractFragments(url) { return new URLHashParams(url); }

function urlWithoutParamsAndHash(url) {
    let newURL = url.toString();
    if (url.search) newURL = newURL.replace(url.search, "");
    if (url.hash) newURL = newURL.replace(url.hash, "");
    return new URL(newURL);
}

// the query the add-on writes back: the decoded name as it is, "=" and encodeURIComponent(value)
// when the value is not empty, the bare name otherwise
function urlSearchParamsToString(searchParams) {
    const rtn = [];
    searchParams.forEach((value, key) => rtn.push(value ? key + "=" + encodeURIComponent(value) : key));
    return rtn.join("&");
}

// tools.js checkLocalURL with storage.localHostsSkipping (on by default): localhost and the
// private/loopback IPv4 ranges are left alone
function ipv4InRange(host, cidr) {
    const [base, bits] = cidr.split("/");
    const toInt = (s) => s.split(".").reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
    const n = bits === undefined ? 32 : Number(bits);
    const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
    return /^\d+\.\d+\.\d+\.\d+$/.test(host) && ((toInt(host) & mask) >>> 0) === ((toInt(base) & mask) >>> 0);
}

function checkLocalURL(urlObject) {
    const host = urlObject.hostname;
    if (!/^\d/.test(host) && host !== "localhost") return false;
    return ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.1"]
        .some((c) => ipv4InRange(host, c)) || host === "localhost";
}

// clearurls.js Provider, as createProviders fills it from the data file (storage defaults:
// referralMarketing allowed, so referral rules are not applied; domainBlocking on)
function Provider(name, data) {
    const urlPattern = new RegExp(data.urlPattern || "", "i");
    const get = (k) => data[k] || [];
    this.name = name;
    this.rules = [...new Set(get("rules"))];
    this.rawRules = [...new Set(get("rawRules"))];
    this.exceptions = [...new Set(get("exceptions"))];
    this.redirections = [...new Set(get("redirections"))];
    this.canceling = Boolean(data.completeProvider);
    this.matchException = (url) => this.exceptions.some((e) => new RegExp(e, "i").test(url));
    this.matchURL = (url) => urlPattern.test(url) && !this.matchException(url);
    this.getRedirection = (url) => {
        for (const r of this.redirections) {
            const m = url.match(new RegExp(r, "i"));
            if (m && m.length > 0 && r) return new RegExp(r, "i").exec(url)[1];
        }
        return null;
    };
}

// core_js/tools.js decodeURL (used for redirections only; the export writes none)
function decodeURL(url) {
    let rtn = decodeURIComponent(url);
    while (rtn !== decodeURIComponent(rtn || "")) rtn = decodeURIComponent(rtn);
    return rtn.startsWith("http") ? rtn : "http://" + rtn;
}

// clearurls.js removeFieldsFormURL (logging and counters left out)
function removeFieldsFormURL(provider, pureUrl) {
    let url = pureUrl;
    let changes = false;
    let urlObject = new URL(url);
    if (checkLocalURL(urlObject)) return { changes: false, url: url, cancel: false };
    const re = provider.getRedirection(url);
    if (re !== null) return { redirect: true, url: decodeURL(re) };
    if (provider.canceling) return { cancel: true, url: url };
    for (const rawRule of provider.rawRules) {
        const before = url;
        url = url.replace(new RegExp(rawRule, "gi"), "");
        if (before !== url) changes = true;
    }
    urlObject = new URL(url);
    const fields = urlObject.searchParams;
    const fragments = extractFragments(urlObject);
    const domain = urlWithoutParamsAndHash(urlObject).toString();
    if (fields.toString() !== "" || fragments.toString() !== "") {
        for (const rule of provider.rules) {
            for (const field of fields.keys()) {
                if (new RegExp("^" + rule + "$", "gi").test(field)) {
                    fields.delete(field);
                    changes = true;
                }
            }
            for (const fragment of fragments.keys()) {
                if (new RegExp("^" + rule + "$", "gi").test(fragment)) {
                    fragments.delete(fragment);
                    changes = true;
                }
            }
        }
        let finalURL = domain;
        if (fields.toString() !== "") finalURL += "?" + urlSearchParamsToString(fields);
        if (fragments.toString() !== "") finalURL += "#" + fragments.toString();
        url = finalURL.replace(new RegExp("\\?&"), "?").replace(new RegExp("#&"), "#");
    }
    return { changes: changes, url: url };
}

// clearurls.js clearUrl: the webRequest handler (global status on, no ping blocking: a navigation)
function clearUrl(providers, requestUrl) {
    for (const provider of providers) {
        let result = { changes: false, url: "", redirect: false, cancel: false };
        if (provider.matchURL(requestUrl)) result = removeFieldsFormURL(provider, requestUrl);
        if (result.redirect) return { redirectUrl: result.url };
        if (result.cancel) return { cancel: true };
        if (result.changes) return { redirectUrl: result.url };
    }
    return {};
}

// a navigation to `link`: the browser requests new URL(link).href and follows each redirectUrl
function navigate(providers, link) {
    let url = new URL(link).href;
    for (let hop = 0; hop < 100; hop++) {
        const answer = clearUrl(providers, url);
        if (answer.cancel) return "";
        if (answer.redirectUrl === undefined) return url;
        url = new URL(answer.redirectUrl).href;
    }
    throw new Error("redirect loop: " + link);
}

function main() {
    const b64 = (t) => Buffer.from(t, "utf8").toString("base64");
    const text = (b) => Buffer.from(b, "base64").toString("utf8");
    for (const job of process.argv.slice(2)) {
        const data = JSON.parse(fs.readFileSync(path.join(job, "clearurls.json"), "utf8"));
        const providers = Object.keys(data.providers).map((k) => new Provider(k, data.providers[k]));
        const out = [];
        for (const line of fs.readFileSync(path.join(job, "urls.b64"), "utf8").split("\n")) {
            if (!line.trim()) continue;
            const [link, expected] = line.trim().split(" ").map(text);
            let got, href;
            try {
                got = navigate(providers, link);
            } catch (e) {
                got = "!error " + e.message;
            }
            try {
                href = new URL(expected).href;
            } catch (e) {
                href = "!error " + e.message;
            }
            out.push(b64(got) + " " + b64(href));
        }
        fs.writeFileSync(path.join(job, "out.b64"), out.join("\n") + (out.length ? "\n" : ""));
    }
}

main();

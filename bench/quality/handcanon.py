"""Hand-written per-app canonicalizers: the ceiling of the quality harness (issue 23 item 7, issue 28
item 1).  One function per harness app, written from each application's documentation and its
deployment in the harness (both hosts serve one site), never from its logs; they know the software,
where dustbuster learns from logs.  Kept in bench/, never imported by the product.

Each function maps a URL to a canonical URL and must merge only URLs that show the same page; each
rewrite cites the documentation that says so.  Scored by bench/quality/run.py (hand_row) on the
held-out test log's truth, and used by bench/quality/crawl_scrapy.py as a request fingerprinter.

The deployment: every app answers on two host names (the bare host and its ``www.`` alias) and two
ports (bench/quality/run.py App.ports); the harness names the ports in the environment variable
QUALITY_PORT_ALIASES ("ALT=MAIN,..."), and every canonicalizer maps the alias host and the
alternative port to the bare host and the main port.  RULES lists the rewrites each canonicalizer
applies, one line per documented rewrite (the "rules" the report sets beside our rule count).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

#: parameters a link from outside adds and no harness app reads (campaign tracking)
CAMPAIGN = re.compile(r"^(utm_[a-z]+|fbclid|gclid|ref)$")


def port_aliases() -> dict[str, str]:
    """QUALITY_PORT_ALIASES ("ALT=MAIN,..."): the ports of this run that serve the main port's site."""
    pairs = (p.split("=", 1) for p in os.environ.get("QUALITY_PORT_ALIASES", "").split(",") if "=" in p)
    return dict(pairs)


def _split(url: str) -> tuple[str, str, str, list[tuple[str, str]]]:
    u = urlsplit(url)
    host = u.netloc[4:] if u.netloc.startswith("www.") else u.netloc  # the harness serves both names
    name, sep, port = host.rpartition(":")
    if sep and port in (aliases := port_aliases()):  # ... on both ports
        host = f"{name}:{aliases[port]}"
    return u.scheme, host, u.path or "/", parse_qsl(u.query, keep_blank_values=True)


def _join(scheme: str, host: str, path: str, query: list[tuple[str, str]]) -> str:
    return urlunsplit((scheme, host, path, urlencode(query, quote_via=quote, safe=":/"), ""))


def _no_campaign(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in query if not CAMPAIGN.match(k)]


# ---------------------------------------------------------------------------------------------- trac

def trac(url: str) -> str:
    """Trac 1.6 (https://trac.edgewall.org/wiki/TracGuide).

    * TracIni [trac] default_handler = WikiModule: ``/`` shows the wiki's start page, as ``/wiki``
      and ``/wiki/WikiStart`` do (TracWiki: "WikiStart is the start page").
    * Wiki pages: ``?action=view`` is the default action (trac.wiki.web_ui, TracWiki).
    * Campaign parameters are read by no Trac module, except the query and report modules, which
      take every parameter as a ticket field filter (TracQuery "Using TracLinks"): kept there.
    """
    scheme, host, path, q = _split(url)
    if not (path.startswith("/query") or path.startswith("/report")):
        q = _no_campaign(q)
    if path in ("/", "/wiki", "/wiki/") and not q:  # with a query (?version=) Trac answers otherwise (measured)
        path = "/wiki/WikiStart"
    if path.startswith("/wiki/") and ("action", "view") in q:
        q = [p for p in q if p != ("action", "view")]
    return _join(scheme, host, path, q)


# ---------------------------------------------------------------------------------------------- docs

def docs(url: str) -> str:
    """A Sphinx site under Apache httpd 2.4 (bench/quality/docs_site.py's httpd.conf).

    * Static files ignore the query string (core: the default handler serves the file); only the
      directory listings of mod_autoindex read it (https://httpd.apache.org/docs/2.4/mod/mod_autoindex.html
      "Autoindex Request Query Arguments": C=, O=, F=, V=, P=), and ``C=N;O=A`` is the default order.
    * mod_negotiation's MultiViews (https://httpd.apache.org/docs/2.4/content-negotiation.html):
      ``/page`` serves ``/page.html`` when that is the only variant.
    * mod_dir's DirectoryIndex index.html: ``/dir/`` serves ``/dir/index.html``
      (https://httpd.apache.org/docs/2.4/mod/mod_dir.html).
    """
    scheme, host, path, q = _split(url)
    last = path.rsplit("/", 1)[-1]
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    elif last and "." not in last and not path.endswith("/"):
        path += ".html"  # MultiViews; a folder name has no dot either, but is linked with its slash
    if not path.endswith("/"):
        return _join(scheme, host, path, [])
    keep = [(k, v) for k, v in q if k in ("C", "O", "F", "V", "P")]
    if set(keep) <= {("C", "N"), ("O", "A")}:
        keep = []
    return _join(scheme, host, path, keep)


# ----------------------------------------------------------------------------------------- mediawiki

WIKI_PATH, WIKI_SCRIPT = "/wiki/", "/w/index.php"
#: Special pages whose form fills these parameters only to come back where the user was
#: (https://www.mediawiki.org/wiki/Manual:Parameters_to_Special:UserLogin: returnto, returntoquery)
LOGIN_PAGES = ("Special:UserLogin", "Special:CreateAccount")
#: uselang and useskin naming the wiki's defaults (mediawiki_site.py: English, MonoBook)
MW_DEFAULTS = (("uselang", "en"), ("useskin", "monobook"))


def wiki_title(t: str) -> str:
    """A page title as MediaWiki normalises it (https://www.mediawiki.org/wiki/Manual:Page_title):
    underscores for spaces, the first letter of the title (and of the part after a namespace
    prefix) upper case on a wiki with $wgCapitalLinks (the default)."""
    t = unquote(t.replace("+", " ")).strip().replace(" ", "_")
    ns, sep, rest = t.partition(":")
    if sep and ns in ("Special", "Talk", "User", "User_talk", "Category", "Category_talk", "Help", "File",
                      "Template", "MediaWiki", "Quality_Wiki", "Project"):
        return f"{ns}:{rest[:1].upper()}{rest[1:]}"
    return t[:1].upper() + t[1:]


def mediawiki(url: str) -> str:
    """MediaWiki 1.39 with short URLs (bench/quality/mediawiki_site.py: $wgArticlePath = /wiki/$1).

    * https://www.mediawiki.org/wiki/Manual:Parameters_to_index.php: the title is read from the
      ``title`` parameter or from the path (``/w/index.php/Title``, and ``/wiki/Title`` by
      $wgArticlePath, https://www.mediawiki.org/wiki/Manual:$wgArticlePath), so
      ``/w/index.php?title=T&x`` = ``/wiki/T?x``; ``action=view`` is the default action; the order of
      the parameters does not matter (PHP's $_GET).
    * Titles are normalised (Manual:Page_title): see wiki_title.
    * Special:UserLogin and Special:CreateAccount: ``returnto``/``returntoquery`` only choose the page
      shown after logging in (Manual:Parameters_to_Special:UserLogin).
    * Campaign parameters are read by nothing (unknown parameters are ignored by index.php).
    * ``uselang`` and ``useskin`` set to the wiki's own defaults ($wgLanguageCode "en",
      $wgDefaultSkin "monobook" in mediawiki_site.py) show the page as without them
      (Manual:Parameters_to_index.php "uselang", "useskin").
    * No title at all (``/wiki/``, ``/w/``, ``/w/index.php``): the main page (Manual:Main_Page); ``/w/``
      is index.php by Apache's DirectoryIndex.
    """
    scheme, host, path, q = _split(url)
    q = [p for p in _no_campaign(q) if p not in MW_DEFAULTS]
    title = None
    if path.startswith(WIKI_PATH):
        title = path[len(WIKI_PATH):]
    elif path in (WIKI_SCRIPT, "/w/") or path.startswith(WIKI_SCRIPT + "/"):
        title = path[len(WIKI_SCRIPT) + 1:] or None  # the path's title wins (WebRequest::interpolateTitle)
        t = [v for k, v in q if k == "title"]
        if t and not title:
            title = t[0]
    script = path in (WIKI_SCRIPT, "/w/") or path.startswith(WIKI_SCRIPT + "/")
    if not path.startswith(WIKI_PATH) and not script:  # load.php, api.php, resources: not a page view
        return _join(scheme, host, path, sorted(q))
    if not title and not [p for p in q if p != ("action", "view")]:
        title = "Main_Page"  # no title: the main page (https://www.mediawiki.org/wiki/Manual:Main_Page)
    if title is None:
        return _join(scheme, host, path, sorted(q))
    if path.startswith(WIKI_SCRIPT) and any(k in ("curid", "oldid", "diff") for k, _ in q) \
            and not any(k == "title" for k, _ in q) and not title:
        return _join(scheme, host, path, sorted(q))
    title = wiki_title(title)
    q = [(k, v) for k, v in q if k != "title" and (k, v) != ("action", "view")]
    if title in LOGIN_PAGES:
        q = [(k, v) for k, v in q if k not in ("returnto", "returntoquery")]
    return _join(scheme, host, WIKI_PATH + quote(title, safe=":/!$'()*,;@~"), sorted(q))


# ----------------------------------------------------------------------------------------- wordpress

#: static files Apache serves as they are, whatever the query (WordPress appends ?ver= for cache busting:
#: https://developer.wordpress.org/reference/functions/wp_enqueue_style/ "$ver")
STATIC = re.compile(r"\.(css|js|png|jpe?g|gif|svg|ico|woff2?|ttf|txt|xml)$")


def wordpress(url: str) -> str:
    """WordPress 6.1 with pretty permalinks (bench/quality/wordpress_site.py).

    * ``replytocom`` only moves the comment form under a comment
      (https://developer.wordpress.org/reference/functions/get_comment_reply_link/; WordPress marks
      those pages noindex: wp_robots_no_robots via wp_replytocom_noindex) — the page is the post.
      Measured here, not documented: with comments paged (``/comment-page-N/``) and Twenty
      Twenty-Three, a reply link on a comment page shows other text than the comment page (the thread
      is laid out again around the form), so ``replytocom`` is kept on comment pages.
    * WP::parse_request reads only registered query variables
      (https://developer.wordpress.org/reference/classes/wp/ $public_query_vars); campaign parameters
      and ``highlight`` (a search-highlight parameter some links add) are not among them.
    * ``/search/TERM/`` is the rewrite rule ``search/(.+)/?$ => index.php?s=$1``
      (https://developer.wordpress.org/reference/classes/wp_rewrite/ $search_base): the same query as
      ``/?s=TERM``, and redirect_canonical redirects neither.
    * Static files under /wp-content and /wp-includes ignore the query (``?ver=``).
    """
    scheme, host, path, q = _split(url)
    if (path.startswith("/wp-content/") or path.startswith("/wp-includes/")) and STATIC.search(path):
        return _join(scheme, host, path, [])
    if path.startswith("/wp-") or path.endswith(".php") and path != "/index.php":
        return _join(scheme, host, path, sorted(_no_campaign(q)))
    if "/comment-page-" not in path:
        q = [(k, v) for k, v in q if k != "replytocom"]
    q = [(k, v) for k, v in _no_campaign(q) if k != "highlight"]
    m = re.match(r"^/search/([^/]+)/?$", path)
    if m and not q:
        path, q = "/", [("s", unquote(m.group(1)).replace("+", " "))]
    if path == "/index.php":
        path = "/"
    return _join(scheme, host, path, sorted(q))


CANONICALIZERS: dict[str, Callable[[str], str]] = {"trac": trac, "docs": docs, "mediawiki": mediawiki,
                                                   "wordpress": wordpress}

#: the deployment's rewrites, shared by every app (_split)
HOST_RULES = ("www. alias host -> the bare host", "the alternative port -> the main port")
#: the rewrites each canonicalizer applies, one per documented rewrite of its docstring and code
#: (HOST_RULES included): the count the report sets beside our validated rules
RULES: dict[str, tuple[str, ...]] = {
    "trac": HOST_RULES + (
        "campaign parameters dropped (not on /query, /report)",
        "/, /wiki, /wiki/ without a query -> /wiki/WikiStart",
        "action=view dropped on /wiki/ pages"),
    "docs": HOST_RULES + (
        "/dir/index.html -> /dir/ (DirectoryIndex)",
        "/page -> /page.html (MultiViews)",
        "the query dropped on files",
        "on listings only the autoindex arguments C, O, F, V, P kept",
        "the default listing order C=N;O=A dropped"),
    "mediawiki": HOST_RULES + (
        "campaign parameters dropped",
        "uselang=en and useskin=monobook (the defaults) dropped",
        "/w/index.php?title=T -> /wiki/T",
        "/w/index.php/T -> /wiki/T",
        "no title (/wiki/, /w/, /w/index.php) -> /wiki/Main_Page",
        "titles normalised (spaces, first letter)",
        "action=view dropped",
        "returnto, returntoquery dropped on the login pages",
        "parameters sorted"),
    "wordpress": HOST_RULES + (
        "the query dropped on static files under /wp-content, /wp-includes",
        "campaign parameters dropped",
        "highlight dropped (not a registered query variable)",
        "replytocom dropped outside comment pages",
        "/search/T/ -> /?s=T",
        "/index.php -> /",
        "parameters sorted"),
}

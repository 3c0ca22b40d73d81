"""Every site's current rule set, for a crawler in its own process (used by
``dustbuster.scrapy``), from one of three sources:

| source | form | how |
|---|---|---|
| a rules file | ``rules.json`` / ``rules.jsonl`` / ``file:///path`` | a RuleSet document, or the JSON lines that ``dustbuster rules --json`` prints; read once |
| a worker's HTTP API | ``http://127.0.0.1:8870`` | ``GET /sites``, then ``GET /sites/{site}/rules`` for each new version; polled every ``refresh_s`` |
| the rules topic | ``kafka://127.0.0.1:9092/dust-rules`` | followed live from its start (dustbuster.stream.rulesview.TopicFollower) |

Every set goes through the rule book's admission (:meth:`dustbuster.core.canon.rulebook.RuleBook.update`: valid
rules only, a newer version, converging, on the site; with ``keys``, signed by one of them); a refused set is counted by reason and
logged, and the site keeps the set it had.  :meth:`LiveRules.start` returns once the source has
been read (the file, the first poll, the topic up to its end at start; at most ``wait_s``), so the
first requests already use the rules; the API and the topic are then followed in a daemon thread.
``canonize`` (``canonicalize``, its former name) may be called from any thread.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from dustbuster.core.errors import ConfigError, DustError, ParseError, RuleError
from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.canon.rulebook import RuleBook, SiteCanonized, trust_warnings
from dustbuster.core.model.signing import parse_key_list, trusted_keys
from dustbuster.core.strictjson import loads_strict
from dustbuster.stream.keyfile import RELOAD_S as KEY_RELOAD_S, KeyFile, apply_keys

log = logging.getLogger(__name__)


class LiveRules:
    def __init__(self, source: str, token: str = "", refresh_s: float = 30.0, normalize: bool = True, ma: int = DEFAULT_MA,
                 wait_s: float = 30.0, keys: str | list[str] = "", keys_file: str | Path | None = None) -> None:
        """``keys``: trusted Ed25519 public keys (base64, a list or one string separated by commas):
        when given, only rule sets signed by one of them are applied (dustbuster.core.model.signing).
        ``keys_file``: more trusted keys, in a file read again every few seconds when it changes
        (dustbuster.stream.keyfile): a key taken out is revoked at once, without a restart."""
        if not source or not source.strip():
            raise ConfigError("no rules source: give a rules file, a worker's API (http://host:8870) "
                              "or the rules topic (kafka://host:9092/dust-rules)")
        self.source, self.token, self.refresh_s, self.wait_s = source.strip(), token, refresh_s, wait_s
        self.fixed_keys = parse_key_list(keys) if isinstance(keys, str) else trusted_keys(keys)
        self.key_file = KeyFile(Path(keys_file)) if keys_file else None
        self.book = RuleBook(ma, normalize, keys=self.fixed_keys | (self.key_file.keys if self.key_file else {}))
        self.refused: Counter[str] = Counter()
        self.updates = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the rule book, thread-safe
    def update(self, site: str, doc: dict | None, quiet: bool = False) -> None:
        """Apply one rule set (None: the site has none any more) through the rule book's admission;
        a refused set raises RuleError, is counted by reason (and logged unless ``quiet``: the rules
        follower logs its skips itself) and leaves the site's set as it was."""
        with self._lock:
            try:
                self.book.update(site, doc)
            except RuleError as exc:
                self.refused[exc.reason] += 1
                if not quiet:
                    log.warning("rule set of %s refused (%s); the site keeps its current set", site, exc)
                raise
            self.updates += 1

    def canonize(self, url: str) -> SiteCanonized:
        with self._lock:
            return self.book.canonize(url)

    #: The method's name before the project settled on one verb ("canonize", as the papers say);
    #: kept so that crawler code written against it keeps working.
    canonicalize = canonize

    def versions(self) -> dict[str, int]:
        with self._lock:
            return {s: sr.version for s, sr in self.book.sites.items()}

    # ------------------------------------------------------------------ sources
    def start(self) -> "LiveRules":
        src = self.source
        if src.startswith("kafka://"):
            self._start_thread(self._follow_topic, wait=True)
        elif src.startswith(("http://", "https://")):
            try:
                self._poll_api()
            except (urllib.error.URLError, OSError, DustError) as exc:
                if isinstance(exc, ConfigError):
                    raise
                log.warning("rules API %s not reachable yet (%s); retrying every %gs", src, exc, self.refresh_s)
            self._start_thread(self._follow_api, wait=False)
        else:
            self._load_file(Path(src[7:] if src.startswith("file://") else src))
        log.info("rules from %s: %s", src, ", ".join(f"{s} v{v}" for s, v in sorted(self.versions().items())) or "none")
        with self._lock:
            warnings = trust_warnings(self.book, "DUSTBUSTER_TRUSTED_KEYS / DUST_TRUSTED_KEYS")
        for warning in warnings:
            log.warning("%s", warning)
        if self.key_file is not None:
            threading.Thread(target=self._watch_keys, name="dustbuster-keys", daemon=True).start()
        return self

    def reload_keys(self) -> bool:
        """Read the keys file again; when it changed, apply its keys (``RuleBook.set_keys``) and say
        which sites lost their rule set.  True when it changed."""
        if self.key_file is None:
            return False
        keys = self.key_file.changed()
        if keys is None:
            return False
        with self._lock:
            apply_keys(self.book, keys, self.fixed_keys, self.key_file.path)
        return True

    def _watch_keys(self) -> None:
        while not self._stop.wait(KEY_RELOAD_S):
            try:
                self.reload_keys()
            except Exception:  # a watcher that died would leave a revoked key trusted: log, go on
                log.exception("reading the trusted keys file failed")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def _start_thread(self, target, wait: bool) -> None:
        ready = threading.Event()
        self._thread = threading.Thread(target=target, args=(ready,), name="dustbuster-rules", daemon=True)
        self._thread.start()
        if wait and not ready.wait(self.wait_s):
            log.warning("rules source %s not read to its end within %gs; going on, it is followed", self.source,
                        self.wait_s)

    # a file: one RuleSet document, or JSON lines as `dustbuster rules --json` prints them
    def _load_file(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the rules file {path}: {exc.strerror or exc}") from None
        for n, doc in enumerate(_documents(text, path), 1):
            site = doc.get("site")
            if not isinstance(site, str) or not site.strip():
                raise ConfigError(f"{path}: rule set {n} has no 'site' (a RuleSet document names its site)")
            try:
                self.update(site, None if doc.get("deleted") is True else doc)
            except RuleError:
                continue

    # the HTTP API of a worker
    def _get(self, path: str) -> Any:
        req = urllib.request.Request(self.source.rstrip("/") + path, headers={"Accept": "application/json"})
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return loads_strict(r.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 401:
                raise ConfigError(f"{self.source} refused the token (401): set DUSTBUSTER_TOKEN / DUST_API_TOKEN") from None
            raise

    def _poll_api(self) -> None:
        listed = self._get("/sites")
        sites = {s["site"]: s.get("version") for s in listed.get("sites", []) if isinstance(s, dict) and s.get("site")}
        held = self.versions()
        for site, version in sites.items():
            if held.get(site) != version:
                try:
                    self.update(site, self._get("/sites/" + urllib.parse.quote(site, safe="") + "/rules"))
                except (RuleError, ParseError, urllib.error.HTTPError) as exc:
                    log.debug("rule set of %s not applied: %s", site, exc)
        for site in set(held) - set(sites):
            try:
                self.update(site, None, quiet=True)
            except RuleError:  # with trusted keys only a signed set removes rules: counted, kept
                continue

    def _follow_api(self, ready: threading.Event) -> None:
        ready.set()
        while not self._stop.wait(self.refresh_s):
            try:
                self._poll_api()
            except Exception as exc:  # noqa: BLE001 - a worker restarting, a network hiccup: keep the sets held, retry
                log.warning("rules API %s: %s; keeping the current sets", self.source, exc)

    # the rules topic, followed live
    def _follow_topic(self, ready: threading.Event) -> None:
        from dustbuster.stream.rulesview import TopicFollower

        bootstrap, _, topic = self.source[8:].partition("/")
        if not bootstrap or not topic:
            log.error("rules source %s: expected kafka://host:port/topic", self.source)
            ready.set()
            return

        async def run() -> None:
            follower = TopicFollower(bootstrap, topic, lambda site, doc: self.update(site, doc, quiet=True))
            while not self._stop.is_set():
                try:
                    await follower.start(wait_s=self.wait_s)
                    break
                except DustError as exc:
                    log.warning("rules topic: %s; retrying", exc)
                    await asyncio.sleep(2.0)
            try:
                while not self._stop.is_set():
                    await follower.poll()
                    if follower.ready.is_set():
                        ready.set()
            finally:
                await follower.stop()
                ready.set()

        try:
            asyncio.run(run())
        except Exception:
            log.exception("following the rules topic %s failed; the sets held stay", self.source)
            ready.set()


def _documents(text: str, path: Path) -> list[dict]:
    """The rule-set documents of a file: one JSON object, or one JSON object a line."""
    try:
        one = loads_strict(text)
        docs = [one]
    except ParseError:
        docs = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    docs.append(loads_strict(line))
                except ParseError as exc:
                    raise ConfigError(f"{path}:{n}: not a JSON rule set ({exc.reason})") from None
    if not docs:
        raise ConfigError(f"{path} holds no rule set")
    for d in docs:
        if not isinstance(d, dict):
            raise ConfigError(f"{path}: a rule set must be a JSON object")
    return docs


class LazyRules:
    """A rule source started on first use (from any thread) and stopped once: what a crawler
    integration holds (dustbuster.scrapy, dustbuster.crawlee), so building a crawler starts nothing."""

    def __init__(self, rules: LiveRules) -> None:
        self.rules = rules
        self.started = False
        self._lock = threading.Lock()

    def canonize(self, url: str) -> SiteCanonized:
        if not self.started:
            with self._lock:
                if not self.started:
                    self.rules.start()
                    self.started = True
        return self.rules.canonize(url)

    def stop(self) -> None:
        if self.started:
            self.rules.stop()

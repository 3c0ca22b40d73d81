"""The one settings object: frozen, read from the environment (prefix ``DUST_``) in one place.
The sites file is parsed on first use of :attr:`Settings.sites` (the validator reads it when it
starts, so a bad file is a ConfigError of the validator, ``validate`` and ``truth`` only; the
other commands never read it).  It is read once: edits need a restart.

| variable | default | meaning |
|---|---|---|
| DUST_KAFKA_BOOTSTRAP | 127.0.0.1:9092 | Kafka bootstrap servers |
| DUST_APP_ID | dustbuster | Faust app id (consumer group, internal topic prefix) |
| DUST_DATA_DIR | var/worker | worker state (RocksDB per partition) |
| DUST_TOPIC_PREFIX | dust | topics are <prefix>-raw, -candidates, -rules, -rejects, -urls-changelog, -frontier, -canonical, -seen-changelog (the topic table, stream/topics.py; `Settings.<key>_topic`) |
| DUST_PARTITIONS | 4 | partitions of the raw and candidates topics |
| DUST_WINDOW_S | 60 | seconds between candidate windows |
| DUST_WEB_PORT | 0 (off) | worker web port |
| DUST_SESSION_TIMEOUT_S | 30 | consumer-group session timeout (how long a dead worker holds its partitions) |
| DUST_VALIDATOR_SITES | (none) | JSON file: site → {"origins": [...], "allow_private": false, "resolve": {host: ip}}; only the sites listed there are ever fetched; read once, when the validator starts (core/validation/siteconfig.py): edits need a restart |
| DUST_VERDICT_TTL_S | 86400 | a verdict is re-validated after this many seconds |
| DUST_SKETCH_THRESHOLD | 1.0 | DustParams.sketch_threshold: fraction of the 4 min-hashes that must agree for "same page" (0.5 = "2 of 4"; thesis §6.3), in mining and validation alike; was DUST_SKETCH_MIN_EQUAL, now refused |
| DUST_VALIDATE | true | run the validator agent in this worker |
| DUST_VALIDATOR_LINKS | true | after each round, the validator sends the same-origin links of the pages it fetched to the raw topic as listed URLs of the site (`RawBatch` `format="urls"`, `source="validator-links"`; agents/listedlinks.py); false: it sends none |
| DUST_CANONIZE | true | run the canonizer agent (frontier → canonical URLs) and follow the rules topic |
| DUST_NORMALIZE | true | RFC 3986 normalization before the site rules (core/urls/normalize.py) |
| DUST_API_PORT | 8870 (0 = off) | the HTTP API (POST /canonicalize, /sites, /healthz, /metrics) |
| DUST_API_HOST | 127.0.0.1 | the address the API listens on |
| DUST_API_TOKEN | (none) | when set, requests must carry `Authorization: Bearer <token>` (all but /healthz) |
| DUST_API_MAX_CONNECTIONS | 1024 | most connections the API holds at once, and never more than a quarter of the process's file-descriptor limit (the rest is RocksDB's and Kafka's); one more is answered 503 and closed (`too_many_connections`) |
| DUST_API_IDLE_TIMEOUT_S | 15 | a connection that has not sent a whole request (headers included) within this many seconds of opening or of its last answer is closed |
| DUST_API_MAX_BATCH | 10000 | most URLs in one POST /canonicalize (more: 413) |
| DUST_INGEST_GROUP | 50 | raw messages the ingest agent applies together at most (one state write, one changelog acknowledgement; agents/ingest.py) |
| DUST_PARSE_PROCESSES | auto: 1 with two or more usable CPUs, else 0 | processes of the worker that decode and parse raw messages for the ingest agent, each group's while the group before it is applied, so one worker uses more cores (agents/parsepool.py, agents/ingest.py; 2.9× the known-URL lines on two cores, docs/performance.md); 0: parsed on the agent's own thread |
| DUST_WINDOW_PROCESSES | auto: 2 with two or more usable CPUs, else 1 | processes a window mines a site in: with 2, a site of 20,000 URLs or more has Figure 1's supports counted in a forked process while the state thread runs phase 3 and the other miners (core/mining/parallel.py, as `mine --jobs 2`; the same candidates, 30–40 % less time at the 100,000-URL cap, and the child's Figure 1 arrays, ~330 MB there, beside the worker's memory while it runs: docs/cost.md); a site whose second process is lost (killed) mines in one from then on; 1: one process (on a worker whose ingest and parser processes already keep the cores busy) |
| DUST_MAX_MESSAGE_BYTES | 1000000 | the most bytes of one record the worker produces (the producer's `max_request_size`; the broker's default `message.max.bytes` is 1,048,588): a candidate set over it is trimmed to fit (stream/fit.py), a send that still fails is a counted, logged skip (`dust_send_failures_total`) |
| DUST_MAX_RECORD_BYTES | 4000000 | the largest record value a rules or candidates reader parses (after decompression); a bigger one is skipped unparsed (`oversized`), and a compressed batch that would unpack to more than twice it is skipped without being unpacked (`batch_too_large`; stream/boundedcodec.py) |
| DUST_BROKER_GRACE_S | 15 | `/healthz` answers 503 once the broker has not answered a metadata request (every 2 s) for this many seconds (stream/brokerprobe.py) |
| DUST_MAX_URLS_PER_SITE | 100000 (0 = no cap) | URLs tracked per site; a new URL beyond it is counted (`over_cap`, `dust_urls_over_cap_total`), logged once per site, and not tracked (docs/cost.md) |
| DUST_S, DUST_T_LOW, DUST_T_HIGH, DUST_MS, DUST_MRD, DUST_MAD, DUST_MW | papers' | DustBuster parameters |
| DUST_N, DUST_EPSILON | DustParams | validation: the comparisons that decide a rule and the refutation threshold (Figure 3) |
| DUST_SIZE_SLACK | 0.02 | DustParams.size_slack: LikelySimilar on sizes, intervals closer than this fraction of the larger size overlap (0 = the paper's exact test) |
| DUST_LANGUAGE | extended | DustParams.language: `paper` (substring + global parameter rules) or `extended` (+ scoped parameter, query, case, pattern rules; docs/rules.md) |
| DUST_SIGN_KEY_FILE | (none) | the validator's Ed25519 private key (PEM, `dustbuster keys`): every rule set it publishes is signed (core/model/signing.py); read when the validator starts |
| DUST_TRUSTED_KEYS | (none) | base64 Ed25519 public keys, separated by commas: when set, every consumer (canonizer agents, API, `canonize`/`export`/`rules --from-topic`) applies only sets signed by one of them (`unsigned`, `bad_signature` otherwise); several keys for a rotation |
| DUST_MAX_VERSION_SKEW_S | 86400 | a rule set whose version (publish time in ms) is further ahead of this consumer's clock is refused (`version_from_future`; core/canon/admission.py MAX_SKEW_MS says why a day) |
| DUST_MAX_ENVELOPES | 2048 (0 = no cap) | most envelopes per URL in phase 1 (core/params.py; the same in `dustbuster mine`) |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

from dustbuster.core.errors import MAX_LINE_CHARS, ConfigError
from dustbuster.core.params import DustParams
from dustbuster.core.model.signing import load_private_key, parse_key_list
from dustbuster.core.validation.siteconfig import SiteConfig, parse_sites

from .keyfile import read_key_file
from .topics import topic_spec

PREFIX = "DUST_"
#: environment variables no longer read, with the one that replaced each: setting one is an error
RENAMED = {"DUST_SKETCH_MIN_EQUAL": "DUST_SKETCH_THRESHOLD"}


@dataclass(frozen=True)
class Settings:
    kafka_bootstrap: str = "127.0.0.1:9092"
    app_id: str = "dustbuster"
    data_dir: Path = Path("var/worker")
    topic_prefix: str = "dust"
    partitions: int = 4
    window_s: float = 60.0
    web_port: int = 0
    session_timeout_s: float = 30.0
    validator_sites: Path | None = None
    verdict_ttl_s: float = 86400.0
    #: an undecided verdict is tried again after this long, then twice as long each time, at most
    #: DUST_VERDICT_TTL_S (``DUST_UNDECIDED_RETRY_S``)
    undecided_retry_s: float = 900.0
    #: the most pages the validator fetches of one site in any hour, all rounds together
    #: (``DUST_VALIDATOR_FETCHES_PER_HOUR``; fetch/pacer.py)
    validator_fetches_per_hour: int = 10_000
    validate: bool = True
    validator_links: bool = True
    canonize: bool = True
    normalize: bool = True
    #: the frontier's URLs go on to the raw topic as a URL list (listed URLs of their site):
    #: ``DUST_FRONTIER_LISTS``
    frontier_lists: bool = True
    api_port: int = 8870
    api_host: str = "127.0.0.1"
    api_token: str = ""
    api_max_batch: int = 10000
    api_max_connections: int = 1024
    api_idle_timeout_s: float = 15.0
    max_lines_per_message: int = 10000
    max_line_bytes: int = MAX_LINE_CHARS  #: the line cap, as dustbuster mine's (characters)
    max_urls_per_site: int = 100_000
    max_message_bytes: int = 1_000_000
    broker_grace_s: float = 15.0
    max_record_bytes: int = 4_000_000
    ingest_group: int = 50
    parse_processes: int = field(default_factory=lambda: auto_parse_processes())
    window_processes: int = field(default_factory=lambda: auto_window_processes())
    sign_key_file: Path | None = None
    trusted_keys: str = ""
    #: a file of trusted keys, read again when it changes: keys added and revoked without a restart
    #: (``DUST_TRUSTED_KEYS_FILE``; stream/keyfile.py)
    trusted_keys_file: Path | None = None
    max_version_skew_s: float = 86400.0
    params: DustParams = field(default_factory=DustParams)

    @cached_property
    def sites(self) -> Mapping[str, SiteConfig]:
        """The parsed sites file (empty without one), read on first use and then kept: edits need
        a restart.  ConfigError when it is missing or malformed."""
        return read_sites(self.validator_sites) if self.validator_sites else {}

    @cached_property
    def signing_key(self):
        """The validator's private key (DUST_SIGN_KEY_FILE), None without one; ConfigError when the
        file is missing or not an Ed25519 PEM key.  Read on first use, then kept."""
        return read_signing_key(self.sign_key_file) if self.sign_key_file else None

    @cached_property
    def public_keys(self) -> dict[str, bytes]:
        """The trusted public keys (DUST_TRUSTED_KEYS, and DUST_TRUSTED_KEYS_FILE's: stream/keyfile.py),
        key id → raw key; empty: sets are not checked."""
        keys = parse_key_list(self.trusted_keys)
        if self.trusted_keys_file is not None:
            keys |= read_key_file(self.trusted_keys_file)
        return keys

    def topic(self, key: str) -> str:
        """The name of the topic ``key`` of the topic table (stream/topics.py), under DUST_TOPIC_PREFIX."""
        return topic_spec(key).name(self.topic_prefix)

    # ``<key>_topic``: one property per row of the topic table (stream/topics.py), the name of that
    # row's topic.  The table alone declares a topic; these are spelled out so that a type checker
    # sees them (tests/test_topics.py checks there is one per row, and no other).

    @property
    def raw_topic(self) -> str:
        """Access-log lines of one site: the ingest agent's input (stream/topics.py)."""
        return self.topic("raw")

    @property
    def candidates_topic(self) -> str:
        """Likely rules of one site at one window, with its newest test URLs (stream/topics.py)."""
        return self.topic("candidates")

    @property
    def rules_topic(self) -> str:
        """The validated rules of one site, the latest set per site kept (stream/topics.py)."""
        return self.topic("rules")

    @property
    def rejects_topic(self) -> str:
        """Dead letters: junk messages and bad lines, with the reason (stream/topics.py)."""
        return self.topic("rejects")

    @property
    def changelog_topic(self) -> str:
        """The URL records of every site, per raw partition (stream/topics.py)."""
        return self.topic("changelog")

    @property
    def frontier_topic(self) -> str:
        """URLs a crawler wants canonicalized (stream/topics.py)."""
        return self.topic("frontier")

    @property
    def canonical_topic(self) -> str:
        """The frontier's URLs with their canonical URL and seen flag (stream/topics.py)."""
        return self.topic("canonical")

    @property
    def seen_changelog_topic(self) -> str:
        """The seen signatures of every frontier partition (stream/topics.py)."""
        return self.topic("seen_changelog")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> "Settings":
        env = os.environ if env is None else env
        for old, new in RENAMED.items():
            if old in env:
                raise ConfigError(f"{old} is no longer read: set {new} instead (the same value)")
        base = cls()
        values: dict[str, Any] = {}  # each a field's value, of that field's type (_convert)
        for f in fields(cls):
            if f.name == "params":
                continue
            raw = env.get(PREFIX + f.name.upper())
            if raw is None and f.name == "kafka_bootstrap":
                raw = env.get("DUST_KAFKA_BOOTSTRAP")
            if raw is not None and not (f.name in AUTO_FIELDS and raw.strip().lower() == "auto"):
                values[f.name] = _convert(f.name, raw, getattr(base, f.name))
        pvals: dict[str, object] = {}
        for name in ("S", "t_low", "t_high", "ms", "mrd", "mad", "mw", "ma", "max_envelopes", "sketch_threshold",
                     "size_slack", "language", "n", "epsilon"):
            raw = env.get(PREFIX + name.upper())
            if raw is not None:
                pvals[name] = _convert(name, raw, getattr(base.params, name))
        values["params"] = base.params.with_(**pvals)
        values.update({k: v for k, v in overrides.items() if v is not None})
        s = replace(base, **values)
        if s.partitions < 1 or s.window_s <= 0:
            raise ConfigError("DUST_PARTITIONS must be >= 1 and DUST_WINDOW_S > 0")
        if s.ingest_group < 1:
            raise ConfigError("DUST_INGEST_GROUP must be >= 1")
        if not 0 <= s.parse_processes <= 256:
            raise ConfigError("DUST_PARSE_PROCESSES must be between 0 (parse inline) and 256")
        if s.window_processes not in (1, 2):
            raise ConfigError("DUST_WINDOW_PROCESSES must be 1, 2 or auto")
        if s.api_max_connections < 1 or s.api_idle_timeout_s <= 0:
            raise ConfigError("DUST_API_MAX_CONNECTIONS must be >= 1 and DUST_API_IDLE_TIMEOUT_S > 0")
        if s.max_message_bytes < 64 * 1024:
            raise ConfigError("DUST_MAX_MESSAGE_BYTES must be at least 65536")
        if s.max_urls_per_site < 0:
            raise ConfigError("DUST_MAX_URLS_PER_SITE must be >= 0 (0 = no cap)")
        if s.validator_fetches_per_hour < 1 or s.undecided_retry_s <= 0:
            raise ConfigError("DUST_VALIDATOR_FETCHES_PER_HOUR must be >= 1 and DUST_UNDECIDED_RETRY_S > 0")
        if s.max_version_skew_s < 0:
            raise ConfigError("DUST_MAX_VERSION_SKEW_S must be >= 0")
        s.public_keys  # noqa: B018 - a malformed DUST_TRUSTED_KEYS is an error at start, not at the first set
        return s


#: the fields whose variable may say "auto": their default, computed for this machine
AUTO_FIELDS = ("parse_processes", "window_processes")


def auto_parse_processes() -> int:
    """DUST_PARSE_PROCESSES's default: one parser process when this process may run on two CPUs or
    more (the parse of a group then overlaps the state work of the one before it), else none.  The
    CPUs are those it may run on, fewer when a cgroup's quota says so (a container's ``--cpus``)."""
    try:
        cpus: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, quota)
    return 1 if cpus >= 2 else 0


def auto_window_processes() -> int:
    """DUST_WINDOW_PROCESSES's default: two where this process may run on two CPUs or more (as
    :func:`auto_parse_processes` counts them), else one."""
    return 2 if auto_parse_processes() else 1


def cgroup_cpu_quota(path: Path = Path("/sys/fs/cgroup/cpu.max")) -> float | None:
    """The CPUs a cgroup v2 quota allows this process (``cpu.max``: "quota period", "max" for none),
    None without one."""
    try:
        quota, period = path.read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def read_sites(path: Path) -> dict[str, SiteConfig]:
    """The sites file at ``path``, parsed (core/validation/siteconfig.py); ConfigError when it is missing or malformed."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no such sites file: {path}")
    return parse_sites(path.read_bytes(), str(path))


def read_signing_key(path: Path):
    """The Ed25519 private key in the PEM file at ``path`` (core/model/signing.py); ConfigError otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no such signing key file: {path}")
    return load_private_key(path.read_bytes())


def _convert(name: str, raw: str, default: object) -> object:
    try:
        if isinstance(default, bool):
            return raw.lower() in ("1", "true", "yes", "on")
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        if isinstance(default, Path) or name in ("validator_sites", "sign_key_file", "trusted_keys_file"):
            return Path(raw)
        return raw
    except ValueError:
        raise ConfigError(f"{PREFIX}{name.upper()}={raw!r} is not a valid {type(default).__name__}") from None

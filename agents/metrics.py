"""Prometheus metrics of a worker (``GET /metrics``), in one registry per process.

The counters and gauges a dashboard of the worker shows:

| metric | labels | what |
|---|---|---|
| dust_lines_in_total | | log lines received on the raw topic |
| dust_unique_urls_total | | URLs seen for the first time (per site) |
| dust_candidate_sets_total / dust_candidates_total | | candidate sets emitted / likely rules in them |
| dust_validations_total | verdict (valid, invalid, undecided) | rule verdicts of validation rounds |
| dust_fetches_total | outcome (ok, timeout, status_404, soft_error, refused_*...) | validator fetches |
| dust_validation_rounds_skipped_total | why (decided, fetch_budget) | candidate sets that started no round: unchanged and every verdict still holding, or the site's hourly fetch budget spent |
| dust_validator_fetch_budget_left | site | fetches the site may still make in the coming hour (DUST_VALIDATOR_FETCHES_PER_HOUR) |
| dust_candidate_sets_unchanged_total | | windows not sent: their candidates and log counts equal the last set sent (listed URLs alone start no round) |
| dust_rules_published_total | | rule-set versions (and tombstones) published |
| dust_listed_urls_sent_total | source (frontier, validator-links) | URLs sent to the raw topic as listed URLs of their site: the frontier's (agents/canonizer.py), the links of the validator's fetched pages (agents/listedlinks.py) |
| dust_rule_set_updates_total / dust_rule_sets | | rule sets applied by this worker / sites it holds |
| dust_canonizations_total | source (frontier, api) | URLs canonicalized |
| dust_duplicates_skipped_total | | frontier URLs whose canonical URL was already seen |
| dust_rejects_total | reason | rejected messages and lines |
| dust_rule_sets_rejected_total | reason | rules-topic records skipped (bad JSON, non-finite numbers, deep nesting, a rule set the rule book refuses...) |
| dust_api_rejects_total | reason | API requests refused (bad_json, too_deep, bad_url_char, body_timeout, unauthorized, internal_error...) |
| dust_urls_over_cap_total | | records of new URLs not tracked: their site holds DUST_MAX_URLS_PER_SITE URLs |
| dust_partition_rebuilds_total / dust_rebuild_urls_total | | partition states rebuilt from the changelog / URLs loaded by them |
| dust_rebuild_pending_urls | | URLs still to load by the rebuilds in progress (0: none) |
| dust_send_failures_total | topic, reason | records not sent: refused by the producer or the broker (reason: the error's class), or too large even when trimmed (`too_large`); counted, logged, never a crash |
| dust_agent_crashes_total | agent | agent crashes (Faust restarts the agent) |
| dust_healthy | | 1 when /healthz answers 200 (agents/health.py), else 0 |
| dust_event_loop_lag_max_seconds / dust_event_loop_stalls_total | | largest event-loop delay seen / delays over 1 s |
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, disable_created_metrics, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
disable_created_metrics()  # counters only, no *_created series (a process-wide switch of prometheus-client)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.lines_in = Counter("dust_lines_in", "Log lines received", registry=r)
        self.unique_urls = Counter("dust_unique_urls", "URLs seen for the first time", registry=r)
        self.candidate_sets = Counter("dust_candidate_sets", "Candidate sets emitted", registry=r)
        self.candidates = Counter("dust_candidates", "Likely rules emitted in candidate sets", registry=r)
        self.validations = Counter("dust_validations", "Rule verdicts", ["verdict"], registry=r)
        self.fetches = Counter("dust_fetches", "Validator fetches by outcome", ["outcome"], registry=r)
        self.rounds_skipped = Counter("dust_validation_rounds_skipped", "Candidate sets that started no validation "
                                      "round, by why (decided: unchanged, no verdict expired; fetch_budget)",
                                      ["why"], registry=r)
        self.fetch_budget_left = Gauge("dust_validator_fetch_budget_left", "Fetches a site may still make in the "
                                       "coming hour (DUST_VALIDATOR_FETCHES_PER_HOUR)", ["site"], registry=r)
        self.candidate_sets_unchanged = Counter("dust_candidate_sets_unchanged", "Windows not sent: their candidates "
                                                "and log counts equal the last set sent", registry=r)
        self.rules_published = Counter("dust_rules_published", "Rule-set versions and tombstones published", registry=r)
        self.listed_urls_sent = Counter("dust_listed_urls_sent", "URLs sent to the raw topic as listed URLs, by source",
                                        ["source"], registry=r)
        self.rule_set_updates = Counter("dust_rule_set_updates", "Rule sets applied by this worker", registry=r)
        self.rule_sets = Gauge("dust_rule_sets", "Sites with a current rule set in this worker", registry=r)
        self.canonizations = Counter("dust_canonizations", "URLs canonicalized", ["source"], registry=r)
        self.duplicates_skipped = Counter("dust_duplicates_skipped", "Frontier URLs already seen", registry=r)
        self.rejects = Counter("dust_rejects", "Rejected messages and lines", ["reason"], registry=r)
        self.rule_sets_rejected = Counter("dust_rule_sets_rejected", "Rules-topic records skipped, by reason",
                                          ["reason"], registry=r)
        self.api_rejects = Counter("dust_api_rejects", "API requests refused, by reason", ["reason"], registry=r)
        # bounded cost and health
        self.urls_over_cap = Counter("dust_urls_over_cap", "Records of new URLs not tracked: the site holds "
                                     "DUST_MAX_URLS_PER_SITE URLs", registry=r)
        self.rebuilds = Counter("dust_partition_rebuilds", "Partition states rebuilt from the changelog", registry=r)
        self.rebuild_urls = Counter("dust_rebuild_urls", "URLs loaded by partition rebuilds", registry=r)
        self.rebuild_pending = Gauge("dust_rebuild_pending_urls", "URLs still to load by rebuilds in progress", registry=r)
        self.send_failures = Counter("dust_send_failures", "Records not sent, by topic and reason",
                                     ["topic", "reason"], registry=r)
        self.agent_crashes = Counter("dust_agent_crashes", "Agent crashes", ["agent"], registry=r)
        self.healthy = Gauge("dust_healthy", "1 when /healthz answers 200", registry=r)
        self.loop_lag_max = Gauge("dust_event_loop_lag_max_seconds", "Largest event-loop delay seen", registry=r)
        self.loop_stalls = Counter("dust_event_loop_stalls", "Event-loop delays over 1 s", registry=r)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

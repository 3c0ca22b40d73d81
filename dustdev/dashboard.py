"""The dashboard's version log wired onto a rules follower after it was built, for the tests that
build one without the hook (the worker builds it with the hook: agents/context.py)."""

from __future__ import annotations

from dustbuster.agents.dashboard_feed import recording_versions
from dustbuster.agents.dashboard_state import VersionLog
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.stream.rulesview import TopicFollower


def record_versions(follower: TopicFollower, book: RuleBook, versions: VersionLog) -> None:
    """Make ``follower`` (built without the hook) write its updates to ``versions`` too
    (:func:`~dustbuster.agents.dashboard_feed.recording_versions`); nothing when its callback
    writes to ``versions`` already."""
    if getattr(follower.on_update, "versions", None) is versions:
        return
    follower.on_update = recording_versions(follower.on_update, book, versions)

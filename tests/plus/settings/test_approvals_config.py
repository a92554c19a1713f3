"""The `[approvals]` table: defaults off, every key read, bad values named."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_plus.core.approvals.settings import ApprovalSettings, ReviewerSettings, RouteRule, Rule
from acp_plus.settings.config import build
from acp_plus.settings.config_schema import ConfigError


def test_absent_table_is_every_feature_off() -> None:
    config = build({}, Path("/h"))
    assert config.approvals == ApprovalSettings() and not config.approvals.active


def test_table_is_read_with_the_plugins_defaults() -> None:
    config = build(
        {
            "approvals": {
                "rules": [{"action": "deny", "reason": "r", "tool": "bash", "arguments": "rm"}],
                "backups": {"enabled": True},
                "ledger": True,
                "reviewer": {"enabled": True, "routes": [{"tool": "bash", "route": "human"}]},
            }
        },
        Path("/h"),
    )
    settings = config.approvals
    assert settings.rules == (Rule("deny", "r", tool="bash", arguments="rm"),)
    assert settings.backups.enabled and settings.backups.max_bytes == 10 * 1024 * 1024
    reviewer = settings.reviewer
    assert reviewer.routes == (RouteRule("bash", "human"),)
    assert (reviewer.timeout, reviewer.max_reviews_per_turn, reviewer.max_failures_per_turn) == (
        120.0,
        20,
        10,
    )
    assert (
        reviewer.breaker_consecutive,
        reviewer.breaker_window_denials,
        reviewer.breaker_window,
    ) == (
        3,
        10,
        50,
    )
    assert (reviewer.reason_cap, reviewer.override_seconds) == (2000, 300.0)
    assert reviewer == ReviewerSettings(enabled=True, routes=reviewer.routes)
    assert config.to_json()["approvals"]["ledger"] is True


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"rules": [{"action": "allow", "reason": "r"}]},
            "approvals.rules[0].action: 'allow' is not one of deny, ask",
        ),
        ({"rules": [{"action": "deny"}]}, "approvals.rules[0]: missing required key 'reason'"),
        (
            {"rules": [{"action": "deny", "reason": "r", "arguments": "("}]},
            "approvals.rules[0].arguments: not a regular expression",
        ),
        (
            {"reviewer": {"provider": "p"}},
            "approvals.reviewer: provider and model must be set together",
        ),
        (
            {"reviewer": {"on_failure": "allow"}},
            "approvals.reviewer.on_failure: 'allow' is not one of human, deny",
        ),
        ({"backups": {"size": 1}}, "approvals.backups.size: unknown key"),
    ],
)
def test_bad_values_are_named(table: dict[str, object], message: str) -> None:
    with pytest.raises(
        ConfigError, match=message.replace("(", r"\(").replace("[", r"\[").replace("]", r"\]")
    ):
        build({"approvals": table}, Path("/h"))

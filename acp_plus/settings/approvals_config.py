"""`[approvals]` -> the core's frozen `ApprovalSettings` (pure).

The table passed `approvals_schema.APPROVALS_SCHEMA` already; this adds the checks a
schema cannot say (a rule's regular expression compiles, provider and model go together).
"""

from __future__ import annotations

import re
from typing import Any

from acp_plus.core.approvals.settings import (
    ApprovalSettings,
    BackupSettings,
    ReviewerSettings,
    RouteRule,
    Rule,
)
from acp_plus.settings.config_schema import ConfigError


def _rule(raw: dict[str, Any], where: str) -> Rule:
    pattern = raw.get("arguments")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}.arguments: not a regular expression: {exc}") from None
    return Rule(
        action=raw["action"],
        reason=raw["reason"],
        tool=raw.get("tool", "*"),
        path=raw.get("path"),
        arguments=pattern,
        name=raw.get("name", ""),
    )


def build_approvals(raw: dict[str, Any]) -> ApprovalSettings:
    """The settings of a validated `[approvals]` table (absent keys take the defaults)."""
    rules = tuple(_rule(r, f"approvals.rules[{i}]") for i, r in enumerate(raw.get("rules", [])))
    backups = BackupSettings(**raw.get("backups", {}))
    table = dict(raw.get("reviewer", {}))
    if ("provider" in table) != ("model" in table):
        raise ConfigError("approvals.reviewer: provider and model must be set together")
    table["routes"] = tuple(RouteRule(r["tool"], r["route"]) for r in table.get("routes", []))
    for key in ("timeout", "override_seconds"):
        if key in table:
            table[key] = float(table[key])
    reviewer = ReviewerSettings(**table)
    return ApprovalSettings(rules, backups, bool(raw.get("ledger", False)), reviewer)

"""The `[approvals]` table's part of the configuration schema (pure data).

`config_schema.SCHEMA` includes it under `approvals`; `approvals_config.py` builds the
core's `ApprovalSettings` from a table that passed. Every default here is the core's
(`acp_plus/core/approvals/settings.py`); docs/approvals.md explains each key.
"""

from __future__ import annotations

from typing import Any

_POLICY = {"type": "string", "enum": ["human", "deny"], "default": "human"}
_ROUTE = {"type": "string", "enum": ["ai", "human", "never"]}

_RULE: dict[str, Any] = {
    "type": "object",
    "required": ["action", "reason"],
    "additionalProperties": False,
    "properties": {
        "action": {"type": "string", "enum": ["deny", "ask"]},
        "reason": {
            "type": "string",
            "minLength": 1,
            "description": "Shown as `Error: <reason>` (deny) or as the question (ask).",
        },
        "tool": {"type": "string", "minLength": 1, "default": "*", "description": "Glob."},
        "path": {"type": "string", "minLength": 1, "description": "Glob on path arguments."},
        "arguments": {
            "type": "string",
            "minLength": 1,
            "description": "Regular expression searched in the arguments' string values.",
        },
        "name": {"type": "string", "minLength": 1, "description": "The ledger's name."},
    },
}

_BACKUPS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enabled": {"type": "boolean", "default": False},
        "max_bytes": {"type": "integer", "minimum": 0, "default": 10485760},
        "on_failure": {"type": "string", "enum": ["refuse", "continue"], "default": "refuse"},
    },
}

_REVIEWER: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enabled": {"type": "boolean", "default": False},
        "provider": {"type": "string", "minLength": 1},
        "model": {"type": "string", "minLength": 1},
        "default_route": {**_ROUTE, "default": "ai"},
        "routes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool", "route"],
                "additionalProperties": False,
                "properties": {"tool": {"type": "string", "minLength": 1}, "route": _ROUTE},
            },
        },
        "risk_cap": {
            "type": "string",
            "enum": ["low", "medium", "high", "critical"],
            "default": "medium",
        },
        "on_high_risk": _POLICY,
        "on_uncertain": _POLICY,
        "on_failure": _POLICY,
        "on_budget": _POLICY,
        "timeout": {"type": "number", "exclusiveMinimum": 0, "default": 120},
        "max_reviews_per_turn": {"type": "integer", "minimum": 0, "default": 20},
        "max_failures_per_turn": {"type": "integer", "minimum": 0, "default": 10},
        "breaker_consecutive": {"type": "integer", "minimum": 1, "default": 3},
        "breaker_window": {"type": "integer", "minimum": 1, "default": 50},
        "breaker_window_denials": {"type": "integer", "minimum": 1, "default": 10},
        "on_breaker": {"type": "string", "enum": ["stop", "human", "deny"], "default": "human"},
        "reason_cap": {"type": "integer", "minimum": 1, "default": 2000},
        "evidence_cap": {"type": "integer", "minimum": 256, "default": 8000},
        "override_seconds": {"type": "number", "exclusiveMinimum": 0, "default": 300},
    },
}

APPROVALS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "description": "Approval features of the plus profile (docs/approvals.md); all off by "
    "default, and ignored in the native profile.",
    "properties": {
        "rules": {"type": "array", "items": _RULE},
        "backups": _BACKUPS,
        "ledger": {"type": "boolean", "default": False},
        "reviewer": _REVIEWER,
    },
}

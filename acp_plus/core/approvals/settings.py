"""The approval features' settings as plain frozen data (pure), with the defaults.

`acp_plus/settings/approvals_config.py` builds them from the `[approvals]` table of the
configuration; everything here is off by default, so a configuration without that table
behaves exactly as before (docs/approvals.md lists every key).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

RuleAction = Literal["deny", "ask"]
Route = Literal["ai", "human", "never"]
FallbackPolicy = Literal["human", "deny"]
BreakerPolicy = Literal["stop", "human", "deny"]
RISKS: tuple[str, ...] = ("low", "medium", "high", "critical")


@dataclass(frozen=True)
class Rule:
    """One guard rule: every condition given must hold for it to match."""

    action: RuleAction
    reason: str
    tool: str = "*"
    """A glob (fnmatch) on the tool's name, `mcp__<server>__<tool>` for MCP tools."""
    path: str | None = None
    """A glob on a path argument, workspace-relative or absolute (`*` crosses `/`)."""
    arguments: str | None = None
    """A regular expression searched in every string value of the arguments."""
    name: str = ""
    """How the ledger names the rule; `rule <n>` (1-based) when empty."""


@dataclass(frozen=True)
class BackupSettings:
    """Backups of the files `write` and `edit` change."""

    enabled: bool = False
    max_bytes: int = 10 * 1024 * 1024
    """A larger file is not saved; `on_failure` decides what the call does then."""
    on_failure: Literal["refuse", "continue"] = "refuse"
    """`refuse`: the tool does not run when its file cannot be saved; `continue`: it runs
    unprotected, and the result says so."""


@dataclass(frozen=True)
class RouteRule:
    """A reviewer routing rule: questions about matching tools go to `route`."""

    tool: str
    route: Route


@dataclass(frozen=True)
class ReviewerSettings:
    """The optional second model that decides approval questions."""

    enabled: bool = False
    provider: str | None = None
    """The reviewer's own route; None: the session's."""
    model: str | None = None
    default_route: Route = "ai"
    routes: tuple[RouteRule, ...] = ()
    risk_cap: str = "medium"
    """The highest risk the reviewer may allow; an allow above it follows `on_high_risk`."""
    on_high_risk: FallbackPolicy = "human"
    on_uncertain: FallbackPolicy = "human"
    on_failure: FallbackPolicy = "human"
    on_budget: FallbackPolicy = "human"
    timeout: float = 120.0
    max_reviews_per_turn: int = 20
    max_failures_per_turn: int = 10
    breaker_consecutive: int = 3
    breaker_window: int = 50
    breaker_window_denials: int = 10
    on_breaker: BreakerPolicy = "human"
    reason_cap: int = 2000
    evidence_cap: int = 8000
    """Characters of the evidence pack's arguments and context, after redaction."""
    override_seconds: float = 300.0


@dataclass(frozen=True)
class ApprovalSettings:
    """Guard rules, backups, the ledger's commands and plan tool, and the reviewer."""

    rules: tuple[Rule, ...] = ()
    backups: BackupSettings = field(default_factory=BackupSettings)
    ledger: bool = False
    """`/approvals` and the plan tool `request_approval_plan` (with its grants)."""
    reviewer: ReviewerSettings = field(default_factory=ReviewerSettings)

    @property
    def active(self) -> bool:
        """Whether any approval feature is on (else nothing of this package is used)."""
        return bool(self.rules) or self.backups.enabled or self.ledger or self.reviewer.enabled

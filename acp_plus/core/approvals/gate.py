"""One session's approval gate: guard rules, the decision chain with its sources, backups.

The loop (`core/agent.py`) asks the gate three things about every tool call, when the
session has one (only when an approval feature is configured, `settings.active`):
`screen` before anything else (a guard `deny` ends the call there, an `ask` adds an
approval question), `decide` for each question (grants, the reviewer, then the
session's chain ending with the client), and `run` around the tool (a backup of the
file `write` / `edit` change). Every decision is committed with its source, so the
ledger (`ledger.py`) can list it and a loaded session keeps its grants.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_plus.core import events as ev
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest, backups, denied_text
from acp_plus.core.approvals.rules import first_match
from acp_plus.core.approvals.settings import ApprovalSettings
from acp_plus.core.sandbox import resolve_path
from acp_plus.core.tools.base import ABORTED

if TYPE_CHECKING:
    from acp_plus.core.tools.base import Tool, ToolContext, ToolResult

Commit = Callable[[dict[str, Any]], dict[str, Any]]
Events = Callable[[], list[dict[str, Any]]]
Deciders = list[Callable[[ApprovalRequest, int], Awaitable["Decision | None"]]]


@dataclass(frozen=True)
class Screen:
    """What the guard said: `error` (a deny: the call's failed result), else the
    approval question's `reason` (None: nothing to ask) and the ask rule's name."""

    error: str | None = None
    reason: str | None = None
    rule: str | None = None


@dataclass(frozen=True)
class Decision:
    """An approval's outcome, the facts the ledger logs with it (`source` first), and
    the text the model gets instead of the standard refusal (`message`)."""

    outcome: ev.ApprovalOutcome
    facts: dict[str, Any] = field(default_factory=dict)
    message: str | None = None

    def refusal(self, name: str) -> str:
        """The failed tool result of a refused call."""
        return self.message or denied_text(self.outcome, name)


class Gate:
    """The approval features of one live session."""

    def __init__(
        self,
        settings: ApprovalSettings,
        commit: Commit,
        events: Events,
        cwd: Path,
        backup_dir: Path,
    ) -> None:
        self.settings = settings
        self.commit = commit
        self.events = events
        self.cwd = cwd
        self.backup_dir = backup_dir
        self.stopped_turn: int | None = None
        """A turn a decider asked to stop (the reviewer's breaker, `on_breaker = "stop"`)."""
        self.deciders: Deciders = []
        """Asked in order before the session's chain (grants, overrides, the reviewer);
        each answers a `Decision` or None to pass (`features/approvals.py` adds them)."""

    # -- the guard -----------------------------------------------------------------------

    def screen(self, turn: int, call_id: str, tool: str, args: Any) -> Screen:
        """Apply the guard rules to a call (a deny is committed here, with its rule)."""
        match = first_match(self.settings.rules, tool, args, self.cwd, resolve_path)
        if match is None:
            return Screen()
        if match.action == "deny":
            decided = ev.approval_decided(turn, call_id, "rejected")
            self.commit({**decided, "source": "rule", "rule": match.rule, "reason": match.reason})
            return Screen(error=f"Error: {match.reason}")
        return Screen(reason=match.reason, rule=match.rule)

    # -- decisions -----------------------------------------------------------------------

    async def decide(self, request: ApprovalRequest, chain: ApprovalChain, turn: int) -> Decision:
        """The first decider's answer, else the chain's (the client, or a pre-approval)."""
        for decider in self.deciders:
            decision = await decider(request, turn)
            if decision is not None:
                return decision
        return await ask_chain(request, chain)

    def stopped(self, turn: int) -> bool:
        """Whether `turn` must end now (`blocked`) instead of asking the model again."""
        return self.stopped_turn == turn

    # -- backups -------------------------------------------------------------------------

    async def run(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the call, saving the file of a `write` / `edit` first (when backups are on)."""
        from acp_plus.core.tools.base import ToolResult

        conf = self.settings.backups
        if not conf.enabled or tool.name not in backups.FILE_TOOLS:
            return await tool.run(args, ctx)
        given = args.get("file_path")
        if not isinstance(given, str):
            return await tool.run(args, ctx)  # the tool refuses it itself
        path = resolve_path(given, ctx.cwd)
        n = backups.next_number(self.events())
        try:
            pending = backups.save(path, self.backup_dir, n, conf.max_bytes)
        except backups.BackupFailed as exc:
            if conf.on_failure == "refuse":
                text = f"Error: no backup of {given} could be made ({exc}); {tool.name} was not run"
                return ToolResult.text(text, is_error=True)
            result = await tool.run(args, ctx)
            note = {
                "type": "text",
                "text": f"Note: {given} had no backup ({exc}); /undo cannot restore it.",
            }
            return ToolResult([*result.content, note], result.is_error)
        try:
            return await tool.run(args, ctx)
        finally:
            self._settle(pending, ctx, tool.name)

    def _settle(self, pending: backups.Pending, ctx: ToolContext, name: str) -> None:
        # Committed whenever the file changed, even when the call failed or was cancelled
        # after writing: what is on disk is what /undo must be able to take back.
        event = backups.saved_event(pending, ctx.turn, ctx.call_id, name)
        if event["after"] == pending.before and pending.blob is not None:
            backups.discard(pending)
        elif event["after"] is None and pending.blob is None:
            return  # nothing was created
        else:
            self.commit(event)


async def approve(
    commit: Callable[[Any], Any],
    gate: Gate | None,
    chain: ApprovalChain,
    request: ApprovalRequest,
    turn: int,
    rule: str | None,
) -> Decision:
    """Ask about one call and log it: `approval/asked` (with the guard rule that asks),
    the decision, and, when the turn is cancelled while the question is pending,
    `approval/decided{cancelled}` with native's failed result for a call never run."""
    asked = ev.approval_asked(turn, request.call_id, request.tool, request.reason)
    commit(asked if rule is None else {**asked, "rule": rule})
    try:
        decision = await decide(gate, request, chain, turn)
    except asyncio.CancelledError:
        commit(ev.approval_decided(turn, request.call_id, "cancelled"))
        commit(ev.tool_result(turn, request.call_id, [ev.text_block(ABORTED)], True))
        raise
    commit({**ev.approval_decided(turn, request.call_id, decision.outcome), **decision.facts})
    return decision


async def decide(
    gate: Gate | None, request: ApprovalRequest, chain: ApprovalChain, turn: int
) -> Decision:
    """The session's decision: through its gate when it has one, else the chain alone."""
    if gate is not None:
        return await gate.decide(request, chain, turn)
    return Decision(await chain.decide(request))


async def ask_chain(request: ApprovalRequest, chain: ApprovalChain) -> Decision:
    """The session chain's outcome, with which responder gave it: the last is the client."""
    outcome = await chain.decide(request)
    responders = chain.responders
    if chain.answered_by is None or not responders:
        source = "none"
    elif chain.answered_by is responders[-1]:
        source = "client"
    else:
        source = "pre-approval"
    return Decision(outcome, {"source": source})

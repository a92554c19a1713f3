"""The approval features of the plus profile: a session's gate, its commands, the plan tool.

Only when `[approvals]` configures something (`ApprovalSettings.active`) and the profile
is `plus`; otherwise nothing here runs and no command or tool is added, so the wire is
what it was. The decisions are the core's (`acp_plus/core/approvals/`); this module
builds one session's `Gate`, answers `/backups`, `/undo`, `/approvals` and (with the
reviewer) `/approval-review`, and offers the model `request_approval_plan`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_plus.core import events as ev
from acp_plus.core.approvals import ApprovalRequest, backups, ledger
from acp_plus.core.approvals.gate import Decision, Gate, ask_chain
from acp_plus.core.approvals.grants import grant_event, grants, matching, plan_items
from acp_plus.core.approvals.settings import ApprovalSettings
from acp_plus.core.tools.base import ToolContext, ToolResult
from acp_plus.features.approval_review import SessionReviewer
from acp_plus.features.commands import Command, CommandLine

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent

PLAN_TOOL = "request_approval_plan"
PLAN_DESCRIPTION = (
    "Ask the user to approve a plan of actions up front. Each item names a tool (a glob "
    "such as `write`), optionally a path glob (`docs/*`), and what it is for. The user "
    "approves or rejects each item; approved items become grants for this session, so "
    "matching calls later run without asking again. Rejected items still need approval "
    "one call at a time. Guard rules still apply."
)
PLAN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "path": {"type": "string"},
                    "description": {"type": "string"},
                },
                "required": ["tool", "description"],
            },
        }
    },
    "required": ["items"],
}


def commands_for(settings: ApprovalSettings) -> tuple[Command, ...]:
    """The commands the configured approval features add, in the order clients list them."""
    added: list[Command] = []
    if settings.backups.enabled:
        added.append(Command("backups", "List the file backups made before write and edit."))
        added.append(
            Command("undo", "Restore the file of a backup (the latest by default).", hint="n")
        )
    if settings.reviewer.enabled:
        added.append(
            Command(
                "approval-review",
                "Approval review by a second model: on, off, status, approve [n], model.",
                hint="on | off | status | approve [n] | model <provider>/<model>",
            )
        )
    if settings.ledger:
        added.append(
            Command(
                "approvals",
                "List this session's approval decisions and grants (--json for JSON).",
                hint="--json",
            )
        )
    return tuple(added)


def backup_dir(home: Path, session_id: str) -> Path:
    """Where a session's backups are kept."""
    return home / "backups" / session_id


def make_gate(settings: ApprovalSettings, agent: Agent, home: Path) -> Gate:
    """The gate of a session whose agent is `agent` (grants first among the deciders)."""
    gate = Gate(settings, agent.commit, agent.log.events, agent.cwd, backup_dir(home, agent.log.id))
    if settings.ledger:

        async def by_grant(request: ApprovalRequest, turn: int) -> Decision | None:
            grant = matching(grants(agent.log.events()), request.tool, request.arguments, agent.cwd)
            if grant is None:
                return None
            return Decision("allowed-once", {"source": "grant", "grant": grant.n})

        gate.deciders.append(by_grant)
    return gate


def make_reviewer(settings: ApprovalSettings, agent: Agent, gate: Gate) -> SessionReviewer:
    """The session's reviewer, asked after the grants."""
    reviewer = SessionReviewer(settings.reviewer, agent, gate)
    gate.deciders.append(reviewer.decide)
    return reviewer


def answer(agent: Agent, line: CommandLine) -> str:
    """What `/backups`, `/undo` and `/approvals` say (and, for `/undo`, do)."""
    events = agent.log.events()
    if line.name == "approvals":
        wants_json = line.args.strip() == "--json"
        return ledger.as_json(events) if wants_json else ledger.as_text(events)
    found = backups.entries(events)
    if line.name == "backups":
        return backups.list_text(found, agent.cwd)
    entry = backups.pick(found, line.args)
    if isinstance(entry, str):
        return f"{entry}\n{backups.NOT_COVERED}"
    problem = backups.restore(entry, backup_dir_of(agent), agent.cwd)
    if problem is not None:
        return f"{problem}\n{backups.NOT_COVERED}"
    agent.commit(backups.restored_event(entry))
    return backups.undone_text(entry, agent.cwd)


def backup_dir_of(agent: Agent) -> Path:
    """The backup directory of the session `agent` runs (its gate's)."""
    assert agent.gate is not None
    return agent.gate.backup_dir


class ApprovalPlan:
    """`request_approval_plan`: the user approves a plan's items one by one (via the
    session's approval chain, so the client gets one permission request per item)."""

    name = PLAN_TOOL
    description = PLAN_DESCRIPTION
    parameters = PLAN_PARAMETERS

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        """A callable giving the session's agent (attached after the tools are built)."""

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """The items are what gets approved; the call itself asks nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Ask for each item; commit a grant for each approved one."""
        items = plan_items(args)
        if isinstance(items, str):
            return ToolResult.text(f"{PLAN_TOOL}: {items}", is_error=True)
        agent: Agent = self._agent()
        first = len(grants(agent.log.events())) + 1
        approved: list[str] = []
        rejected: list[str] = []
        for i, item in enumerate(items, 1):
            scope = f" on {item['path']}" if item.get("path") else ""
            reason = f"plan item {i} of {len(items)}: {item['tool']}{scope}: {item['description']}"
            asked = ev.approval_asked(ctx.turn, ctx.call_id, PLAN_TOOL, reason)
            agent.commit({**asked, "planItem": i})
            request = ApprovalRequest(ctx.session_id, ctx.call_id, item["tool"], item, reason)
            decision = await ask_chain(request, agent.approvals)
            decided = ev.approval_decided(ctx.turn, ctx.call_id, decision.outcome)
            agent.commit({**decided, **decision.facts, "planItem": i})
            if decision.outcome == "allowed-once":
                agent.commit(grant_event(first + len(approved), ctx.call_id, item))
                approved.append(str(i))
            else:
                rejected.append(str(i))
        text = (
            f"Approved items: {', '.join(approved) or 'none'}. "
            f"Rejected items: {', '.join(rejected) or 'none'}. "
            "Approved items are grants for this session: matching calls run without asking. "
            "Do not retry a rejected item by other means; ask the user instead."
        )
        return ToolResult.text(text)

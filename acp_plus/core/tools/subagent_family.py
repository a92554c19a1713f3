"""The `subagent` family as native 0.2.1-rc.2 mounts it: `subagent`, `subagent_fork`,
`list_agents`, `send_message`, `interrupt_agent`, and the system-prompt paragraph.

Definitions and result texts are native's, word for word (its tool-subagent and
tool-subagent-control plugins); the children themselves are `core/subagents.py`'s.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar

from acp_plus.core.subagents import SubagentError, Subagents
from acp_plus.core.tools.answering import AnsweringTool
from acp_plus.core.tools.base import Tool, ToolContext

DELEGATION_TOOLS = ("subagent", "subagent_fork")


def subagent_guidance(offered: Collection[str]) -> Sequence[str]:
    """Native's `tool:subagent` section: the delegation tools offered, sorted, or none."""
    visible = sorted(name for name in DELEGATION_TOOLS if name in offered)
    if not visible or visible[0] != "subagent":
        return ()
    names = " or ".join(f"`{name}`" for name in visible)
    return (
        f"Start independent delegations with {names} together in one assistant message and "
        "continue useful work while they run.",
    )


_STARTS = (
    " This tool starts an independently managed subagent and immediately returns its id. "
    "The runtime notifies you when it finishes. The child reports results with "
    "`send_message`; use `send_message` to steer it while running or continue its "
    "conversation after it finishes."
)
_FRESH = (
    "Delegate a self-contained task to a subagent (a separate agent that works in its own "
    "context) to offload focused, independent work \u2014 research, a scoped implementation, "
    "an analysis \u2014 so it does not consume this conversation's context. The subagent "
    "returns its result, not its intermediate steps."
)
_FORK = (
    "Delegate a task to a subagent that inherits this conversation: a child agent seeded "
    "with all completed turns so far (it does not see the current in-flight turn). Use this "
    "when the subtask builds on this conversation's context \u2014 a follow-up analysis, a "
    "review, a continuation \u2014 without consuming this conversation's context for the work "
    "itself. You receive its result, not its intermediate steps."
)
_FRESH_PROMPT = (
    "The complete, self-contained task for the subagent. It does not share this "
    "conversation's context, so include everything it needs."
)
_FORK_PROMPT = (
    "The task for the subagent. It already sees this conversation's completed turns, so "
    "build on them freely and state only what is new."
)


def _delegation_parameters(prompt: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "cwd": {
                "type": "string",
                "description": "Initial child working directory. Relative paths use your "
                "current directory; omitted inherits it. Later directory changes in either "
                "agent are independent.",
            },
            "description": {
                "type": "string",
                "description": "A short (3-5 word) description of the delegated task, for display.",
            },
            "prompt": {"type": "string", "description": prompt},
        },
        "required": ["description", "prompt"],
    }


class _AgentTool(AnsweringTool):
    """What the five share: the children; the service's refusal is the call's error."""

    refusals = (SubagentError,)

    def __init__(self, agents: Subagents) -> None:
        self.agents = agents


class SubagentTool(_AgentTool):
    """Start a fresh child on a self-contained task; answers with its id at once."""

    name = "subagent"
    concurrency_safe = True  # native runs it beside its neighbours (tool_schedule.py)
    description = _FRESH + _STARTS
    parameters: ClassVar[dict[str, Any]] = _delegation_parameters(_FRESH_PROMPT)
    fork = False

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        child = await self.agents.start(
            ctx.session_id, args["description"], args["prompt"], fork=self.fork, cwd=args.get("cwd")
        )
        return f"started subagent {child}"


class SubagentForkTool(SubagentTool):
    """Start a child seeded with the conversation's completed turns."""

    name = "subagent_fork"
    description = _FORK + _STARTS
    parameters: ClassVar[dict[str, Any]] = _delegation_parameters(_FORK_PROMPT)
    fork = True


class ListAgentsTool(_AgentTool):
    """The caller's children (or every descendant), with their status."""

    name = "list_agents"
    description = (
        "List subagents you started, with their ids, labels, and status. running means it is "
        "working; inactive means it is not currently working. You will be notified when a "
        "subagent finishes; there is no need to keep checking its status. Use send_message "
        "to continue the conversation."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "scope": {
                "type": "string",
                "enum": ["children", "descendants"],
                "description": "children (default) lists direct children, which accept "
                "send_message in any status. descendants lists the whole tree below you with "
                "each entry's parent session id and depth; entries deeper than 1 accept only "
                "interrupt_agent.",
            }
        },
    }

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        deep = args.get("scope") == "descendants"
        rows = self.agents.listing(ctx.session_id, descendants=deep)
        if not rows:
            return "(no subagents)"
        lines = []
        for row in rows:
            at = f" parent={row.parent} depth={row.depth}" if deep else ""
            lines.append(f"{row.id} [{row.status}]{at} \u2014 {row.label}")
        return "\n".join(lines)


class SendMessageTool(_AgentTool):
    """A message to a child (or, from a child, to its parent)."""

    name = "send_message"
    description = (
        "Send a message to an agent. A working agent receives it at its next step; an idle "
        "agent starts a new turn with it. Returns delivery confirmation, not the agent's "
        "answer."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "agent_id": {
                "type": "string",
                "description": "The agent id of your direct continuable child, or your direct "
                "parent when you are a resident continuable child.",
            },
            "message": {"type": "string", "description": "The message to deliver to the agent."},
        },
        "required": ["agent_id", "message"],
    }

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.agents.send(ctx.session_id, args["agent_id"], args["message"])
        return f"message delivered to agent {args['agent_id']}"


class InterruptAgentTool(_AgentTool):
    """Stop a descendant's current turn; returns at once."""

    name = "interrupt_agent"
    description = (
        "Ask a subagent to stop its current work. This call returns without waiting for it "
        "to stop. You can continue a local direct child's conversation later with "
        "send_message. External executions stop permanently and cannot receive follow-ups. "
        "Subagents it started will keep running."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "agent_id": {
                "type": "string",
                "description": "The id of an agent created under you: your direct child or a "
                "deeper descendant.",
            }
        },
        "required": ["agent_id"],
    }

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.agents.interrupt(ctx.session_id, args["agent_id"])
        return f"interrupt requested for agent {args['agent_id']}"


def subagent_tools(agents: Subagents) -> list[Tool]:
    """The family's tools over `agents` (the registry sorts them by name for the model)."""
    return [
        SubagentTool(agents),
        SubagentForkTool(agents),
        ListAgentsTool(agents),
        SendMessageTool(agents),
        InterruptAgentTool(agents),
    ]

"""The tool interface and the registry the loop consults.

A tool says up front whether a call needs approval (`approval_reason`, a pure decision
over the arguments and context); the loop then asks the approval chain, logs both
events, and only runs the tool when the answer is `allowed-once`. Keeping the decision
out of `run` means every approval is logged the same way, whatever the tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from acp_plus.core.events import UserMessage
from acp_plus.core.sandbox import SandboxMode


@dataclass(frozen=True)
class ToolResult:
    """What the model sees for a call: content blocks and whether it failed."""

    content: list[dict[str, Any]]
    is_error: bool = False

    @staticmethod
    def text(text: str, is_error: bool = False) -> ToolResult:
        """A result made of one text block."""
        return ToolResult([{"type": "text", "text": text}], is_error)


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about the call it serves."""

    session_id: str
    cwd: Path
    call_id: str
    turn: int
    sandbox: SandboxMode = "workspace-write"
    """The standing sandbox mode. The workspace is `cwd` alone: writes elsewhere (extra
    roots included) ask for an escalation, which a feature may pre-approve (§6.2)."""
    model: str = ""
    """The model of the turn that made the call (`read_image` names it when refusing)."""
    image_input: bool = False
    """Whether that model declares image input: native's `read_image` needs it."""


class Tool(Protocol):
    """A tool the model can call."""

    @property
    def name(self) -> str:
        """The name the model calls it by."""
        ...

    @property
    def description(self) -> str:
        """What the model is told it does."""
        ...

    @property
    def parameters(self) -> dict[str, Any]:
        """JSON Schema of the arguments object."""
        ...

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Why this call needs approval, or None when it may run directly."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the call; cancellation must stop it promptly."""
        ...


ABORTED = "Error: tool call aborted before dispatch"
"""Native's result for a call cancelled before it ran (its approval still pending)."""

ABORTED_TOOL_TEXT = "Error: tool call aborted"
"""Native 0.2.1-rc.2's result for a call cancelled while it ran: its tool registry says
this when the tool's body ends without an error after the abort (a `bash` it killed)."""


def cancelled_text(tool: Tool) -> str:
    """What the model and the client read of `tool`'s call cancelled while it ran.

    A tool whose body fails on the abort gets native's error text for that failure
    instead (its `cancelled_text`): fixture and MCP tools, whose request rejects with
    the turn's abort reason, and `job_output`'s interrupted wait.
    """
    return str(getattr(tool, "cancelled_text", ABORTED_TOOL_TEXT))


class ToolRegistry:
    """Tools by name (`names` in registration order, `specs` in the model's order)."""

    def __init__(self, tools: Iterable[Tool] = ()):
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name is an error."""
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name: {tool.name}")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, if any."""
        return self._tools.get(name)

    @property
    def concluded(self) -> bool:
        """Whether a call ended the turn: it ends after this step (a structured child's
        recorded result, `structured.StructuredTools`)."""
        return False

    def names(self) -> list[str]:
        """Registered names, in order."""
        return list(self._tools)

    async def step_context(
        self,
        events: Sequence[Mapping[str, Any]],
        pending: Sequence[Mapping[str, Any]],
        cwd: Path,
        turn: int,
    ) -> list[UserMessage]:
        """The model context the tools add before a step, in registration order: a tool
        with a `step_context(events, cwd, turn)` method (the `skill` tool: its catalog,
        a user's `/name`) sees the log so far plus the messages `pending` for the step
        (steered), and the session's cwd."""
        seen: list[Mapping[str, Any]] = [*events, *pending]
        notes: list[UserMessage] = []
        for tool in self._tools.values():
            hook = getattr(tool, "step_context", None)
            if hook is not None:
                notes.extend(await hook(seen, cwd, turn))
        return notes

    def specs(self) -> list[dict[str, Any]]:
        """The `tools` array of a model request, in native's order: by name, compared in
        UTF-16 code units as JavaScript's `<` compares them, built-in and fixture tools
        alike (native's system-prompt registry sorts every tool it shows the model)."""
        ordered = sorted(self._tools.values(), key=lambda t: _utf16(t.name))
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in ordered
        ]


def _utf16(name: str) -> bytes:
    # Big-endian UTF-16 bytes compare as their code units do (a name from JSON may hold
    # a lone surrogate, hence surrogatepass).
    return name.encode("utf-16-be", "surrogatepass")

"""The `todo_write` family as native mounts it: the model's task list.

The list replaces the previous one whole; the result counts its items by status.
Native sends the client nothing but the tool call itself (no `plan` update), and adds
no system-prompt paragraph for it.
"""

from __future__ import annotations

from typing import Any

from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult

TODO_GUIDANCE: tuple[str, ...] = ()
"""The system-prompt paragraphs native adds with `todo_write`: none."""

DESCRIPTION = (
    "Record and update a task list to plan multi-step work and show progress; skip it for "
    "trivial single-step tasks. Add one todo per concrete step before you start. While work "
    "remains, keep the todos being worked on `in_progress`, several only when work runs in "
    "parallel. Mark each todo `completed` as soon as it is done."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The COMPLETE task list, replacing any previous list.",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "content": {
                        "type": "string",
                        "description": "What the task is \u2014 a short imperative line.",
                    },
                    "status": {
                        "type": "string",
                        "enum": ["pending", "in_progress", "completed"],
                        "description": "pending (not started) | in_progress (now) | "
                        "completed (done).",
                    },
                },
                "required": ["content", "status"],
            },
        }
    },
    "required": ["todos"],
}


class TodoWriteTool:
    """Replace the session's task list."""

    name = "todo_write"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self) -> None:
        self.lists: dict[str, list[dict[str, Any]]] = {}

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """The task list is the model's own: nothing to ask."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Keep the new list; count it by status."""
        problem = arguments_error(PARAMETERS, args)
        if problem is not None:
            return ToolResult.text(f"Error: {problem}", is_error=True)
        todos: list[dict[str, Any]] = args["todos"]
        self.lists[ctx.session_id] = todos
        count = {status: 0 for status in ("pending", "in_progress", "completed")}
        for todo in todos:
            count[todo["status"]] += 1
        return ToolResult.text(
            f"Updated todo list: {count['pending']} pending, {count['in_progress']} in "
            f"progress, {count['completed']} completed."
        )


def todo_tools() -> list[Tool]:
    """The family's tools: `todo_write`."""
    return [TodoWriteTool()]


__all__ = ["TODO_GUIDANCE", "TodoWriteTool", "todo_tools"]

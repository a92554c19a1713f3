"""The `parity-stream/1` dialect (docs/parity-stream.md), pure parts.

The canonical response already is a parity-stream chunk list, so rendering is one
NDJSON line per chunk. This module also builds the catalog and validates requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.wire import Wire, field_problem, ndjson
from parity.scenario.model import Tool

PROTOCOL = "parity-stream/1"


def problem(body: Any) -> str | None:
    """Why `body` is not a canonical model request, or None."""
    return field_problem(body, "messages", list, "a list")


def tool_call_problem(body: Any) -> str | None:
    """Why `body` is not a `/tools/call` request, or None."""
    return field_problem(body, "name", str, "a string")


def view(body: Mapping[str, Any]) -> RequestView:
    """Side-request view: tools present, `purpose`, texts of system and messages."""
    texts: list[str] = []
    if isinstance(body.get("system"), str):
        texts.append(body["system"])
    for message in body.get("messages", []):
        for block in message.get("content", []) if isinstance(message, Mapping) else []:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                texts.append(block["text"])
    purpose = body.get("purpose")
    return RequestView(
        has_tools=bool(body.get("tools")),
        purpose=purpose if isinstance(purpose, str) else None,
        texts=tuple(texts),
    )


def render(chunks: Sequence[Chunk]) -> Wire:
    """Canonical chunks -> NDJSON, one line per chunk."""
    return Wire(parts=[ndjson(chunk) for chunk in chunks])


def tool_entry(tool: Tool) -> dict[str, Any]:
    """A fixture tool as a catalog `tools[]` entry."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "approval": tool.approval,
    }


def catalog(base: Mapping[str, Any], tools: Sequence[Tool]) -> dict[str, Any]:
    """The `GET /catalog` body: the scenario's catalog with its fixture tools."""
    return {**base, "protocol": PROTOCOL, "tools": [tool_entry(tool) for tool in tools]}


def tool_result(tool: Tool) -> dict[str, Any]:
    """The `/tools/call` answer for a fixture tool."""
    return {"content": tool.content, "isError": tool.is_error}


def protocol_error(message: str, body: Any) -> dict[str, Any]:
    """The 409 body for protocol failures."""
    return {"error": message, "request": body}

"""A structured child's `structured_output` (core/tools/structured.py) against native's
recorded run (`snapshots/tools/workflow-agent-structured/native.yaml`: the tool, the
closing instruction, the refusal text), and the turn it ends.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from plus_stream_server import ParityServer, text_response, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.tools.arg_check import violations
from acp_plus.core.tools.base import ToolContext, ToolRegistry
from acp_plus.core.tools.structured import INSTRUCTION, StructuredTools
from parity.view.dump import load_view

SNAPSHOT = Path(__file__).parents[4] / "snapshots/tools/workflow-agent-structured/native.yaml"
SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["word", "n"],
    "additionalProperties": False,
}
CTX = ToolContext("child", Path("/w"), "s-1", 1)


def _children() -> dict[int, list[dict[str, Any]]]:
    view = load_view(SNAPSHOT.read_text())
    out: dict[int, list[dict[str, Any]]] = {}
    for request in view["model"]:
        if request.get("agent"):
            out.setdefault(request["agent"], []).append(request["body"])
    return out


def test_the_tool_and_the_instruction_are_natives() -> None:
    first = _children()[1][0]
    tools = StructuredTools(ToolRegistry(), SCHEMA)
    [spec] = tools.specs()
    [seen] = [t for t in first["tools"] if t["name"] == "structured_output"]
    assert seen == spec
    assert first["system"].endswith("\n\n" + INSTRUCTION)


async def test_arguments_outside_the_schema_are_refused_in_natives_words() -> None:
    second = _children()[2][1]
    call, result = second["messages"][-2:]
    [block] = call["content"]
    tools = StructuredTools(ToolRegistry(), SCHEMA)
    output = tools.get("structured_output")
    assert output is not None
    ours = await output.run(json.loads(block["arguments"]), CTX)
    assert (ours.content, ours.is_error) == (result["content"], result["isError"])
    assert not tools.concluded


def test_the_value_checks_cover_const_one_of_and_strict_scalars() -> None:
    schema = {
        "type": "object",
        "properties": {
            "k": {"type": "string", "const": "x"},
            "e": {"type": "integer", "enum": [1, 2]},
            "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
    }
    assert violations(schema, {"k": "x", "e": 1, "u": 3}, "value") == []
    assert violations(schema, {"k": "y", "e": True, "u": None}, "value") == [
        '"value.k" must be "x"',
        '"value.e" must be an integer',
        '"value.u" must match exactly one oneOf branch (matched 0)',
    ]
    assert violations({"type": "boolean", "enum": [True]}, 1, "value") == [
        '"value" must be a boolean'
    ]
    assert violations({"type": "number", "enum": [1]}, True, "value") == [
        '"value" must be a number'
    ]


@pytest.fixture
async def child(server: ParityServer, tmp_path: Path) -> AsyncIterator[Agent]:
    router = Router([ParityStreamProvider(server.url)])
    log = SessionStore(tmp_path / "home").create(str(tmp_path))
    tools = StructuredTools(ToolRegistry(), SCHEMA)
    try:
        yield Agent(log, router, tools, ApprovalChain(), tmp_path, lambda _e: None)
    finally:
        await router.aclose()


async def test_a_recorded_result_ends_the_turn_and_later_calls_do_not_run(
    child: Agent, server: ParityServer
) -> None:
    refused = [
        *tool_call_response("structured_output", "s-1", {"word": "w", "n": 1.5}),
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]
    recorded = [
        *tool_call_response("structured_output", "s-2", {"word": "w", "n": 2}),
        *tool_call_response("structured_output", "s-3", {"word": "v", "n": 3}, index=1),
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]
    server.script += [refused, recorded, text_response("never asked")]
    reason = await asyncio.wait_for(
        child.run_turn([{"type": "text", "text": "go"}], Route("mock", "mock")), 10
    )
    assert reason == {"kind": "completed"}
    assert len(server.streams()) == 2  # no step after the recorded result
    tools = child.tools
    assert isinstance(tools, StructuredTools) and tools.concluded
    assert tools.output.value == {"word": "w", "n": 2}
    results = [e for e in child.log.events() if e["type"] == "tool/result"]
    assert [r["content"][0]["text"] for r in results] == [
        'Error: invalid arguments: "value.n" must be an integer',
        "Structured output recorded.",
        "Error: structured output already recorded: the run is complete, so "
        "`structured_output` is not executed",
    ]

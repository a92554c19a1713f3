"""Scripted tool names resolved against the tools a request offers."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from parity.fakellm.script import build_response
from parity.fakellm.toolnames import (
    Offered,
    offered_chat,
    offered_flat,
    offered_responses,
    rename,
    resolve,
)
from tests.support.fakellm import OpenRun


def test_exact_top_level_name_wins() -> None:
    offered = [Offered("echo"), Offered("mcp__parity__echo"), Offered("echo", "ns")]
    assert resolve("echo", offered) == Offered("echo")


def test_name_inside_one_namespace() -> None:
    offered = [Offered("exec_command"), Offered("echo", "mcp__parity")]
    assert resolve("echo", offered) == Offered("echo", "mcp__parity")


def test_qualified_names_prefer_the_parity_server() -> None:
    assert resolve("echo", [Offered("read"), Offered("parity_echo")]) == Offered("parity_echo")
    both = [Offered("other__echo"), Offered("mcp__parity__echo")]
    assert resolve("echo", both) == Offered("mcp__parity__echo")
    ambiguous = [Offered("a__echo"), Offered("b__echo")]
    assert resolve("echo", ambiguous) == Offered("echo")
    # a longer name that merely ends with the same letters is not a qualification
    assert resolve("echo", [Offered("reecho")]) == Offered("echo")


def test_unknown_names_and_no_tools_stay_as_scripted() -> None:
    assert resolve("echo", []) == Offered("echo")
    assert resolve("echo", [Offered("read")]) == Offered("echo")


def test_rename_rewrites_delta_and_block_end_and_reports_namespaces() -> None:
    chunks = build_response({"tool_calls": [{"id": "c1", "name": "echo"}]}).chunks
    renamed, spaces = rename(chunks, [Offered("echo", "mcp__parity")])
    assert renamed == list(chunks) and spaces == {"c1": "mcp__parity"}
    renamed, spaces = rename(chunks, [Offered("parity_echo")])
    assert renamed[1]["name"] == "parity_echo" and renamed[2]["block"]["name"] == "parity_echo"
    assert spaces == {}
    assert chunks[1]["name"] == "echo"  # the script's own chunks are untouched


def test_offered_tools_per_dialect() -> None:
    chat: dict[str, Any] = {"tools": [{"type": "function", "function": {"name": "a"}}]}
    flat: dict[str, Any] = {"tools": [{"name": "b", "input_schema": {}}]}
    responses: dict[str, Any] = {
        "tools": [
            {"type": "function", "name": "c"},
            {
                "type": "namespace",
                "name": "mcp__parity",
                "tools": [{"type": "function", "name": "d"}],
            },
            {"type": "web_search"},
        ]
    }
    assert offered_chat(chat) == [Offered("a")]
    assert offered_flat(flat) == [Offered("b")]
    assert offered_responses(responses) == [Offered("c"), Offered("d", "mcp__parity")]


async def test_responses_function_call_gets_the_namespace(open_run: OpenRun) -> None:
    # codex-acp offers MCP tools inside a namespace tool and routes calls by it
    run = open_run([{"tool_calls": [{"id": "call-1", "name": "echo", "arguments": {}}]}])
    tools: Any = [{"type": "namespace", "name": "mcp__parity", "description": "", "tools": [
        {"type": "function", "name": "echo", "parameters": {}, "strict": False}
    ]}]  # fmt: skip
    async with openai.AsyncOpenAI(base_url=f"{run.base_url}/v1", api_key="k") as api:
        stream = await api.responses.create(model="m", input="go", stream=True, tools=tools)
        events = [e async for e in stream]
    final: Any = events[-1]
    (call,) = [i for i in final.response.output if i.type == "function_call"]
    assert (call.name, call.namespace, call.call_id) == ("echo", "mcp__parity", "call-1")


async def test_chat_tool_call_uses_the_qualified_name(open_run: OpenRun) -> None:
    run = open_run([{"tool_calls": [{"id": "call-1", "name": "echo"}]}])
    body = {
        "messages": [],
        "tools": [{"type": "function", "function": {"name": "mcp__parity__echo"}}],
    }
    async with httpx.AsyncClient() as client:
        reply = (await client.post(f"{run.base_url}/v1/chat/completions", json=body)).json()
    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "mcp__parity__echo"

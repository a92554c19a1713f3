"""MCP servers from `session/new.mcpServers` (§1.4): mounted, called, stopped on close."""

from __future__ import annotations

import sys

from plus_agent import ECHO, WorldFactory, children, raw_agent, wait_for

from parity.fakellm.mcp_stdio import mcp_server_entry
from parity.scenario.model import DEFAULT_CATALOG


async def test_stdio_mcp_tool_is_called_and_its_server_stopped_on_close(
    world: WorldFactory,
) -> None:
    w = world(
        llm=[
            {"tool_calls": [{"id": "call-m", "name": "mcp__parity__echo", "arguments": {}}]},
            {"text": "done"},
        ],
        tools=[ECHO],
    )
    entry = mcp_server_entry(w.run.base_url)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        # Starting an MCP server imports the mcp SDK on both sides: allow for a slow machine.
        new = await agent.call(
            "session/new", {"cwd": str(w.workdir), "mcpServers": [entry]}, timeout=30
        )
        session_id = new["result"]["sessionId"]
        servers = children(agent.process.pid)
        assert servers, "the MCP server process should be running"
        response, updates = await agent.until_response(
            await agent.request(
                "session/prompt",
                {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
            ),
            timeout=30,
        )
        assert response["result"] == {"stopReason": "end_turn"}
        result = updates[1]["params"]["update"]
        assert (result["sessionUpdate"], result["status"]) == ("tool_call_update", "completed")
        assert result["content"][0]["content"]["text"] == "tool result"
        # The model saw the tool under its namespaced name.
        names = [t["name"] for t in w.model_requests()[0]["tools"]]
        assert "mcp__parity__echo" in names
        closed = await agent.call("session/close", {"sessionId": session_id}, timeout=30)
        assert closed["result"] == {}
        await wait_for(lambda: not children(agent.process.pid), timeout=5)


async def test_mcp_server_that_fails_to_start_fails_session_new(world: WorldFactory) -> None:
    w = world()
    broken = {"name": "broken", "command": sys.executable, "args": ["-c", "pass"], "env": []}
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        response = await agent.call(
            "session/new", {"cwd": str(w.workdir), "mcpServers": [broken]}, timeout=30
        )
    # Agent factory failure: generic -32603 with the message as data.details (§1.1).
    assert response["error"]["code"] == -32603
    assert response["error"]["message"] == "Internal error"
    assert "MCP server broken failed to start" in response["error"]["data"]["details"]


async def test_a_session_with_an_mcp_server_offers_natives_resource_tools(
    world: WorldFactory,
) -> None:
    resources = {"resources": [{"uri": "mem://a", "name": "a"}], "page_size": 1}
    w = world(
        llm=[
            {
                "tool_calls": [
                    {"id": "c1", "name": "list_mcp_resources", "arguments": {"server": "parity"}}
                ]
            },
            {"text": "done"},
        ],
        catalog={**DEFAULT_CATALOG, "mcpResources": resources},
    )
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        entry = mcp_server_entry(w.run.base_url)
        new = await agent.call(
            "session/new", {"cwd": str(w.workdir), "mcpServers": [entry]}, timeout=30
        )
        await agent.until_response(
            await agent.request(
                "session/prompt",
                {
                    "sessionId": new["result"]["sessionId"],
                    "prompt": [{"type": "text", "text": "go"}],
                },
            ),
            timeout=30,
        )
    first, second = w.model_requests()
    assert [t["name"] for t in first["tools"]] == [
        "list_mcp_resource_templates",
        "list_mcp_resources",
        "read_mcp_resource",
    ]
    assert first["system"].endswith(
        "\n\n## MCP resource servers\n\nUse list_mcp_resources, list_mcp_resource_templates, or "
        'read_mcp_resource with one of these names as the server argument: ["parity"].'
    )
    result = second["messages"][-1]
    assert result["content"][0]["text"].startswith('MCP server: parity\n{"_meta":')
    assert result["content"][0]["text"].endswith('"resources":[{"name":"a","uri":"mem://a"}]}')

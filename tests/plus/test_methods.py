"""Session lifecycle methods through the real process: new, list, resume, config options."""

from __future__ import annotations

from typing import Any

from plus_agent import RawAgent, WorldFactory, raw_agent


async def _error(agent: RawAgent, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = await agent.call(method, params)
    assert "error" in response, response
    error: dict[str, Any] = response["error"]
    return error


async def test_new_session_validation_texts(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        cwd = str(w.workdir)
        cases: list[tuple[dict[str, Any], str]] = [
            ({"cwd": "rel/dir", "mcpServers": []}, "cwd must be an absolute path: rel/dir"),
            (
                {"cwd": cwd, "mcpServers": [], "additionalDirectories": ["/tmp"]},
                "additionalDirectories is not supported",
            ),
            (
                {
                    "cwd": cwd,
                    "mcpServers": [{"name": "x", "command": "rel", "args": [], "env": []}],
                },
                "mcpServers[0].command must be an absolute path",
            ),
        ]
        for params, detail in cases:
            error = await _error(agent, "session/new", params)
            assert error == {"code": -32602, "message": f"Invalid params: {detail}"}
        # Empty additionalDirectories are accepted (§1.1); so is null, which native
        # 0.2.1-rc.2's SDK parses to none (docs/contract-notes.md, "Schema errors").
        extras: list[list[str] | None] = [[], None]
        for extra in extras:
            ok = await agent.call(
                "session/new", {"cwd": cwd, "mcpServers": [], "additionalDirectories": extra}
            )
            assert "sessionId" in ok["result"]
        # The handler reads the schema's output: the item it drops (5) is gone, so the
        # bridge's own check names the server that follows it as the first.
        server = {"name": "x", "command": "rel", "args": [], "env": []}
        error = await _error(agent, "session/new", {"cwd": cwd, "mcpServers": [5, server]})
        assert error["message"] == "Invalid params: mcpServers[0].command must be an absolute path"
        # The SDK schema rejects a missing cwd before the bridge sees it (§1.0).
        error = await _error(agent, "session/new", {"mcpServers": []})
        assert (error["code"], error["message"]) == (-32602, "Invalid params")


async def test_list_pages_with_the_keyset_cursor(world: WorldFactory) -> None:
    w = world(extra_config="session_list_page_size = 1\n")
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        ids = []
        for _ in range(3):
            new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
            ids.append(new["result"]["sessionId"])
        # Live sessions are never listed (§1.6 candidates).
        assert (await agent.call("session/list", {}))["result"] == {"sessions": []}
        await agent.call("session/close", {"sessionId": ids[0]})
        await agent.call("session/close", {"sessionId": ids[1]})
        seen = []
        cursor = None
        for _ in range(3):
            params = {"cwd": str(w.workdir)} | ({"cursor": cursor} if cursor else {})
            page = (await agent.call("session/list", params))["result"]
            seen += [s["sessionId"] for s in page["sessions"]]
            assert all(s["cwd"] == str(w.workdir) for s in page["sessions"])
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert sorted(seen) == sorted(ids[:2]) and len(seen) == 2
        error = await _error(agent, "session/list", {"cursor": "not a cursor!"})
        assert error == {
            "code": -32602,
            "message": "Invalid params: session/list cursor is invalid",
        }
        error = await _error(agent, "session/list", {"cwd": "relative"})
        assert error["message"] == "Invalid params: cwd must be an absolute path: relative"
        other = await agent.call("session/list", {"cwd": "/nonexistent/elsewhere"})
        assert other["result"] == {"sessions": []}


async def test_resume_gates_and_route_restore(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        changed = await agent.call(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "reasoning_effort", "value": "low"},
        )
        effort = changed["result"]["configOptions"][1]
        assert (effort["id"], effort["currentValue"]) == ("reasoning_effort", "low")
        error = await _error(
            agent, "session/resume", {"sessionId": session_id, "cwd": str(w.workdir)}
        )
        assert error["message"] == f"Invalid params: session is already active: {session_id}"
        await agent.call("session/close", {"sessionId": session_id})
        error = await _error(agent, "session/resume", {"sessionId": session_id, "cwd": "/"})
        assert error["message"] == "Invalid params: session cwd does not match: /"
        unknown = "00000000-0000-4000-8000-000000000000"
        error = await _error(agent, "session/resume", {"sessionId": unknown, "cwd": "/"})
        assert error["message"] == f"Invalid params: session is not resumable: {unknown}"
        resumed = await agent.call(
            "session/resume", {"sessionId": session_id, "cwd": str(w.workdir) + "/."}
        )
    # §1.5: resume restores the logged route, keeping an explicitly chosen effort.
    options = resumed["result"]["configOptions"]
    assert options[0]["currentValue"] == '["mock","mock"]'
    assert options[1]["currentValue"] == "low"
    assert set(resumed["result"]) == {"configOptions"}


async def test_set_config_option_errors(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        value: str | bool
        for config_id, value, detail in [
            ("model", True, "model requires a select value"),
            ("model", '["mock","nope"]', 'unknown model option: ["mock","nope"]'),
            ("reasoning_effort", "max", "unknown reasoning effort for mock/mock: max"),
            ("colour", "red", "unknown session config option: colour"),
        ]:
            params = {"sessionId": sid, "configId": config_id, "value": value}
            if isinstance(value, bool):
                params["type"] = "boolean"  # the schema's boolean variant
            error = await _error(agent, "session/set_config_option", params)
            assert error == {"code": -32602, "message": f"Invalid params: {detail}"}
        # A value of neither schema variant is the SDK's schema failure (§1.0).
        params = {"sessionId": sid, "configId": "model", "value": 3}
        error = await _error(agent, "session/set_config_option", params)
        assert (error["message"], error["data"]["value"]) == (
            "Invalid params",
            {
                "_errors": [
                    "Invalid input: expected boolean, received number",
                    "Invalid input: expected string, received number",
                ]
            },
        )
        error = await _error(
            agent,
            "session/set_config_option",
            {"sessionId": "gone", "configId": "model", "value": "x"},
        )
        assert error["message"] == "Invalid params: unknown session: gone"


async def test_prompt_admission_texts(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        for prompt, detail in [
            ([], "empty prompt"),
            ([{"type": "text", "text": "  \n"}], "empty prompt"),
            (
                [{"type": "audio", "data": "", "mimeType": "audio/wav"}],
                "audio prompt content is not supported",
            ),
            (
                [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                "inline image prompts were not advertised by this connection",
            ),
        ]:
            error = await _error(agent, "session/prompt", {"sessionId": sid, "prompt": prompt})
            assert error == {"code": -32602, "message": f"Invalid params: {detail}"}
    # Refused prompts free the slot and never reach the model (§5).
    assert w.model_requests() == []


async def test_config_mutations_apply_in_arrival_order(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        values = ["low", "high", "low", "high", "low"]
        ids = [
            await agent.request(
                "session/set_config_option",
                {"sessionId": sid, "configId": "reasoning_effort", "value": value},
            )
            for value in values
        ]
        answers: dict[int, str] = {}
        while len(answers) < len(ids):
            frame = await agent.recv()
            answers[frame["id"]] = frame["result"]["configOptions"][1]["currentValue"]
    # Each answer is the complete state after its own mutation (§1.5).
    assert [answers[i] for i in ids] == values


async def test_resume_and_list_compare_cwd_by_physical_identity(world: WorldFactory) -> None:
    w = world()
    link = w.workdir.parent / "link-to-work"
    link.symlink_to(w.workdir)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        await agent.call("session/close", {"sessionId": sid})
        listed = await agent.call("session/list", {"cwd": str(link)})
        # The listed cwd is the stored one, found through the symlink (§1.6 realpath).
        assert listed["result"]["sessions"] == [{"sessionId": sid, "cwd": str(w.workdir)}]
        resumed = await agent.call("session/resume", {"sessionId": sid, "cwd": str(link)})
        assert "configOptions" in resumed["result"]


async def test_resume_of_a_corrupt_log_is_a_storage_failure(world: WorldFactory) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        sid = new["result"]["sessionId"]
        await agent.call("session/close", {"sessionId": sid})
        path = w.home / "sessions" / f"{sid}.jsonl"
        # Damage before the last line is corruption, not a torn tail.
        path.write_text(path.read_text() + "{broken\n" + '{"type":"turn/start"}\n')
        error = await _error(agent, "session/resume", {"sessionId": sid, "cwd": str(w.workdir)})
    assert (error["code"], error["message"]) == (-32603, "Internal error")
    assert "corrupt session log" in error["data"]["details"]

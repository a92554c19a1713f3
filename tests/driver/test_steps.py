"""Client steps against the conforming echo agent: what is sent, what is recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from parity.driver.run import WORKSPACE_FILE_LIMIT, run_scenario, wait_for_cleanup, workspace_files
from tests.support.driver import BASIC, agent, chunks, messages, run, scenario, st


async def test_text_turn_is_recorded_frame_by_frame() -> None:
    t = await run([*BASIC, st("prompt", session="s1", text="hi from {workdir}")])
    assert t.problems == []
    assert [f.seq for f in t.frames] == list(range(len(t.frames)))
    assert [f.direction for f in t.frames] == ["out", "in", "out", "in", "out", "in", "in"]
    assert all(f.t >= 0 for f in t.frames)
    assert [f.t for f in t.frames] == sorted(f.t for f in t.frames)
    init, new, prompt = t.steps
    assert init.request["params"] == {
        "protocolVersion": 1,
        "clientCapabilities": {},
        "clientInfo": {"name": "acp-parity", "version": "0.1.0"},
    }
    assert init.response["result"]["agentInfo"]["name"] == "fixture"
    assert new.request["params"] == {"cwd": t.paths["workdir"], "mcpServers": []}
    assert prompt.request["params"] == {
        "sessionId": "sess-1",
        "prompt": [{"type": "text", "text": f"hi from {t.paths['workdir']}"}],
    }
    assert prompt.response == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    assert (init.frames, new.frames, prompt.frames) == ([0, 1], [2, 3], [4, 5, 6])
    assert prompt.label == 'prompt s1 "hi from {workdir}"'
    # Raw text is kept byte for byte (the agent's own spacing), parsed beside it.
    assert t.frames[1].raw.startswith('{"jsonrpc": "2.0", "id": 0')
    (proc,) = t.processes
    assert (proc.exit_code, proc.signal, proc.stopped_by) == (0, None, "eof")
    assert set(t.paths) == {"workdir", "home", "tmp"}
    assert set(t.timings) == {"startup", "run", "teardown"}
    assert 0 < t.timings["startup"] < t.timings["run"]
    assert abs(t.timings["startup"] - t.frames[1].t) < 0.05


async def test_run_dir_is_removed_unless_kept() -> None:
    t = await run(BASIC)
    wait_for_cleanup()
    assert not Path(t.paths["workdir"]).parent.exists()
    kept = await run_scenario(
        scenario(BASIC, files={"a.txt": "A"}),
        agent("echo_agent"),
        llm_run=None,
        run_id="keep",
        target="echo",
        keep_dir=True,
    )
    root = Path(kept.paths["workdir"]).parent
    try:
        assert (root / "workdir" / "a.txt").read_text() == "A"
        assert sorted(p.name for p in root.iterdir()) == ["home", "tmp", "workdir"]
    finally:
        shutil.rmtree(root)


async def test_scenario_files_are_seeded_and_fs_is_served_when_declared() -> None:
    client = {"fs": {"read": True, "write": True}}
    t = await run(
        [
            *BASIC,
            st("prompt", session="s1", text="read {workdir}/notes/a.txt"),
            st("prompt", session="s1", text="write {workdir}/out.txt written"),
            st("prompt", session="s1", text="read {workdir}/out.txt"),
            st("prompt", session="s1", text="read {home}/outside.txt"),
            st("prompt", session="s1", text="read {workdir}/missing.txt"),
        ],
        files={"notes/a.txt": "hello\n"},
        client=client,
    )
    assert t.problems == []
    caps = t.steps[0].request["params"]["clientCapabilities"]
    assert caps == {"fs": {"readTextFile": True, "writeTextFile": True}}
    answers = [json.loads(c) for c in chunks(t)]
    assert answers[0]["result"] == {"content": "hello\n"}
    assert answers[1]["result"] == {}
    assert answers[2]["result"] == {"content": "written"}
    assert answers[3]["error"]["code"] == -32602
    assert "outside the workdir" in answers[3]["error"]["message"]
    assert answers[4]["error"]["code"] == -32002


async def test_fs_without_declaration_is_method_not_found_and_noted() -> None:
    t = await run([*BASIC, st("prompt", session="s1", text="read /etc/hostname")])
    (answer,) = [json.loads(c) for c in chunks(t)]
    assert answer["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": {"method": "fs/read_text_file"},
    }
    assert t.problems == ["agent called fs/read_text_file without the client capability"]


async def permission_outcomes(policy: Any, texts: list[str]) -> list[Any]:
    steps = [*BASIC, *(st("prompt", session="s1", text=text) for text in texts)]
    t = await run(steps, client={"permission": policy})
    assert t.problems == []
    return [json.loads(c).get("result", json.loads(c).get("error")) for c in chunks(t)]


async def test_permission_answers_by_kind_in_order_and_last_repeats() -> None:
    outcomes = await permission_outcomes(["allow-once", "reject-once", "error"], ["permission"] * 4)
    assert outcomes == [
        {"outcome": {"outcome": "selected", "optionId": "yes"}},
        {"outcome": {"outcome": "selected", "optionId": "no"}},
        {"code": -32603, "message": "Internal error"},
        {"code": -32603, "message": "Internal error"},
    ]


async def test_permission_default_is_cancelled() -> None:
    t = await run([*BASIC, st("prompt", session="s1", text="permission")])
    assert json.loads(chunks(t)[0])["result"] == {"outcome": {"outcome": "cancelled"}}


async def test_permission_by_tool_title_with_mcp_prefix_and_default() -> None:
    policy = {"by_tool": {"echo": ["allow-once", "reject-once"]}, "default": "cancelled"}
    outcomes = await permission_outcomes(
        policy, ["permission mcp__parity__echo", "permission other", "permission echo"]
    )
    assert [o["outcome"].get("optionId", o["outcome"]["outcome"]) for o in outcomes] == [
        "yes",
        "cancelled",
        "no",
    ]


async def test_permission_by_prompt_goes_by_the_prompt_in_flight_in_the_session() -> None:
    # p1 never asks (an agent that skipped its turn): by prompt, p2 still gets its own
    # answer, where a list in request order hands it p1's. A prompt without an answer
    # of its own (unnamed here) gets the default.
    steps = [
        *BASIC,
        st("prompt", session="s1", as_="p1", text="hi"),
        st("prompt", session="s1", as_="p2", text="permission"),
        st("prompt", session="s1", text="permission"),
    ]
    by_prompt = {"by_prompt": {"p1": "reject-once", "p2": "allow-once"}, "default": "error"}
    got = []
    for policy in (by_prompt, ["reject-once", "allow-once", "error"]):
        t = await run(steps, client={"permission": policy})
        assert t.problems == []
        got.append([json.loads(c).get("result", json.loads(c).get("error")) for c in chunks(t)[1:]])
    yes, no = ({"outcome": {"outcome": "selected", "optionId": o}} for o in ("yes", "no"))
    error = {"code": -32603, "message": "Internal error"}
    assert got == [[yes, error], [no, yes]]


async def test_elicitation_answers() -> None:
    policy = [{"action": "accept", "content": {"q": "a"}}, "decline"]
    steps = [*BASIC, *(st("prompt", session="s1", text="ask what?") for _ in range(3))]
    t = await run(steps, client={"elicitation": policy})
    assert [json.loads(c)["result"] for c in chunks(t)] == [
        {"action": "accept", "content": {"q": "a"}},
        {"action": "decline"},
        {"action": "decline"},
    ]
    t = await run([*BASIC, st("prompt", session="s1", text="ask x")])
    assert json.loads(chunks(t)[0])["result"] == {"action": "cancel"}


async def test_terminal_runs_a_real_command_when_declared() -> None:
    t = await run(
        [*BASIC, st("prompt", session="s1", text="run echo hi")], client={"terminal": True}
    )
    assert t.steps[0].request["params"]["clientCapabilities"] == {"terminal": True}
    waited, output, released = (json.loads(c)["result"] for c in chunks(t))
    assert waited == {"exitCode": 0, "signal": None}
    assert output == {"output": "hi\n", "truncated": False, "exitStatus": waited}
    assert released == {}


async def test_terminal_output_limit_keeps_the_tail() -> None:
    text = "run-limited 5 printf héllo-world"
    t = await run([*BASIC, st("prompt", session="s1", text=text)], client={"terminal": True})
    output = json.loads(chunks(t)[1])["result"]
    # 5 bytes from the end, moved forward to a character boundary.
    assert output["output"] == "world"[-5:]
    assert output["truncated"] is True


async def test_agent_can_withdraw_a_pending_terminal_wait() -> None:
    steps = [*BASIC, st("prompt", session="s1", text="withdraw")]
    t = await run(steps, client={"terminal": True})
    answer, released = (json.loads(c) for c in chunks(t))
    assert answer == {
        "error": {"code": -32800, "message": "Request cancelled"},
        "id": "wait-1",
        "jsonrpc": "2.0",
    }
    assert released["result"] == {}
    assert t.problems == []


async def test_cancel_after_the_nth_update_via_session_cancel() -> None:
    cancel = {"after": {"update": "agent_message_chunk", "count": 2}}
    t = await run([*BASIC, st("prompt", session="s1", text="stream 50", cancel=cancel)])
    prompt = t.steps[-1]
    assert prompt.problem is None
    assert prompt.response["result"] == {"stopReason": "cancelled"}
    seqs = [
        f.seq
        for f in t.frames
        if f.direction == "in" and (f.message.get("params") or {}).get("update")
    ]
    (cancel_frame,) = [f for f in t.frames if f.message.get("method") == "session/cancel"]
    assert cancel_frame.message["params"] == {"sessionId": "sess-1"}
    assert seqs[1] < cancel_frame.seq < prompt.frames[-1]
    assert cancel_frame.seq in prompt.frames


async def test_update_trigger_counts_only_the_prompts_session() -> None:
    cancel = {"after": {"update": "agent_message_chunk", "count": 3}}
    steps = [
        st("initialize"),
        st("new_session", as_="a"),
        st("new_session", as_="b"),
        st(
            "parallel",
            {
                "steps": [
                    st("prompt", session="b", text="stream 10"),
                    st("prompt", session="a", text="stream 50", cancel=cancel),
                ]
            },
        ),
    ]
    t = await run(steps)
    b_prompt, a_prompt = t.steps[4:]
    # The agent serves b first; b's ten chunks must not fire a's trigger.
    assert b_prompt.response["result"] == {"stopReason": "end_turn"}
    assert a_prompt.response["result"] == {"stopReason": "cancelled"}
    (cancel_frame,) = messages(t, "out", "session/cancel")
    assert cancel_frame["params"] == {"sessionId": "sess-1"}
    assert chunks(t)[:10] == [f"part {i}" for i in range(10)]
    assert 3 <= len(chunks(t)) - 10 < 50


async def test_cancel_after_ms_via_cancel_request() -> None:
    cancel = {"after": {"ms": 60}, "via": "cancel_request"}
    t = await run([*BASIC, st("prompt", session="s1", text="stream 50", as_="p1", cancel=cancel)])
    prompt = t.steps[-1]
    assert prompt.response["result"] == {"stopReason": "cancelled"}
    (sent,) = messages(t, "out", "$/cancel_request")
    assert sent["params"] == {"requestId": prompt.request["id"]}
    assert 1 <= len(chunks(t)) < 50


async def test_cancel_trigger_that_never_fires_is_noted_but_not_fatal() -> None:
    cancel = {"after": {"update": "tool_call"}}
    t = await run(
        [
            *BASIC,
            st("prompt", session="s1", text="x", cancel=cancel),
            st("prompt", session="s1", text="y"),
        ]
    )
    assert t.steps[2].problem == (
        "cancel trigger `after update tool_call` never fired (0 of 1 tool_call update(s) "
        "came); the prompt ended first, with stopReason end_turn"
    )
    assert t.steps[3].response["result"] == {"stopReason": "end_turn"}
    assert t.problems == []


async def test_raw_request_notify_and_send_raw() -> None:
    t = await run(
        [
            *BASIC,
            st("request", method="_vendor/thing", params={"s": "{session:s1}"}),
            st("notify", method="session/cancel", params={"sessionId": "{session:s1}"}),
            st("send_raw", line="this is not json"),
            st("send_raw", line='{"jsonrpc":"2.0","id":"raw-1","method":"nope"}'),
            st("prompt", session="s1", text="still alive"),
        ]
    )
    assert t.problems == []
    request, notify, garbage, raw_req, prompt = t.steps[2:]
    assert request.request["params"] == {"s": "sess-1"}
    assert request.response["error"]["code"] == -32601
    assert notify.request == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "sess-1"},
    }
    assert notify.response is None
    garbage_frame = t.frames[garbage.frames[0]]
    assert (garbage_frame.direction, garbage_frame.raw) == ("out", "this is not json")
    assert garbage_frame.parse_error is not None
    assert garbage.response["error"]["code"] == -32700
    assert raw_req.response["id"] == "raw-1"
    assert prompt.response["result"]["stopReason"] == "end_turn"


async def test_send_raw_batch_is_answered_by_a_batch() -> None:
    batch = '[{"jsonrpc":"2.0","method":"x/note"},{"jsonrpc":"2.0","id":"b1","method":"x"}]'
    t = await run([*BASIC, st("send_raw", line=batch), st("prompt", session="s1", text="hi")])
    raw = t.steps[2]
    assert raw.response == {
        "jsonrpc": "2.0",
        "id": "b1",
        "error": {"code": -32600, "message": "no batches"},
    }
    answer = t.frames[raw.frames[-1]]
    assert isinstance(answer.message, list)
    assert t.problems == []  # a batch answering a batch is JSON-RPC, not garbage
    assert chunks(t) == ["hi"]


async def test_list_sessions_and_cursor_next_without_a_cursor() -> None:
    t = await run(
        [*BASIC, st("list_sessions", cwd="{workdir}"), st("list_sessions", cursor="next")]
    )
    listed = t.steps[2]
    assert listed.request["params"] == {"cwd": t.paths["workdir"]}
    assert listed.response["result"]["sessions"][0]["sessionId"] == "sess-1"
    assert "the previous list had no nextCursor" in (t.steps[3].problem or "")
    assert t.steps[3].request is None


async def test_unknown_session_name_stops_the_run_with_a_clear_problem() -> None:
    t = await run(
        [*BASIC, st("prompt", session="s9", text="x"), st("prompt", session="s1", text="y")]
    )
    assert len(t.steps) == 3
    assert (
        t.steps[2].problem
        == "test.yaml:1:0: unknown session name 's9' (no session was created `as` it)"
    )
    assert t.problems == ['run stopped at step 3 (prompt s9 "x"); 1 later step(s) not run']


async def test_session_methods_send_the_acp_params() -> None:
    t = await run(
        [
            *BASIC,
            st("load_session", session="s1", additional_directories=["{home}"]),
            st("resume_session", session="s1", cwd="/elsewhere"),
            st("set_config_option", session="s1", config_id="model", value=["x"]),
            st("set_mode", session="s1", mode="plan"),
            st("authenticate", method_id="none"),
            st("cancel", session="s1"),
            st("close_session", session="s1"),
        ]
    )
    sent = [s.request for s in t.steps[2:]]
    assert [m["method"] for m in sent] == [
        "session/load",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "authenticate",
        "session/cancel",
        "session/close",
    ]
    assert sent[0]["params"] == {
        "sessionId": "sess-1",
        "cwd": t.paths["workdir"],
        "mcpServers": [],
        "additionalDirectories": [t.paths["home"]],
    }
    assert sent[1]["params"]["cwd"] == "/elsewhere"
    assert sent[2]["params"] == {"sessionId": "sess-1", "configId": "model", "value": ["x"]}
    assert sent[3]["params"] == {"sessionId": "sess-1", "modeId": "plan"}
    assert sent[4]["params"] == {"methodId": "none"}
    assert "id" not in sent[5]
    # The echo agent answers unknown methods with -32601: recorded, not a problem.
    assert all(s.response["error"]["code"] == -32601 for s in t.steps[2:] if s.kind != "cancel")
    assert t.problems == []


async def test_parallel_prompts_in_two_sessions() -> None:
    steps = [
        st("initialize"),
        st("parallel", {"steps": [st("new_session", as_="a"), st("new_session", as_="b")]}),
        st(
            "parallel",
            {
                "steps": [
                    st("prompt", session="a", text="stream 3"),
                    st("prompt", session="b", text="hello b"),
                ]
            },
        ),
    ]
    t = await run(steps)
    assert t.problems == []
    kinds = [s.kind for s in t.steps]
    assert kinds == [
        "initialize",
        "parallel",
        "new_session",
        "new_session",
        "parallel",
        "prompt",
        "prompt",
    ]
    assert {
        t.steps[2].response["result"]["sessionId"],
        t.steps[3].response["result"]["sessionId"],
    } == {
        "sess-1",
        "sess-2",
    }
    assert t.steps[5].response["result"]["stopReason"] == "end_turn"
    assert t.steps[6].response["result"]["stopReason"] == "end_turn"
    assert set(t.steps[5].frames) <= set(t.steps[4].frames)


async def test_restart_starts_a_fresh_process_with_the_same_dirs() -> None:
    t = await run([*BASIC, st("restart", {}), st("initialize"), st("list_sessions")])
    assert [p.stopped_by for p in t.processes] == ["eof", "eof"]
    assert t.processes[0].pid != t.processes[1].pid
    restart = t.steps[2]
    assert restart.request is None and restart.problem is None
    assert {f.process for f in t.frames[: t.steps[3].frames[0]]} == {0}
    assert {t.frames[i].process for i in t.steps[3].frames} == {1}
    assert t.steps[4].response["result"] == {"sessions": []}
    assert {"startup", "startup.1"} <= set(t.timings)


async def test_wait_ms() -> None:
    t = await run([st("initialize"), st("wait", ms=50)])
    assert t.steps[1].t_end - t.steps[1].t_start >= 0.05
    assert t.steps[1].label == "wait ms=50"


async def test_wait_for_a_session_counts_updates_that_raced_its_response() -> None:
    waiting = st("wait", update="available_commands_update", session="s1")
    t = await run([*BASIC, waiting], "update_before_session_reply")
    # The race really happened: the update is on the wire before the session/new answer,
    # inside the session/new step.
    kinds = [
        "update" if f.message.get("method") == "session/update" else "answer"
        for f in (t.frames[i] for i in t.steps[1].frames)
        if f.direction == "in"
    ]
    assert kinds == ["update", "answer"]
    assert t.steps[2].problem is None
    assert t.steps[2].t_end - t.steps[2].t_start < 0.5  # found at once, not at a timeout
    # Without `session`, the wait counts only updates after the session/new step: none.
    plain = st("wait", update="available_commands_update")
    t = await run([*BASIC, plain], "update_before_session_reply", timeouts={"response": 0.5})
    assert "only 0 of 1 available_commands_update" in (t.steps[2].problem or "")


def test_workspace_files_after_the_run(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "big.bin").write_bytes(b"x" * (WORKSPACE_FILE_LIMIT + 10))
    (tmp_path / "bad.txt").write_bytes(b"\xff ok")
    files = workspace_files(tmp_path, ["a.txt", "gone.txt", "bad.txt", "big.bin", "../up.txt"])
    assert files["a.txt"] == "alpha\n"
    assert files["gone.txt"] is None
    assert files["bad.txt"] == "\ufffd ok"
    assert files["big.bin"].endswith(f"<cut at {WORKSPACE_FILE_LIMIT} bytes>")
    assert files["../up.txt"] == "<refused: outside the workdir>"


async def test_a_plain_wait_after_a_session_wait_skips_the_raced_updates() -> None:
    # Each session/new of this agent sends an update (for "sess-1") before its answer. The
    # wait on s1 finds the first; the plain wait after it must count only what comes
    # after the previous step (s2's session/new), not the second raced update, which
    # arrived before that step ended.
    steps = [
        *BASIC,
        st("new_session", as_="s2"),
        st("wait", update="available_commands_update", session="s1"),
        st("wait", update="available_commands_update"),
    ]
    t = await run(steps, "update_before_session_reply", timeouts={"response": 0.5})
    assert t.steps[3].problem is None
    assert "only 0 of 1 available_commands_update" in (t.steps[4].problem or "")

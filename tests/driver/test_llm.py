"""The driver with the real fake LLM: model requests as cancel triggers, the MCP
fixture-tools entry, and model requests copied into the transcript."""

from __future__ import annotations

from typing import Any

from parity.fakellm.run import Run
from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG
from tests.support.driver import BASIC, chunks, echo_tool, run, st


def open_run(fake: FakeLLM, run_id: str, llm: list[dict[str, Any]]) -> Run:
    return fake.open_run(run_id, llm=llm, tools=[echo_tool()], catalog=DEFAULT_CATALOG)


async def test_cancel_after_the_first_model_request(fake: FakeLLM) -> None:
    llm_run = open_run(fake, "r1", [{"text": "hello"}])
    cancel = {"after": {"llm_request": 1}}
    t = await run(
        [*BASIC, st("prompt", session="s1", text="model", cancel=cancel)],
        llm_run=llm_run,
        env={"PARITY_LLM_BASE": llm_run.base_url},
        tools=[echo_tool()],
    )
    prompt = t.steps[-1]
    assert prompt.problem is None
    assert prompt.response["result"] == {"stopReason": "cancelled"}
    assert chunks(t)[0] == "hello"
    (request,) = t.model_requests
    assert (request.path, request.dialect, request.entry) == ("/stream", "parity-stream", 0)
    # Model request times share the run's clock with frames.
    cancel_frame = next(f for f in t.frames if f.message.get("method") == "session/cancel")
    assert prompt.t_start < request.t < cancel_frame.t


async def test_mcp_entry_is_appended_for_mcp_targets_only(fake: FakeLLM) -> None:
    steps = [
        st("initialize"),
        st("new_session", as_="auto", mcp_servers=[{"name": "mine", "command": "/bin/true"}]),
        st("new_session", as_="none", fixture_tools="none"),
        st("load_session", session="auto"),
    ]
    llm_run = open_run(fake, "r2", [])
    t = await run(steps, llm_run=llm_run, launch={"fixture_tools": "mcp"}, tools=[echo_tool()])
    auto, none, load = (s.request["params"]["mcpServers"] for s in t.steps[1:])
    assert [s["name"] for s in auto] == ["mine", "parity"]
    assert auto[1]["args"][-2:] == ["--base", llm_run.base_url]
    assert none == []
    assert [s["name"] for s in load] == ["parity"]

    # A stream target gets its tools from the catalog, not MCP...
    t = await run(steps[:2], llm_run=open_run(fake, "r3", []), tools=[echo_tool()])
    assert [s["name"] for s in t.steps[1].request["params"]["mcpServers"]] == ["mine"]
    # ...unless the step asks for MCP; and a scenario without tools never gets it.
    forced = [st("initialize"), st("new_session", as_="s1", fixture_tools="mcp")]
    t = await run(forced, llm_run=open_run(fake, "r4", []), tools=[echo_tool()])
    assert [s["name"] for s in t.steps[1].request["params"]["mcpServers"]] == ["parity"]
    t = await run(forced, llm_run=open_run(fake, "r5", []))
    assert t.steps[1].request["params"]["mcpServers"] == []
    # A scenario that serves MCP resources gets the bridge without any fixture tool.
    resources = {"resources": [{"uri": "mem://x", "name": "x"}]}
    t = await run(forced, llm_run=open_run(fake, "r6", []), mcp_resources=resources)
    assert [s["name"] for s in t.steps[1].request["params"]["mcpServers"]] == ["parity"]


async def test_entries_of_a_prompt_are_taken_only_by_its_turn(fake: FakeLLM) -> None:
    # The echo agent asks the model only for the word `model`: p1's turn never does, so
    # p1's entry stays unused and p2 gets its own. Unbound, p2 would get p1's answer.
    steps = [
        *BASIC,
        st("prompt", session="s1", as_="p1", text="hi"),
        st("prompt", session="s1", as_="p2", text="model"),
    ]
    bound = [{"text": "one", "prompt": "p1"}, {"text": "two", "prompt": "p2"}]
    unbound = [{"text": "one"}, {"text": "two"}]
    got = {}
    for run_id, llm in (("bound", bound), ("unbound", unbound)):
        llm_run = open_run(fake, run_id, llm)
        t = await run(steps, llm_run=llm_run, env={"PARITY_LLM_BASE": llm_run.base_url})
        got[run_id] = ([r.entry for r in t.model_requests], chunks(t)[1])
        assert llm_run.script.in_flight == frozenset()
    assert got == {"bound": ([1], "two"), "unbound": ([0], "one")}


async def test_a_session_the_client_never_used_is_answered_as_a_child_agent(
    fake: FakeLLM,
) -> None:
    # The driver tells the fake every session the client uses; the child's request,
    # though it comes later in the script, takes the `agent: 1` entry, and the parent's
    # the main one.
    llm_run = open_run(fake, "r-child", [{"agent": 1, "text": "kid"}, {"text": "mom"}])
    t = await run(
        [*BASIC, st("prompt", session="s1", text="delegate")],
        llm_run=llm_run,
        env={"PARITY_LLM_BASE": llm_run.base_url},
        tools=[echo_tool()],
    )
    assert chunks(t)[:2] == ["mom", "kid"]
    assert [(r.agent, r.entry) for r in t.model_requests] == [(0, 1), (1, 0)]

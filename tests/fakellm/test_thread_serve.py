"""`FakeLLMThread` from plain synchronous code, and `serve_scenario` end to end."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import httpx
import pytest

from parity.core.transcript import ModelRequest
from parity.fakellm.serve import serve_scenario
from parity.fakellm.thread import FakeLLMThread
from parity.scenario.model import DEFAULT_CATALOG, LlmEntry, Scenario, Where
from tests.support.fakellm import tool


def post(url: str, body: Any, timeout: float = 5) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_thread_serves_runs_and_stops_cleanly() -> None:
    before = threading.active_count()
    arrivals: list[tuple[str, str]] = []
    with FakeLLMThread() as fake:
        assert fake.url.startswith("http://127.0.0.1:")
        run = fake.open_run(
            "t1", llm=[LlmEntry({"text": "hi"}, Where("x"))], tools=[], catalog=DEFAULT_CATALOG
        )
        run.on_request(lambda rec: arrivals.append((threading.current_thread().name, rec.path)))
        status, body = post(f"{run.base_url}/stream", {"messages": []})
        assert status == 200
        assert [json.loads(line)["type"] for line in body.splitlines()][-1] == "finish"
        with pytest.raises(ValueError, match="already open"):
            fake.open_run("t1", llm=[], tools=[], catalog={})
        fake.close_run("t1")
        status, _ = post(f"{run.base_url}/stream", {"messages": []})
        assert status == 404
    assert arrivals == [("fakellm", "/stream")]  # callbacks run on the server thread
    assert threading.active_count() == before


def test_thread_stop_cuts_a_hanging_request() -> None:
    fake = FakeLLMThread()
    fake.start()
    run = fake.open_run("h", llm=[{"text": "p", "then": "hang"}], tools=[], catalog={})
    outcome: list[BaseException | tuple[int, bytes]] = []

    def client() -> None:
        try:
            outcome.append(post(f"{run.base_url}/stream", {"messages": []}, timeout=10))
        except Exception as exc:
            outcome.append(exc)

    worker = threading.Thread(target=client)
    worker.start()
    while not run.requests:
        threading.Event().wait(0.005)
    fake.stop()
    worker.join(timeout=5)
    assert not worker.is_alive() and outcome  # the client was released, not left hanging
    rec: ModelRequest = run.requests[0]
    assert rec.problem == "run closed" and not rec.aborted


def scenario(tmp: Path) -> Scenario:
    return Scenario(
        name="manual/serve",
        path=tmp / "serve.yaml",
        description="",
        tools=[tool("echo")],
        llm=[LlmEntry({"text": "hello"}, Where("serve.yaml", 3))],
    )


async def test_serve_scenario_prints_bases_and_serves(tmp_path: Path) -> None:
    out = io.StringIO()
    started = asyncio.Event()
    task = asyncio.create_task(serve_scenario(scenario(tmp_path), 0, out=out, started=started))
    await asyncio.wait_for(started.wait(), 10)
    lines = out.getvalue().splitlines()
    assert lines[0] == "fake LLM serving manual/serve (1 llm entries)"
    base = lines[1].split()[1]
    assert base.startswith("http://127.0.0.1:") and base.endswith("/runs/scenario")
    assert [line.split()[0] for line in lines[1:]] == [
        "parity-stream/1",
        "openai",
        "openai",
        "anthropic",
        "mcp",
    ]
    async with httpx.AsyncClient() as client:
        catalog = (await client.get(f"{base}/catalog")).json()
        reply = await client.post(f"{base}/v1/chat/completions", json={"messages": []})
    assert [t["name"] for t in catalog["tools"]] == ["echo"]
    assert reply.json()["choices"][0]["message"]["content"] == "hello"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    echoed = out.getvalue().splitlines()[len(lines) :]
    assert [line.split()[2:] for line in echoed] == [
        ["GET", "/catalog", "[parity-stream]"],
        ["POST", "/v1/chat/completions", "[openai-chat]"],
    ]


async def test_serve_scenario_loads_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text("description: tiny\nllm:\n  - text: from yaml\nsteps:\n  - initialize: {}\n")
    out = io.StringIO()
    started = asyncio.Event()
    task = asyncio.create_task(serve_scenario(path, 0, out=out, started=started))
    await asyncio.wait_for(started.wait(), 10)
    base = out.getvalue().splitlines()[1].split()[1]
    async with httpx.AsyncClient() as client:
        reply = await client.post(f"{base}/stream", json={"messages": []})
    assert reply.text.splitlines()[1] == '{"type":"text-delta","index":0,"text":"f"}'
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_serve_scenario_json_events_report_requests_and_aborts(tmp_path: Path) -> None:
    hanging = Scenario(
        name="manual/json",
        path=tmp_path / "json.yaml",
        description="",
        llm=[LlmEntry({"text": "partial", "deltas": 7, "then": "hang"}, Where("json.yaml", 3))],
    )
    out = io.StringIO()
    started = asyncio.Event()
    task = asyncio.create_task(
        serve_scenario(hanging, 0, out=out, started=started, json_events=True)
    )
    await asyncio.wait_for(started.wait(), 10)
    ready = json.loads(out.getvalue().splitlines()[0])
    assert list(ready) == ["event", "base"] and ready["event"] == "ready"
    base = ready["base"]
    assert base.startswith("http://127.0.0.1:") and base.endswith("/runs/scenario")
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hang"}]}]}
    async with httpx.AsyncClient() as client:
        async with client.stream("POST", f"{base}/stream", json=body) as reply:
            first = await anext(reply.aiter_lines())  # the held stream has started
        # leaving the block closed the connection mid-stream: the client aborted
        for _ in range(200):
            if '"aborted"' in out.getvalue():
                break
            await asyncio.sleep(0.01)
    assert json.loads(first) == {"type": "block-start", "index": 0, "blockType": "text"}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[1:] == [
        {"event": "request", "seq": 0, "method": "POST", "path": "/stream", "body": body},
        {"event": "aborted", "seq": 0},
    ]


def test_fake_llm_cli_json_flag() -> None:
    from parity.cli.main import build_parser

    assert build_parser().parse_args(["fake-llm", "x.yaml", "--json"]).json is True
    assert build_parser().parse_args(["fake-llm", "x.yaml"]).json is False


def test_thread_with_mcp_http_leaves_no_pending_task(caplog: pytest.LogCaptureFixture) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def list_names(url: str) -> list[str]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            return [t.name for t in (await mcp.list_tools()).tools]

    with FakeLLMThread() as fake:
        fake.open_run("m", llm=[], tools=[tool("echo")], catalog={})
        entry = fake.mcp_http_entry("m")
        assert entry["type"] == "http"
        assert asyncio.run(list_names(entry["url"])) == ["echo"]
    gc.collect()  # a pending task left on the closed loop would be reported now
    assert "Task was destroyed" not in caplog.text


def test_close_run_gives_a_closed_client_time_to_be_noticed() -> None:
    """The runner closes a run right after the agent exits. A request the client closed
    just before is an abort, not a request left open; one still held after the grace
    is cut and recorded as `run closed`."""
    import socket
    import time

    with FakeLLMThread() as fake:
        for name, close_first in (("quit", True), ("held", False)):
            run = fake.open_run(name, llm=[{"text": "p", "then": "hang"}], tools=[], catalog={})
            host, port = run.base_url.split("//")[1].split("/")[0].split(":")
            body = json.dumps({"messages": []}).encode()
            sock = socket.create_connection((host, int(port)))
            path = f"/runs/{name}/stream"
            head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            deadline = time.monotonic() + 5
            while not run.requests and time.monotonic() < deadline:
                time.sleep(0.01)
            if close_first:
                sock.close()  # the agent exits: its socket closes with it
            fake.close_run(name, grace=1.0)
            rec = run.requests[0]
            if close_first:
                assert rec.aborted and rec.problem is None
            else:
                assert rec.problem == "run closed" and not rec.aborted
                sock.close()

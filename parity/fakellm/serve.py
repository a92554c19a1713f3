"""`parity fake-llm --scenario FILE [--port N] [--json]`: serve one scenario's script by hand.

Useful to point an agent (or curl) at the fake outside a test run. The scenario is
served under the fixed run id `scenario`; every request is echoed as it arrives.

With `--json` (for programs driving the fake, e.g. the DSH plugin's node tests) every
line is one JSON event instead: `{"event": "ready", "base": ...}` once listening, then
`{"event": "request", "seq", "method", "path", "body"}` per request as it arrives and
`{"event": "aborted", "seq"}` when the client aborts a request.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from parity.core.transcript import ModelRequest
from parity.fakellm.mcp_stdio import mcp_server_entry
from parity.fakellm.server import FakeLLM
from parity.scenario.load import load_scenario
from parity.scenario.model import Scenario

RUN_ID = "scenario"


def endpoints(base: str) -> list[tuple[str, str]]:
    """(dialect, what to configure) for every dialect served under a run base."""
    mcp = " ".join(mcp_server_entry(base)["args"])
    return [
        ("parity-stream/1", f"{base}  (GET /catalog, POST /stream, POST /tools/call)"),
        ("openai chat", f"{base}/v1  (POST /chat/completions, GET /models)"),
        ("openai responses", f"{base}/v1  (POST /responses)"),
        ("anthropic messages", f"{base}  (POST /v1/messages)"),
        ("mcp fixture tools", f"{sys.executable} {mcp}"),
    ]


def _echo(out: TextIO) -> Callable[[ModelRequest], None]:
    def show(rec: ModelRequest) -> None:
        print(f"#{rec.seq} {rec.t:7.3f}s {rec.method} {rec.path} [{rec.dialect}]", file=out)
        out.flush()

    return show


def _emit(out: TextIO, event: dict[str, object]) -> None:
    print(json.dumps(event, ensure_ascii=False), file=out)
    out.flush()


def _json_request(out: TextIO) -> Callable[[ModelRequest], None]:
    def show(rec: ModelRequest) -> None:
        fields = {"seq": rec.seq, "method": rec.method, "path": rec.path, "body": rec.body}
        _emit(out, {"event": "request", **fields})

    return show


def _json_abort(out: TextIO) -> Callable[[ModelRequest], None]:
    def show(rec: ModelRequest) -> None:
        _emit(out, {"event": "aborted", "seq": rec.seq})

    return show


async def serve_scenario(
    scenario: str | Path | Scenario,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    out: TextIO = sys.stdout,
    started: asyncio.Event | None = None,
    json_events: bool = False,
    api_key: str | None = None,
) -> None:
    """Serve `scenario` (a file, or an already loaded `Scenario`) until cancelled.

    Prints the base URL of every dialect to `out`, then one line per request; with
    `json_events`, one JSON event per line instead (see the module docstring).
    `started` is set once the server listens (for callers that run this as a task).
    With `api_key`, model calls without that key get 401, as from a real provider (a
    stand-in upstream for `parity capture`, docs/capture.md).
    """
    loaded = scenario if isinstance(scenario, Scenario) else load_scenario(Path(scenario))
    server = FakeLLM()
    await server.start(host, port)
    try:
        run = server.open_run(
            RUN_ID,
            llm=loaded.llm,
            tools=loaded.tools,
            catalog=loaded.fake_catalog,
            api_key=api_key,
        )
        if json_events:
            run.on_request(_json_request(out))
            run.on_abort(_json_abort(out))
            _emit(out, {"event": "ready", "base": run.base_url})
        else:
            run.on_request(_echo(out))
            print(f"fake LLM serving {loaded.name} ({len(loaded.llm)} llm entries)", file=out)
            for dialect, where in endpoints(run.base_url):
                print(f"  {dialect:<19} {where}", file=out)
            out.flush()
        if started is not None:
            started.set()
        await asyncio.Event().wait()
    finally:
        await server.stop()

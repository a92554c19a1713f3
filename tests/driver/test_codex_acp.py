"""Integration: the driver runs a real third-party agent, codex-acp, keyless.

codex-acp (Zed's Codex ACP adapter, a Rust binary shipped in an npm package) talks to
the fake LLM's OpenAI Responses dialect with a private HOME/CODEX_HOME whose
config.toml points it at the run's base URL (docs/peers.md). The tests use the install
`make peers` puts in `.cache/peers/codex-acp` (CI runs it first) and never install
anything themselves: without it they skip, saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parity.core.transcript import Transcript
from parity.driver.process import Ladder
from parity.driver.run import run_scenario
from parity.driver.state import RunPaths
from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG
from parity.targets.launch import Launch
from tests.support.driver import assert_all_gone, chunks, messages, scenario, st

PACKAGE = "@zed-industries/codex-acp@0.16.0"
PREFIX = Path(__file__).resolve().parents[2] / ".cache" / "peers" / "codex-acp"
BINARY = PREFIX / "node_modules" / ".bin" / "codex-acp"
CONFIG = """\
model = "gpt-5.4-mini"
model_provider = "fake"
approval_policy = "on-request"

[model_providers.fake]
name = "Fake"
base_url = "{base}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


@pytest.fixture(scope="module")
def codex_acp() -> Path:
    """The codex-acp binary that `make peers` installed."""
    if not BINARY.exists():
        pytest.skip(f"codex-acp ({PACKAGE}) is not installed: run `make peers`")
    return BINARY


async def run_codex(
    binary: Path, fake: FakeLLM, llm: list[dict[str, Any]], texts: list[str], **kw: Any
) -> Transcript:
    llm_run = fake.open_run("codex", llm=llm, tools=[], catalog=DEFAULT_CATALOG)

    def launch(paths: RunPaths) -> Launch:
        return Launch(
            [str(binary), "-c", 'sandbox_mode="danger-full-access"'],
            {"CODEX_HOME": str(paths.home), "FAKE_API_KEY": "sk-fake"},
            files={"config.toml": CONFIG.format(base=llm_run.base_url)},
            fixture_tools="mcp",
        )

    steps = [st("initialize"), st("new_session", as_="s1")]
    steps += [st("prompt", session="s1", text=text) for text in texts]
    transcript = await run_scenario(
        scenario(steps, **kw),
        launch,
        llm_run=llm_run,
        run_id="codex",
        target="codex-acp",
        # codex-acp ignores stdin EOF; do not wait long before SIGTERM.
        ladder=Ladder(eof=0.5, term=2.0, kill=2.0),
    )
    assert_all_gone(transcript)
    return transcript


def updates(t: Transcript, kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in messages(t, "in", "session/update")
        if m["params"]["update"].get("sessionUpdate") == kind
    ]


async def test_text_turn_then_tool_call_turn(codex_acp: Path, fake: FakeLLM) -> None:
    llm: list[dict[str, Any]] = [
        {"text": "Hello from the fake"},
        {
            "tool_calls": [
                {"id": "call-1", "name": "exec_command", "arguments": {"cmd": "cat notes.txt"}}
            ]
        },
        {"text": "The file says hello"},
    ]
    t = await run_codex(
        codex_acp, fake, llm, ["say hello", "read notes.txt"], files={"notes.txt": "hello\n"}
    )
    assert t.problems == []
    assert [s.problem for s in t.steps] == [None] * 4
    init, new, text_turn, tool_turn = t.steps
    assert init.response["result"]["protocolVersion"] == 1
    session_id = new.response["result"]["sessionId"]
    assert isinstance(session_id, str) and session_id
    assert text_turn.response["result"] == {"stopReason": "end_turn"}
    assert tool_turn.response["result"] == {"stopReason": "end_turn"}

    # The text turn: one chunk per provider delta, all inside the prompt step.
    first_texts = [
        t.frames[i].message["params"]["update"]["content"]["text"]
        for i in text_turn.frames
        if (t.frames[i].message.get("params") or {}).get("update", {}).get("sessionUpdate")
        == "agent_message_chunk"
    ]
    assert "".join(first_texts) == "Hello from the fake"

    # The tool turn: the scripted call ran for real in the run's workdir.
    (call,) = updates(t, "tool_call")
    assert call["toolCallId"] == "call-1"
    done = [u for u in updates(t, "tool_call_update") if u.get("status") == "completed"]
    assert done and done[-1]["toolCallId"] == "call-1"
    assert "hello" in json.dumps(done[-1])
    assert "".join(chunks(t)).endswith("The file says hello")

    # The model view: three Responses requests, each consuming its script entry; the
    # last one carries the command's output back to the model.
    assert [(r.path, r.dialect, r.entry) for r in t.model_requests] == [
        ("/v1/responses", "openai-responses", 0),
        ("/v1/responses", "openai-responses", 1),
        ("/v1/responses", "openai-responses", 2),
    ]
    outputs = [
        i for i in t.model_requests[2].body["input"] if i.get("type") == "function_call_output"
    ]
    assert outputs and outputs[0]["call_id"] == "call-1" and "hello" in json.dumps(outputs[0])
    # Model requests share the transcript's clock.
    assert text_turn.t_start < t.model_requests[0].t < text_turn.t_end

    # It ignores stdin EOF: the ladder had to go on to SIGTERM.
    (proc,) = t.processes
    assert proc.stopped_by == "sigterm"

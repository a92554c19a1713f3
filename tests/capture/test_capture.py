"""`parity capture` end to end: a second fake LLM plays the real provider (its answers
scripted, its API key required); the capture records a target's session against it and
the written scenario replays with no key and no provider."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from parity.capture.session import CaptureRefused, Outcome, capture
from parity.config.project import load_config
from parity.core.transcript import ModelRequest, Transcript
from parity.driver import run as driver_run
from parity.engine.postrun import normalized
from parity.engine.runner import Runner
from parity.fakellm.dialects import dialect_of
from parity.fakellm.run import Run
from parity.fakellm.thread import FakeLLMThread
from parity.fakellm.upstream import Upstream
from parity.scenario.load import load_scenario
from parity.scenario.model import Tool

REPO = Path(__file__).resolve().parents[2]
CONFIG = load_config(REPO)
KEY = "sk-capture-" + "7f3a9c1e5b2d4f60" * 2
"""The provider's key: long and unique, so a grep finds any copy of it."""

ECHO = Tool(
    "echo",
    "Return a deterministic result.",
    {"type": "object", "properties": {}},
    [{"type": "text", "text": "tool result"}],
)

PROVIDER_SCRIPT: list[dict[str, Any]] = [
    {"match": {"tools": "none"}, "text": "Echo check"},  # a session title (opencode asks)
    {
        "reasoning": "The user wants the echo tool.",
        "text": "Calling echo.",
        "tool_calls": [{"id": "call-1", "name": "echo", "arguments": {"note": "one"}}],
        "usage": {"input": 20, "output": 6},
    },
    {"text": "The echo tool said: tool result.", "usage": {"input": 31, "output": 8}},
]
"""The provider's side of a two-step tool conversation (a real model would improvise)."""

STEPS = """\
description: Call the echo fixture tool, then answer.
client: {permission: allow-once}
timeouts: {startup: 60, response: 60}  # agents starting on a loaded CI machine
tools:
  - name: echo
    description: Return a deterministic result.
    result: tool result
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: call the echo tool}
"""


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeLLMThread]:
    fake = FakeLLMThread()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def kept_run_dirs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Run directories are kept (not removed after each run), so a test can read them."""
    kept: list[Path] = []
    monkeypatch.setattr(driver_run, "_remove_later", kept.append)
    return kept


def provider_run(fake: FakeLLMThread, name: str) -> Run:
    return fake.open_run(name, llm=PROVIDER_SCRIPT, tools=[ECHO], catalog={}, api_key=KEY)


def holding_key(root: Path, since: float) -> list[Path]:
    """Files below `root` written since `since` that hold the key."""
    hits = []
    skip = {".git", ".venv", ".cache", "node_modules", ".mypy_cache", ".ruff_cache"}
    for path in root.rglob("*"):
        if skip.intersection(path.parts):
            continue
        try:
            fresh = path.is_file() and path.stat().st_mtime >= since
            if fresh and KEY.encode() in path.read_bytes():
                hits.append(path)
        except OSError:
            continue
    return hits


PEER_STEPS = STEPS.replace(
    "  - prompt:",
    # As the shipped peer scenarios do: qwen-code announces its commands at a moment of
    # its own; waiting for them keeps them out of the prompt's updates.
    "  - wait: {update: available_commands_update}\n  - prompt:",
)


def run_capture(
    provider: FakeLLMThread,
    target: str,
    out: Path,
    key: str = KEY,
    steps: str = STEPS,
    keep_refused: bool = False,
) -> tuple[Outcome, Run]:
    run = provider_run(provider, f"{target}-{out.stem}")
    base = {**yaml.safe_load(steps), "targets": [target]}
    upstream = Upstream(run.base_url + "/v1", "openai-chat", "deepseek-chat", key)
    try:
        outcome = capture(
            CONFIG, target=target, upstream=upstream, base=base, out=out, keep_refused=keep_refused
        )
        return outcome, run
    finally:
        provider.close_run(run.run_id)  # no provider from here on: replays are keyless


def replay(out: Path, target: str) -> tuple[Any, Any]:
    """(the view of a keyless replay, its transcript)."""
    scenario = load_scenario(out)
    with Runner(CONFIG) as runner:
        transcript = runner.execute(scenario, target)
    return normalized(scenario, transcript), transcript


def model_calls(transcript: Transcript) -> list[ModelRequest]:
    return [r for r in transcript.model_requests if dialect_of(r.path) is not None]


def skip_unless_runs(target: str) -> None:
    why = Runner(CONFIG).unavailable(target)
    if why is not None:
        pytest.skip(f"{target} cannot run here: {why}")


def test_capture_against_plus_replays_keyless(
    provider: FakeLLMThread, tmp_path: Path, kept_run_dirs: list[Path]
) -> None:
    since = time.time() - 1
    out = tmp_path / "scenarios" / "captured" / "echo.yaml"
    outcome, run = run_capture(provider, "plus", out)
    assert (outcome.problems, outcome.replay_problems, outcome.replay_diff) == ([], [], None)
    assert outcome.entries == 2
    # The provider was asked in its own dialect, for the model named, with the real key.
    assert [r.dialect for r in run.requests] == ["openai-chat", "openai-chat"]
    assert {r.body["model"] for r in run.requests} == {"deepseek-chat"}
    assert all(r.problem is None for r in run.requests)
    # plus asks for the fake catalog's default effort; that is no choice of the user's.
    assert all("reasoning_effort" not in r.body for r in run.requests)
    data = yaml.safe_load(out.read_text())
    assert data["captured"]["target"] == "plus"
    first, second = data["llm"]
    assert first["reasoning"] == "The user wants the echo tool."
    assert first["tool_calls"] == [{"id": "call-1", "name": "echo", "arguments": {"note": "one"}}]
    assert first["usage"] == {"input": 20, "output": 6}
    assert second["text"] == "The echo tool said: tool result."
    assert second["request"]["prefix"] >= 1  # stored as what it adds to the first request
    text = out.read_text()
    assert "<workdir>" in text  # plus tells the model its workspace: a token, not a path
    assert "/tmp/parity-" not in text and os.path.expanduser("~") + "/" not in text
    # Keyless: the provider's run is closed; the replay must not need it.
    view, transcript = replay(out, "plus")
    assert transcript.problems == []
    assert [r.problem for r in model_calls(transcript)] == [None, None]
    assert outcome.transcript is not None
    assert normalized(load_scenario(out), outcome.transcript) == view  # the captured run
    # The key is in no file the capture or the replays wrote, run directories included.
    assert kept_run_dirs
    for root in [tmp_path, REPO, *kept_run_dirs]:
        assert holding_key(root, since) == [], root


def test_capture_against_a_peer_replays_keyless(provider: FakeLLMThread, tmp_path: Path) -> None:
    """qwen-code speaks OpenAI chat itself: its requests go to the provider as it wrote
    them, and it calls the fixture tool by its MCP name, recorded as the fixture's."""
    skip_unless_runs("qwen-code")
    out = tmp_path / "qwen.yaml"
    outcome, run = run_capture(provider, "qwen-code", out, steps=PEER_STEPS)
    assert (outcome.problems, outcome.replay_problems, outcome.replay_diff) == ([], [], None)
    data = yaml.safe_load(out.read_text())
    calls = [c for e in data["llm"] for c in e.get("tool_calls", [])]
    assert [c["name"] for c in calls] == ["echo"]
    assert any("tools" in r.body and r.body["model"] == "deepseek-chat" for r in run.requests)
    _, transcript = replay(out, "qwen-code")
    assert transcript.problems == []
    assert KEY not in out.read_text()


def test_a_changed_prompt_fails_with_the_request_diff(
    provider: FakeLLMThread, tmp_path: Path
) -> None:
    out = tmp_path / "echo.yaml"
    run_capture(provider, "plus", out)
    data = yaml.safe_load(out.read_text())
    data["steps"][2]["prompt"]["text"] = "call the echo tool twice"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    _, transcript = replay(out, "plus")
    problems = [r.problem for r in transcript.model_requests if r.problem]
    assert len(problems) == 1
    assert problems[0].startswith("stale recording: the agent's request no longer matches llm[0]")
    assert "re-capture" in problems[0]
    assert '-     "text": "call the echo tool",' in problems[0]
    assert '+     "text": "call the echo tool twice",' in problems[0]


def test_other_targets_replay_the_answers_without_the_request_check(
    provider: FakeLLMThread, tmp_path: Path
) -> None:
    """Captured from plus, replayed against plus-openai (another dialect, other requests):
    the recorded requests are plus's, so only the answers are used."""
    out = tmp_path / "echo.yaml"
    run_capture(provider, "plus", out)
    _, transcript = replay(out, "plus-openai")
    assert [r.problem for r in model_calls(transcript)] == [None, None]
    assert transcript.steps[2].response["result"] == {"stopReason": "end_turn"}


def test_a_provider_error_is_recorded_and_the_wrong_key_is_not(
    provider: FakeLLMThread, tmp_path: Path
) -> None:
    """The provider refuses a wrong key with 401: the capture fails and writes nothing;
    asked to keep it, it records that answer as an `error` entry (the agent saw it fail),
    and the key sent is scrubbed like any key."""
    wrong = "sk-wrong-" + "0123456789abcdef" * 2
    out = tmp_path / "denied.yaml"
    with pytest.raises(CaptureRefused, match=r"llm\[0\]: HTTP 401: invalid API key: <redacted>"):
        run_capture(provider, "plus", out, key=wrong)
    assert not out.exists()
    outcome, run = run_capture(provider, "plus", out, key=wrong, keep_refused=True)
    assert outcome.refused == [
        "llm[0]: HTTP 401: invalid API key: <redacted> (authentication_error)"
    ]
    assert [r.status for r in run.requests] == [401]
    data = yaml.safe_load(out.read_text())
    assert data["llm"][0]["error"]["status"] == 401
    # The stand-in echoes the key it was given, as some providers do.
    assert run.requests[0].problem == f"invalid API key: {wrong}"
    assert data["llm"][0]["error"]["message"] == "invalid API key: <redacted>"
    assert wrong not in out.read_text()
    assert outcome.replay_diff is None


def test_capture_against_the_real_native(provider: FakeLLMThread, tmp_path: Path) -> None:
    """A real native (DSH) session becomes a scenario too, through the same recording
    mode as acp-plus (both speak parity-stream to the fake)."""
    skip_unless_runs("native")
    out = tmp_path / "native.yaml"
    outcome, run = run_capture(provider, "native", out)
    assert (outcome.problems, outcome.replay_problems, outcome.replay_diff) == ([], [], None)
    assert outcome.entries == 2
    assert [r.dialect for r in run.requests] == ["openai-chat", "openai-chat"]
    assert KEY not in out.read_text()

"""Shared helpers for the driver tests: scenarios in code, fixture-agent launches,
and the check that nothing a run started is still alive."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parity.core.transcript import Frame, Transcript
from parity.driver.process import Ladder, group_members
from parity.driver.run import run_scenario
from parity.driver.state import LlmRun, RunPaths
from parity.scenario.model import Scenario, Step, Tool, Where
from parity.targets.launch import Launch

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
FAST = Ladder(eof=1.0, term=1.0, kill=2.0)
"""Short shutdown waits: the fixture agents exit at once on EOF unless they are the
fault that ignores it."""


def st(kind: str, mapping: Any = None, /, **kw: Any) -> Step:
    """A step, e.g. `st("new_session", as_="s1")` (a trailing `_` is dropped)."""
    params = mapping if mapping is not None else {k.rstrip("_"): v for k, v in kw.items()}
    return Step(kind, params, Where("test.yaml", 1))


BASIC = [st("initialize"), st("new_session", as_="s1")]


def scenario(steps: list[Step], **kw: Any) -> Scenario:
    return Scenario(name="driver/test", path=Path("test.yaml"), description="", steps=steps, **kw)


def agent(name: str, env: dict[str, str] | None = None, **kw: Any) -> Callable[[RunPaths], Launch]:
    """A `make_launch` for the fixture agent `name` (a script in tests/fixtures/agents)."""

    def make(paths: RunPaths) -> Launch:
        return Launch([sys.executable, str(AGENTS / f"{name}.py")], dict(env or {}), **kw)

    return make


async def run(
    steps: list[Step],
    name: str = "echo_agent",
    *,
    llm_run: LlmRun | None = None,
    env: dict[str, str] | None = None,
    launch: dict[str, Any] | None = None,
    ladder: Ladder = FAST,
    **kw: Any,
) -> Transcript:
    """Run `steps` against a fixture agent and check that no process survived."""
    transcript = await run_scenario(
        scenario(steps, **kw),
        agent(name, env, **(launch or {})),
        llm_run=llm_run,
        run_id="test",
        target=name,
        ladder=ladder,
    )
    assert_all_gone(transcript)
    return transcript


def assert_all_gone(transcript: Transcript) -> None:
    for proc in transcript.processes:
        assert group_members(proc.pid) == [], f"process group {proc.pid} survived"


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def messages(t: Transcript, direction: str, method: str | None = None) -> list[Any]:
    """Parsed messages of one direction (optionally of one method), in wire order."""
    return [
        f.message
        for f in t.frames
        if f.direction == direction
        and isinstance(f.message, dict)
        and (method is None or f.message.get("method") == method)
    ]


def chunks(t: Transcript) -> list[str]:
    """Texts of the agent_message_chunk updates, in order."""
    return [
        m["params"]["update"]["content"]["text"]
        for m in messages(t, "in", "session/update")
        if m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
    ]


def frame_of(t: Transcript, pred: Callable[[Frame], bool]) -> Frame:
    return next(f for f in t.frames if pred(f))


def echo_tool() -> Tool:
    return Tool(
        "echo", "Echo.", {"type": "object", "properties": {}}, [{"type": "text", "text": "r"}]
    )

"""Views of real runs: fixture agents as real processes, driven by the real driver.

Two runs of one scenario get different run directories, ports of nothing, and (for the
agents that make them) different ids; their views must still be equal, and the parity
diff between them empty.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from parity.checks.diff import compare
from parity.core.transcript import Transcript
from parity.driver.process import Ladder
from parity.driver.run import run_scenario
from parity.driver.state import RunPaths
from parity.scenario.model import Rule, Scenario, Step, Where
from parity.targets.launch import Launch
from parity.view.normalize import view

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


def st(kind: str, params: Any) -> Step:
    return Step(kind, params, Where("real.yaml", 1))


async def play(agent: str, steps: list[Step], run_id: str) -> Transcript:
    def launch(_paths: RunPaths) -> Launch:
        return Launch([sys.executable, str(AGENTS / f"{agent}.py")], {})

    scenario = Scenario(name="unit/real", path=Path("real.yaml"), description="", steps=steps)
    return await run_scenario(
        scenario,
        launch,
        llm_run=None,
        run_id=run_id,
        target=agent,
        ladder=Ladder(eof=1.0, term=1.0, kill=2.0),
    )


PARALLEL = [
    st("initialize", {}),
    st("parallel", {"steps": [st("new_session", {"as": "a"}), st("new_session", {"as": "b"})]}),
    st(
        "parallel",
        {
            "steps": [
                st("prompt", {"session": "a", "text": "stream 3"}),
                st("prompt", {"session": "b", "text": "hello {workdir}"}),
            ]
        },
    ),
]


async def test_two_real_runs_give_equal_views_and_no_parity_difference() -> None:
    first = await play("echo_agent", PARALLEL, "norm-a")
    second = await play("echo_agent", PARALLEL, "norm-b")
    assert first.paths["workdir"] != second.paths["workdir"]
    a, b = view(first, "exact", []), view(second, "exact", [])
    assert a == b
    report = compare(a, b, profile="exact", diverge=[], ref_name="a", other_name="b")
    assert report.ok, report.render()
    # Each parallel child holds only its own session's frames.
    prompts = [s for s in a["steps"] if s["do"] == "prompt"]
    assert [[u["session"] for u in s["updates"]] for s in prompts] == [
        ["<session:1>"] * 3,
        ["<session:2>"],
    ]
    assert prompts[1]["updates"][0]["content"]["text"] == "hello <workdir>"
    assert [s["do"] for s in a["steps"]][1] == "parallel"
    assert "updates" not in a["steps"][1]


async def test_updates_after_the_prompt_response_are_late() -> None:
    steps = [
        st("initialize", {}),
        st("new_session", {"as": "s1"}),
        st("prompt", {"session": "s1", "text": "go"}),
        st("wait", {"ms": 300}),
    ]
    t = await play("late_updates", steps, "norm-late")
    v = view(t, "exact", [Rule(path="*.session_info_update.title", reason="titles vary")])
    prompt, wait = v["steps"][2], v["steps"][3]
    # Whether the trailing frames fall in the prompt's or the wait's time range is a
    # race; they are about a session whose prompt was answered, so they are its `late`.
    assert [u["content"]["text"] for u in prompt["updates"]] == ["answer"]
    assert prompt["late"] == [
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"text": "late", "type": "text"},
            }
        },
        {"update": {"sessionUpdate": "session_info_update", "title": "<masked>"}},
    ]
    assert "updates" not in wait
    assert v["masked"] == {"*.session_info_update.title": 1}

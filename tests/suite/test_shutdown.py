"""Shutdown: the per-target EOF stage, and a terminated harness leaves no agent behind.

Real agents (the mini agent in its stubborn modes), a real fake LLM, a real `parity run`
child that gets a real SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parity.config.project import load_config
from parity.driver.process import group_members
from parity.engine.runner import Runner
from parity.scenario.load import load_scenario
from tests.support.project import TEXT_SCENARIO, Project, child_env, mini_target

STUBBORN = 'MINI_IGNORE_EOF = "1"'


def test_the_eof_stage_is_short_for_peers_and_set_per_target(project: Project) -> None:
    project.write(
        "parity.toml",
        mini_target("stubborn", extra_env=STUBBORN)
        + mini_target("patient", extra_env=STUBBORN)
        + "shutdown_eof = 1.5\n",
    )
    config = load_config(project.root)
    scenario = load_scenario(project.root / "scenarios/demo/text.yaml", config.scenarios_dir)
    with Runner(config) as runner:
        short = runner.execute(scenario, "stubborn")
        long = runner.execute(scenario, "patient")
    # An agent that ignores EOF waits out the EOF stage, then SIGTERM ends it.
    assert [p.stopped_by for p in short.processes] == ["sigterm"]
    assert [p.stopped_by for p in long.processes] == ["sigterm"]
    assert 0.5 <= short.timings["teardown"] < 1.4, short.timings
    assert 1.5 <= long.timings["teardown"] < 3.0, long.timings


HANG_SCENARIO = TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [hang]").replace(
    "steps:", "timeouts: {response: 120, run: 240}\nsteps:"
)


def _wait_for_pid(log: Path, proc: subprocess.Popen[str], limit: float = 60) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().strip():
            return int(log.read_text().split()[0])
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"parity run ended before the agent started:\n{out}\n{err}")
        time.sleep(0.05)
    proc.kill()
    pytest.fail("the hanging agent never started a session")


def _gone(pgid: int, limit: float = 5) -> bool:
    deadline = time.monotonic() + limit
    while group_members(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize(
    ("command", "sig"),
    [
        (["run", "scenarios/demo/hang.yaml"], signal.SIGTERM),
        (["run", "scenarios/demo/hang.yaml"], signal.SIGINT),
        (["run", "scenarios/demo/hang.yaml", "-n", "2"], signal.SIGTERM),
        (["show", "demo/hang", "hang"], signal.SIGTERM),  # outside pytest: the CLI's own
    ],
    ids=["run", "run-sigint", "run-xdist", "show"],
)
def test_sigterm_to_the_harness_leaves_no_agent_running(
    project: Project, tmp_path: Path, command: list[str], sig: signal.Signals
) -> None:
    log = tmp_path / "agent.pids"
    # The agent hangs in session/prompt and ignores SIGTERM: only SIGKILL ends it.
    project.write(
        "parity.toml", mini_target("hang", extra_env=f'MINI_HANG = "1", MINI_LOG = "{log}"')
    )
    project.write("scenarios/demo/hang.yaml", HANG_SCENARIO)
    harness = subprocess.Popen(
        [sys.executable, "-m", "parity.cli", *command],
        cwd=project.root,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        agent = _wait_for_pid(log, harness)
        assert group_members(agent), "the agent should be running (in its own group)"
        time.sleep(0.3)  # the prompt request is out; the agent is inside its hang
        harness.send_signal(sig)
        out, err = harness.communicate(timeout=60)
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.communicate()
    survived = not _gone(agent)
    if survived:
        os.killpg(agent, signal.SIGKILL)  # a failing test must not leak the agent either
    assert not survived, f"agent {agent} outlived the harness:\n{out}\n{err}"
    assert harness.returncode != 0, out
    assert "Traceback" not in err + out, err
    if command[0] == "run":
        # The summary says first that the session was interrupted, and during what.
        line = f"interrupted by {sig.name} during scenarios/demo/hang.yaml::hang"
        assert line in out.split("parity summary", 1)[-1], out

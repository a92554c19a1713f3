"""The tests' forked `parity` (tests/support/forked_cli.py) answers as a fresh interpreter
does: the same status, stdout and stderr, each call with its own environment and
directory, and a call past its timeout killed and reported as `subprocess.run` would."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.forked_cli import Zygote, run_cli
from tests.support.project import TEXT_SCENARIO, Project, child_env, mini_target

BROKEN = "description: broken\ntargets: [mini]\nsteps:\n  - prompt: {session: s1, txt: hi}\n"
HANGS = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "silent_agent.py"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    proj = Project(tmp_path / "proj")
    proj.write("parity.toml", mini_target("mini") + mini_target("mini-b"))
    proj.write("scenarios/demo/a.yaml", TEXT_SCENARIO)
    return proj


def fresh(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "parity.cli", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate"],
        ["validate", "scenarios/demo/broken.yaml"],
        ["targets"],
    ],
    ids=["help", "validate", "broken", "targets"],
)
def test_a_forked_call_answers_as_a_fresh_interpreter(project: Project, args: list[str]) -> None:
    project.write("scenarios/demo/broken.yaml", BROKEN)
    env = child_env()
    forked = run_cli(args, project.root, env, 120)
    again = fresh(args, project.root, env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        again.returncode,
        again.stdout,
        again.stderr,
    )


def test_each_call_has_exactly_its_own_environment_and_directory(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A zygote started where CI=true (a CI machine's worker): a call whose environment
    # has no CI runs as a local run (an unused snapshot listed, the run passes), one with
    # CI=true as a CI run (it fails).
    monkeypatch.setenv("CI", "true")
    zygote = Zygote()
    try:
        assert project.parity("record", "-q").returncode == 0
        project.write("snapshots/demo/gone/mini.yaml", "steps: []\n")
        local = zygote.run(["run", "-q"], project.root, child_env(), 120)
        assert local.returncode == 0, local.stdout + local.stderr
        under_ci = zygote.run(["run", "-q"], project.root, child_env(CI="true"), 120)
        assert under_ci.returncode == 1, under_ci.stdout
        # A relative scenario path is the call's directory's.
        scenario = ["validate", "scenarios/demo/a.yaml"]
        assert zygote.run(scenario, project.root.parent, child_env(), 60).returncode != 0
        assert zygote.run(scenario, project.root, child_env(), 60).returncode == 0
    finally:
        zygote.close()


def test_a_call_past_its_timeout_is_killed_and_raises_as_subprocess_run_does(
    project: Project,
) -> None:
    project.write(
        "parity.toml",
        mini_target("mini") + mini_target("mini-b", agent=HANGS),
    )
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli(["run", "demo/a", "--targets", "mini-b"], project.root, child_env(), 2)
    assert time.monotonic() - start < 10
    # The zygote is still there for the next call.
    assert run_cli(["--help"], project.root, child_env(), 60).returncode == 0

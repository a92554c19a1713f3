"""`parity review`: changed and new snapshots walked one by one, at a real terminal
(pexpect), and refused without one unless --accept-all / --reject-all says what to do."""

from __future__ import annotations

import subprocess
import sys

import pexpect
import pytest

from parity.cli.review import PROMPT, PROMPT_BLOCKED, blocking_problems
from parity.core.transcript import StepRecord, Transcript
from tests.support.project import Project, child_env

BROKEN = """\
[targets.broken]
family = "peer"
dialect = "parity-stream"
fixture_tools = "stream"
command = ["{python}", "/nonexistent/agent.py"]
"""

BROKEN_SCENARIO = """\
description: an agent that dies at startup
targets: [broken]
steps:
  - initialize: {}
  - new_session: {as: s1}
"""


def spawn(project: Project, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "parity.cli", "review", *args],
        cwd=str(project.root),
        env=child_env(),
        encoding="utf-8",
        timeout=60,
    )


def finish(child: pexpect.spawn) -> int:
    """Wait for the end; the exit status."""
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus)


def no_tty(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """`parity review` with stdin not a terminal (whatever runs the tests)."""
    return subprocess.run(
        [sys.executable, "-m", "parity.cli", "review", *args],
        cwd=project.root,
        env=child_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def changed(project: Project) -> Project:
    """demo/text recorded for mini and mini-b, then its scripted text changed."""
    assert project.parity("record").returncode == 0
    scenario = project.root / "scenarios/demo/text.yaml"
    scenario.write_text(scenario.read_text().replace("text: hello there", "text: hi again"))
    return project


def test_reject_leaves_the_snapshot_then_accept_writes_it(changed: Project) -> None:
    snap, other = changed.snapshot("demo/text", "mini"), changed.snapshot("demo/text", "mini-b")
    before, other_before = snap.read_text(), other.read_text()

    child = spawn(changed, "demo/text", "--targets", "mini")
    child.expect_exact("[1/1] demo/text :: mini (changed)")
    child.expect_exact("recorded snapshot: snapshots/demo/text/mini.yaml")
    child.expect_exact("[changed field] steps[2].updates[0].content.text")
    child.expect_exact('- recorded: "hello there"')
    child.expect_exact('+ mini: "hi again"')
    child.expect_exact(PROMPT)
    child.sendline("r")
    child.expect_exact("rejected: snapshot left as it was")
    child.expect_exact("accepted 0, rejected 1, skipped 0")
    assert finish(child) == 0
    assert snap.read_text() == before

    child = spawn(changed, "--targets", "mini")
    child.expect_exact("[1/1] demo/text :: mini (changed)")
    child.expect_exact(PROMPT)
    child.sendline("a")
    child.expect_exact("accepted: wrote snapshots/demo/text/mini.yaml")
    child.expect_exact("accepted 1, rejected 0, skipped 0")
    assert finish(child) == 0
    text = snap.read_text()
    assert "text: hi again" in text and "hello there" not in text
    assert other.read_text() == other_before  # --targets mini: mini-b not reviewed

    child = spawn(changed, "--targets", "mini")
    child.expect_exact("no changed or new snapshots")
    assert finish(child) == 0


def test_skip_then_quit_and_unknown_answers(changed: Project) -> None:
    before = {t: changed.snapshot("demo/text", t).read_text() for t in ("mini", "mini-b")}
    child = spawn(changed)
    child.expect_exact("2 snapshot(s) to review")
    child.expect_exact("[1/2] demo/text :: mini (changed)")
    child.expect_exact(PROMPT)
    child.sendline("x")
    child.expect_exact("answer a, r, s or q")
    child.expect_exact(PROMPT)
    child.sendline("s")
    child.expect_exact("skipped")
    child.expect_exact("[2/2] demo/text :: mini-b (changed)")
    child.expect_exact(PROMPT)
    child.sendline("q")
    child.expect_exact("accepted 0, rejected 0, skipped 2")  # quit skips the current one
    assert finish(child) == 0
    assert {t: changed.snapshot("demo/text", t).read_text() for t in before} == before


def test_quit_at_the_first_skips_the_rest(changed: Project) -> None:
    before = changed.snapshot("demo/text", "mini-b").read_text()
    child = spawn(changed)
    child.expect_exact("[1/2] demo/text :: mini (changed)")
    child.expect_exact(PROMPT)
    child.sendline("q")
    index = child.expect_exact(["[2/2]", "accepted 0, rejected 0, skipped 2"])
    assert index == 1, "quit went on to the next snapshot"
    assert finish(child) == 0
    assert changed.snapshot("demo/text", "mini-b").read_text() == before


def test_a_new_snapshot_shows_its_yaml_and_accepting_records_it(project: Project) -> None:
    snap = project.snapshot("demo/text", "mini-b")
    child = spawn(project, "demo/text", "--targets", "mini-b")
    child.expect_exact("[1/1] demo/text :: mini-b (new)")
    child.expect_exact("no snapshot yet at snapshots/demo/text/mini-b.yaml")
    child.expect_exact("    do: prompt")  # the view's YAML, indented
    child.expect_exact("text: hello there")
    child.expect_exact(PROMPT)
    assert not snap.exists()
    child.sendline("a")
    child.expect_exact("accepted 1, rejected 0, skipped 0")
    assert finish(child) == 0
    assert snap.is_file()
    # Byte for byte what the plugin expects: in CI (no writing) the item passes.
    run = project.parity("run", "demo/text", "--targets", "mini-b", ci=True)
    assert run.returncode == 0, run.stdout
    assert not project.snapshot("demo/text", "mini").exists()


def test_a_run_with_problems_cannot_be_accepted(project: Project) -> None:
    project.write("parity.toml", (project.root / "parity.toml").read_text() + BROKEN)
    project.write("scenarios/demo/broken.yaml", BROKEN_SCENARIO)
    snap = project.snapshot("demo/broken", "broken")
    child = spawn(project, "demo/broken")
    child.expect_exact("[1/1] demo/broken :: broken (new)")
    child.expect_exact("run problems (a run with problems cannot be accepted):")
    child.expect_exact("agent exited during initialize")
    child.expect_exact(PROMPT_BLOCKED)
    child.sendline("a")
    child.expect_exact("cannot accept: this run had problems")
    child.expect_exact(PROMPT_BLOCKED)
    child.sendline("s")
    child.expect_exact("accepted 0, rejected 0, skipped 1")
    assert finish(child) == 0
    assert not snap.exists()

    done = no_tty(project, "demo/broken", "--accept-all")
    assert done.returncode == 0, done.stderr
    assert "skipped (run had problems, not accepted)" in done.stdout
    assert done.stdout.rstrip().endswith("accepted 0, rejected 0, skipped 1")
    assert not snap.exists()


def test_without_a_terminal_it_refuses_unless_told_what_to_do(changed: Project) -> None:
    snap = changed.snapshot("demo/text", "mini")
    before = snap.read_text()
    refused = no_tty(changed)
    assert refused.returncode == 2
    assert "stdin is not a terminal" in refused.stderr
    assert "--accept-all or --reject-all" in refused.stderr
    assert "running" not in refused.stderr  # refused before any agent ran
    assert refused.stdout == ""

    rejected = no_tty(changed, "--reject-all")
    assert rejected.returncode == 0, rejected.stderr
    assert rejected.stdout.rstrip().endswith("accepted 0, rejected 2, skipped 0")
    assert snap.read_text() == before

    accepted = no_tty(changed, "--accept-all")
    assert accepted.returncode == 0, accepted.stderr
    assert "[changed field] steps[2].updates[0].content.text" in accepted.stdout
    assert accepted.stdout.rstrip().endswith("accepted 2, rejected 0, skipped 0")
    assert "text: hi again" in snap.read_text()
    assert no_tty(changed, "--accept-all").stdout.strip() == "no changed or new snapshots"

    both = no_tty(changed, "--accept-all", "--reject-all")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_targets_that_cannot_run_are_named_not_reviewed(project: Project) -> None:
    scenario = project.root / "scenarios/demo/text.yaml"
    scenario.write_text(scenario.read_text().replace("[mini, mini-b]", "[mini, ghost]"))
    done = no_tty(project, "--reject-all")
    assert done.returncode == 0, done.stderr
    assert "not run: demo/text :: ghost (ghost-agent is not installed here)" in done.stdout
    assert "[1/1] demo/text :: mini (new)" in done.stdout


def test_blocking_problems_are_the_run_level_and_step_problems(project: Project) -> None:
    from parity.scenario.load import load_scenario

    scenario = load_scenario(project.root / "scenarios/demo/text.yaml")
    transcript = Transcript(
        scenario="demo/text",
        target="mini",
        run_id="r",
        problems=["run timed out after 5s"],
        steps=[
            StepRecord(index=0, kind="initialize", label="initialize"),
            StepRecord(
                index=1, kind="prompt", label='prompt s1 "go"', problem="no response within 3s"
            ),
        ],
    )
    assert blocking_problems(scenario, "mini", transcript) == [
        "run timed out after 5s",
        'prompt s1 "go": no response within 3s',
    ]
    clean = Transcript("demo/text", "mini", "r", steps=[StepRecord(index=0, kind="x", label="x")])
    assert blocking_problems(scenario, "mini", clean) == []

"""What `parity run` prints by default: short when green, failures and their diffs
first, every skip reason once in full; unused snapshots fail a whole-suite run under CI.

Each test runs the real CLI in a copy of one throwaway project (`tests.support.project`),
recorded once for the module, without `-v` (the helper adds it for the other tests)
unless it checks `-v` itself.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.support.project import GHOST, TEXT_SCENARIO, Project, mini_target

GHOSTED = TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [ghost, mini]")

GREEN_LINES = 30
"""A green run of the small project below: 5 scenarios, 3 targets, 2 skip reasons."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small project below, recorded once for the module (each test works on a copy)."""
    project = Project(tmp_path_factory.mktemp("terminal") / "proj")
    project.write("parity.toml", mini_target("mini") + mini_target("mini-b") + GHOST)
    for name in ("a", "b", "c"):
        project.write(f"scenarios/demo/{name}.yaml", TEXT_SCENARIO)
    project.write("scenarios/other/ghost-1.yaml", GHOSTED)
    project.write("scenarios/other/ghost-2.yaml", GHOSTED)
    assert project.parity("record").returncode == 0
    return project.root


@pytest.fixture
def small(recorded: Path, tmp_path: Path) -> Project:
    project = Project(tmp_path / "proj")
    shutil.copytree(recorded, project.root)
    return project


def test_a_green_run_is_short_and_has_no_per_item_lines(small: Project) -> None:
    project = small
    done = project.parity("run", verbose=False)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert len(lines) <= GREEN_LINES, done.stdout
    assert not any("::" in line or "PASSED" in line for line in lines), done.stdout
    assert max(map(len, lines)) <= 80, done.stdout
    # A line per target, and where to see the rest.
    assert any(line.startswith("mini-b ") and "3 same vs mini" in line for line in lines)
    assert "more: -v" in done.stdout
    quiet = project.parity("run", "-q", verbose=False)
    assert "11 pass, 4 skip" in quiet.stdout and "target  scenarios" not in quiet.stdout
    assert "target  scenarios" in done.stdout
    verbose = project.parity("run", "-v", verbose=False)
    assert "scenarios/demo/a.yaml::mini PASSED" in verbose.stdout
    assert "demo/a         pass" in verbose.stdout  # the whole table, a row per scenario


def test_a_drifted_snapshot_shows_its_diff_before_any_summary_table(small: Project) -> None:
    project = small
    snap = project.snapshot("demo/b", "mini-b")
    snap.write_text(snap.read_text().replace("hello there", "hello THERE"))
    done = project.parity("run", verbose=False)
    out = done.stdout
    assert done.returncode == 1, out
    diff = out.index("+      text: hello there")
    assert out.index("-      text: hello THERE") < diff
    assert diff < out.index("parity summary") < out.index("failing scenarios: 1")
    assert re.search(r"^demo/b +pass +fail: changed field; same as mini$", out, re.M), out
    assert not re.search(r"^demo/a ", out, re.M)  # a passing scenario's row is left to -v


def test_every_skip_reason_is_stated_once_in_full(small: Project) -> None:
    project = small
    done = project.parity("run", verbose=False)
    out = done.stdout
    assert "skipped: 4 item(s), 2 reason(s)" in out, out
    assert out.count("ghost-agent is not installed here") == 2, out  # one line each
    assert "  2 ghost: ghost-agent is not installed here\n" in out
    reason = "ghost unavailable (ghost-agent is not installed here) and no recorded snapshot"
    assert f"2 parity[mini~ghost]: {reason}" in " ".join(out.split())  # wrapped, not cut


def test_an_unused_snapshot_fails_a_whole_suite_run_under_ci(small: Project) -> None:
    project = small
    project.write("snapshots/demo/retired/mini.yaml", "steps: []\n")  # a scenario gone
    project.write("snapshots/demo/a/dropped.yaml", "steps: []\n")  # a target gone
    done = project.parity("run", ci=True, verbose=False)
    assert done.returncode == 1, done.stdout
    assert "2 snapshot file(s) unused: fails the run under CI" in done.stdout
    assert "snapshots/demo/retired/mini.yaml" in done.stdout
    assert "snapshots/demo/a/dropped.yaml" in done.stdout
    # Locally they are listed and pass; a partial run under CI lists what it can see
    # and does not fail: only a whole-suite run can judge.
    assert project.parity("run", verbose=False).returncode == 0
    partial = project.parity("run", "demo/a", ci=True, verbose=False)
    assert partial.returncode == 0, partial.stdout
    assert "snapshots/demo/a/dropped.yaml" in partial.stdout
    kept = project.parity("run", "--", "--snapshot-warn-unused", ci=True, verbose=False)
    assert kept.returncode == 0, kept.stdout
    assert "snapshots/demo/retired/mini.yaml" in kept.stdout
    assert project.parity("record", ci=True).returncode == 0
    assert project.parity("run", ci=True, verbose=False).returncode == 0

"""The recorded native snapshots are what CI compares acp-plus with: prove it is real.

A throwaway project holds a shipped DSH-family scenario with its committed `native.yaml`
and `plus.yaml`. With no DSH on the machine, `parity run` must compare a live acp-plus
run against the recording and pass; after one field of the recording is changed, it
must fail, naming the scenario, the step and the field.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.support.project import Project

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "baseline/text-exchange"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    shutil.copy(REPO / "parity.toml", tmp_path / "parity.toml")
    # The project's known differences explain native's version facts.
    shutil.copy(REPO / "known-differences.yaml", tmp_path / "known-differences.yaml")
    (tmp_path / "scenarios" / "baseline").mkdir(parents=True)
    shutil.copy(REPO / "scenarios" / f"{SCENARIO}.yaml", tmp_path / "scenarios" / "baseline")
    shutil.copytree(REPO / "snapshots" / SCENARIO, tmp_path / "snapshots" / SCENARIO)
    return Project(tmp_path)


def run_without_dsh(project: Project) -> tuple[int, str]:
    # PARITY_DSH=off: native does not run, even from the wheel in this interpreter's venv.
    # The scenario is named: a run of one scenario cannot call the other known
    # differences stale, it lists them as not checked.
    done = project.parity(
        "run",
        f"scenarios/{SCENARIO}.yaml",
        "--require-targets",
        "native,plus",
        ci=True,
        PATH=str(Path(sys.executable).parent),
        PARITY_DSH="off",
    )
    return done.returncode, done.stdout + done.stderr


def test_recorded_native_is_the_reference_without_dsh(project: Project) -> None:
    code, out = run_without_dsh(project)
    assert code == 0, out
    assert "ran against a recording: native unavailable" in out


def test_one_changed_field_in_the_native_recording_fails(project: Project) -> None:
    path = project.snapshot(SCENARIO, "native")
    text = path.read_text()
    assert text.count("text: hello there") == 1, "mutation anchor not unique"
    path.write_text(text.replace("text: hello there", "text: hello world"))
    code, out = run_without_dsh(project)
    assert code != 0, out
    assert f"{SCENARIO}: plus vs native (reference)" in out
    assert "[changed field] steps[2].updates[0].content.text" in out
    assert "hello world" in out

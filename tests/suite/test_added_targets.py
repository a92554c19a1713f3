"""`--targets +NAME`: a user's own agent joins every scenario of its family, unedited."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.project import GHOST, TEXT_SCENARIO, Project, mini_target

ONLY_MINI = TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini]")


@pytest.fixture(scope="module")
def mini_recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conftest's project with `demo/text` for mini alone, recorded once for the
    module (mini's own snapshot); each test that starts there works on a copy."""
    project = Project(tmp_path_factory.mktemp("added") / "proj")
    project.write("parity.toml", mini_target("mini") + mini_target("mini-b") + GHOST)
    project.write("scenarios/demo/text.yaml", ONLY_MINI)
    assert project.parity("record").returncode == 0
    return project.root


@pytest.fixture
def only_mini(mini_recorded: Path, tmp_path: Path) -> Project:
    project = Project(tmp_path / "proj")
    shutil.copytree(mini_recorded, project.root)
    return project


def test_added_target_gets_a_parity_check_against_the_reference(only_mini: Project) -> None:
    project = only_mini
    done = project.parity("run", "--targets", "+mini-b")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "::parity[mini-b~mini] PASSED" in out
    assert "::mini-b SKIPPED" in out  # not recorded: its parity check is what counts
    assert not project.snapshot("demo/text", "mini-b").exists()  # run never writes


def test_added_target_that_differs_fails_its_parity_check(only_mini: Project) -> None:
    project = only_mini
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("noisy", extra_env='MINI_NOISE = "1"'))
    done = project.parity("run", "--targets", "+noisy")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "::parity[noisy~mini] FAILED" in out
    assert "_meta" in out


def test_added_target_no_scenario_can_run_is_explained(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", ONLY_MINI)
    done = project.parity("run", "--targets", "+ghost")
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "--targets +ghost: no collected scenario can run it: ghost is a dsh target" in out


def test_unknown_added_target_is_a_usage_error(project: Project) -> None:
    done = project.parity("run", "--targets", "+nobody")
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "--targets: unknown target(s) nobody" in out


def test_record_with_an_added_target_records_it(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", ONLY_MINI)
    done = project.parity("record", "--targets", "+mini-b")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert project.snapshot("demo/text", "mini-b").is_file(), out
    again = project.parity("run", "--targets", "+mini-b")
    assert again.returncode == 0, again.stdout
    assert "::mini-b PASSED" in again.stdout


def test_an_added_targets_run_problems_are_shown(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", ONLY_MINI + "timeouts: {response: 2, startup: 15}\n")
    assert project.parity("record").returncode == 0
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("hangs", extra_env='MINI_HANG = "1"'))
    done = project.parity("run", "--targets", "+hangs")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "::hangs FAILED" in out
    assert "the hangs run had 2 run problem(s) the scenario does not expect" in out
    assert "[timeout]" in out and "no snapshot: added with --targets +hangs" in out


def test_a_plain_target_no_scenario_lists_explains_itself(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", ONLY_MINI)
    done = project.parity("run", "--targets", "mini-b")
    out = done.stdout + done.stderr
    assert done.returncode not in (0, 5), out
    assert "--targets mini-b: no collected scenario lists mini-b" in out
    assert "--targets +mini-b" in out


def test_recording_one_added_agent_keeps_anothers_recording(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", ONLY_MINI)
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("mini-c"))
    assert project.parity("record", "--targets", "+mini-b").returncode == 0
    done = project.parity("record", "--targets", "+mini-c")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "deleted" not in done.stdout
    assert project.snapshot("demo/text", "mini-b").is_file()
    assert project.snapshot("demo/text", "mini-c").is_file()
    # A plain record keeps them too; a recording of a target no one declares goes.
    project.write("snapshots/demo/text/ghost.yaml", "steps: []\n")
    plain = project.parity("record")
    assert "snapshots/demo/text/ghost.yaml" in plain.stdout, plain.stdout
    assert project.snapshot("demo/text", "mini-b").is_file()
    assert not project.snapshot("demo/text", "ghost").exists()


NOISY_KNOWN = """\
[[targets.noisy.known_differences]]
id = "noisy-nonce"
path = "steps[*].result._meta"
sides = { noisy = { schema = { type = "object", required = ["nonce"] } }, others = "absent" }
reason = "noisy adds a random nonce to its initialize result"
"""


def test_a_target_tables_own_known_difference_explains_its_difference(only_mini: Project) -> None:
    project = only_mini
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("noisy", extra_env='MINI_NOISE = "1"') + NOISY_KNOWN)
    done = project.parity("run", "--targets", "+noisy")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "::parity[noisy~mini] PASSED" in out


def test_a_broken_table_entry_names_the_table_and_key(only_mini: Project) -> None:
    project = only_mini
    broken = NOISY_KNOWN.replace('others = "absent"', 'others = "gone"')
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("noisy", extra_env='MINI_NOISE = "1"') + broken)
    done = project.parity("run", "--targets", "+noisy")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "target 'noisy': known_differences[0].sides.others" in out, out


def test_review_with_an_added_target_reviews_it(only_mini: Project) -> None:
    project = only_mini
    done = project.parity("review", "--targets", "+mini-b", "--accept-all")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "accepted: wrote snapshots/demo/text/mini-b.yaml" in out, out
    assert project.snapshot("demo/text", "mini-b").is_file()

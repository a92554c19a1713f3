"""Pending snapshots: CI writes the new snapshot of each drifted clean run, and a
reviewer accepts or rejects them locally with `parity review --from DIR`, running no
agent (insta's `.snap.new` and `cargo insta review`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parity.cli.pending import pending_folder
from parity.cli.review import PROMPT
from tests.cli.test_review import finish, spawn
from tests.support.project import Project, mini_target


@pytest.fixture
def ci_run(project: Project) -> tuple[Project, Path, Path]:
    """demo/text recorded for mini and mini-b, its text changed, then a CI-style run
    that writes pending snapshots; afterwards every target launch would leave a marker
    file, so a review that starts any agent is caught."""
    assert project.parity("record").returncode == 0
    scenario = project.root / "scenarios/demo/text.yaml"
    scenario.write_text(scenario.read_text().replace("text: hello there", "text: hi again"))
    pending = project.root / "ci-artifacts" / "pending"
    done = project.parity("run", "--pending", str(pending), ci=True)
    assert done.returncode == 1, done.stdout
    marker = project.root / "an-agent-started"
    starts = f'"-c", "open({str(marker)!r}, \'w\')"'
    toml = project.root / "parity.toml"
    toml.write_text(
        "".join(
            mini_target(name).replace(f'"{mini_agent_path(project)}"', starts)
            for name in ("mini", "mini-b")
        )
    )
    return project, pending, marker


def mini_agent_path(project: Project) -> str:
    text = (project.root / "parity.toml").read_text()
    return text.split('command = ["{python}", "')[1].split('"')[0]


def test_a_ci_run_writes_the_new_snapshot_of_each_drifted_run(
    ci_run: tuple[Project, Path, Path],
) -> None:
    project, pending, _ = ci_run
    for target in ("mini", "mini-b"):
        text = (pending / "demo/text" / f"{target}.yaml").read_text()
        assert "hi again" in text
        assert "hello there" in project.snapshot("demo/text", target).read_text()


def test_review_from_accepts_one_and_rejects_the_other_without_running(
    ci_run: tuple[Project, Path, Path],
) -> None:
    project, pending, marker = ci_run
    assert "an-agent-started" in (project.root / "parity.toml").read_text()
    rejected_before = project.snapshot("demo/text", "mini-b").read_text()
    child = spawn(project, "--from", str(pending))
    child.expect_exact("[1/2] demo/text :: mini (changed)")
    child.expect_exact('+ mini: "hi again"')
    child.expect_exact(PROMPT)
    child.sendline("a")
    child.expect_exact("accepted: wrote snapshots/demo/text/mini.yaml")
    child.expect_exact("[2/2] demo/text :: mini-b (changed)")
    child.expect_exact(PROMPT)
    child.sendline("r")
    child.expect_exact("accepted 1, rejected 1, skipped 0")
    assert finish(child) == 0
    assert "hi again" in project.snapshot("demo/text", "mini").read_text()
    assert project.snapshot("demo/text", "mini-b").read_text() == rejected_before
    assert not list(pending.rglob("*.yaml"))  # decided: no longer pending
    assert not marker.exists()  # no agent started


def test_accept_the_rest_of_a_scenario(ci_run: tuple[Project, Path, Path]) -> None:
    project, pending, marker = ci_run
    child = spawn(project, "--from", str(pending))
    child.expect_exact(PROMPT)
    child.sendline("A")
    child.expect_exact("accepted 2, rejected 0, skipped 0")
    assert finish(child) == 0
    for target in ("mini", "mini-b"):
        assert "hi again" in project.snapshot("demo/text", target).read_text()
    assert not marker.exists()


def test_accept_all_in_one_scenario_from_the_command_line(
    ci_run: tuple[Project, Path, Path],
) -> None:
    project, pending, marker = ci_run
    done = project.parity("review", "demo/text", "--from", str(pending), "--accept-all")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "accepted 2, rejected 0, skipped 0" in done.stdout
    assert not marker.exists()
    again = project.parity("review", "--from", str(pending), "--accept-all")
    assert "no changed or new snapshots" in again.stdout


def test_the_report_directory_holds_them_by_default(project: Project) -> None:
    assert project.parity("record").returncode == 0
    scenario = project.root / "scenarios/demo/text.yaml"
    scenario.write_text(scenario.read_text().replace("text: hello there", "text: hi again"))
    report = project.root / "report"
    assert project.parity("run", "--report", str(report)).returncode == 1
    assert (report / "pending" / "demo/text" / "mini.yaml").is_file()


def test_review_from_a_report_directory_finds_its_pending_folder(
    ci_run: tuple[Project, Path, Path],
) -> None:
    # What CI uploads is the whole report directory; its pending/ folder is found.
    project, pending, marker = ci_run
    done = project.parity("review", "--from", str(pending.parent), "--accept-all")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "accepted 2, rejected 0, skipped 0" in done.stdout
    assert not marker.exists()


def test_pending_snapshots_of_other_scenarios_are_counted_with_where_it_looked(
    ci_run: tuple[Project, Path, Path],
) -> None:
    project, pending, _ = ci_run
    text = (project.root / "scenarios/demo/text.yaml").read_text()
    project.write("scenarios/demo/other.yaml", text)
    done = project.parity("review", "demo/other", "--from", str(pending), "--accept-all")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"none of the 2 pending snapshot(s) under {pending}" in done.stdout + done.stderr


def test_a_pending_folder_with_a_scenario_folder_named_pending_is_kept(tmp_path: Path) -> None:
    for rel in ("pending/x/mini.yaml", "demo/text/mini.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True)
        (tmp_path / rel).write_text("x")
    assert pending_folder(tmp_path) == tmp_path
    report = tmp_path / "report"
    (report / "pending/demo/text").mkdir(parents=True)
    (report / "pending/demo/text/mini.yaml").write_text("x")
    (report / "index.html").write_text("")
    assert pending_folder(report) == report / "pending"

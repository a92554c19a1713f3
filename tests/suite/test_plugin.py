"""The pytest plugin end to end: a child `parity run` over a throwaway project.

Every test spawns the real plugin, the real fake LLM and the real mini agent; nothing is
mocked. The checks read what a user reads: exit status, item lines, failure text, the
summary table, and the files under snapshots/.
"""

from __future__ import annotations

import gc
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.support.project import TEXT_SCENARIO, Project, child_env, mini_target

SINGLE = TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini]")


def test_record_writes_the_snapshot_and_run_matches_it(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", SINGLE)
    first = project.parity("record")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "scenarios/demo/text.yaml::mini PASSED" in first.stdout
    snap = project.snapshot("demo/text", "mini")
    text = snap.read_text()
    assert "hello there" in text and "<session:1>" in text
    assert "mini-" not in text  # the random session id was normalized away
    assert re.search(r"demo/text\s+new", first.stdout)

    second = project.parity("run")
    assert second.returncode == 0, second.stdout
    assert re.search(r"demo/text\s+pass", second.stdout)
    assert snap.read_text() == text


def test_run_never_writes_a_missing_snapshot_it_says_how_to_record_it(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", SINGLE)
    command = "`parity record scenarios/demo/text.yaml --targets mini`"
    for ci in (False, True):
        done = project.parity("run", ci=ci)
        assert done.returncode == 1
        missing = "no snapshot for mini at snapshots/demo/text/mini.yaml"
        assert f"{missing}; record it with {command}" in done.stdout
        assert not project.snapshot("demo/text", "mini").exists()
    # The failure shows what the run produced (once: under CI the short summary repeats
    # only the headline) and the raw transcript tail.
    assert done.stdout.count("text: hello there") == 1 and "transcript tail" in done.stdout
    assert done.stdout.count(command) == 2  # the failure's headline and the short summary


def test_an_invalid_scenario_is_one_failing_item_listing_file_line_errors(
    project: Project,
) -> None:
    project.write(
        "scenarios/demo/broken.yaml",
        "description: broken\nsteps:\n  - initialise: {}\n  - prompt: {session: s1}\n",
    )
    done = project.parity("run", "scenarios/demo/broken.yaml")
    assert done.returncode == 1
    assert "scenarios/demo/broken.yaml::validate FAILED" in done.stdout
    assert re.search(r"broken\.yaml:3:\d+: ", done.stdout), done.stdout
    assert "Traceback" not in done.stdout and "plugin.py" not in done.stdout
    assert "1 scenario file(s) invalid (not run):\n  scenarios/demo/broken.yaml" in done.stdout


def test_unavailable_target_skips_with_its_reason_and_the_summary_says_so(
    project: Project,
) -> None:
    project.write(
        "scenarios/demo/text.yaml",
        TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini, ghost]"),
    )
    done = project.parity("record", "--", "-rs")
    assert done.returncode == 0, done.stdout
    assert "ghost unavailable: ghost-agent is not installed here" in done.stdout
    assert "1 did not run: ghost unavailable (ghost-agent is not installed here)" in done.stdout
    assert "parity checks: 1 collected, 0 ran, 1 did not run" in done.stdout
    assert re.search(r"demo/text\s+new\s+skip; not compared with mini", done.stdout)


def test_require_targets_turns_a_missing_target_into_a_failure(project: Project) -> None:
    project.write(
        "scenarios/demo/text.yaml",
        TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini, ghost]"),
    )
    done = project.parity("record", "--require-targets", "mini,ghost")
    assert done.returncode == 1
    assert "required target ghost cannot run: ghost-agent is not installed here" in done.stdout
    assert "::ghost FAILED" in done.stdout
    assert "required parity check cannot run: ghost unavailable" in done.stdout
    assert re.search(r"demo/text\s+new\s+fail(: [^;]+)?; check against mini failed", done.stdout)

    # With a recorded ghost snapshot the requirement is met: the parity check runs
    # against the recording (how CI compares with a native it cannot install), and the
    # ghost item is skipped with its reason instead of failing.
    project.snapshot("demo/text", "ghost").write_text(
        project.snapshot("demo/text", "mini").read_text()
    )
    again = project.parity("run", "--require-targets", "ghost")
    assert again.returncode == 0, again.stdout
    assert "::parity[ghost~mini] PASSED" in again.stdout
    assert "::ghost SKIPPED" in again.stdout
    assert "1 ran against a recording: ghost unavailable, compared with its recorded snapshot" in (
        again.stdout
    )


def test_require_live_refuses_a_recording_in_place_of_a_run(project: Project) -> None:
    project.write(
        "scenarios/demo/text.yaml",
        TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini, ghost]"),
    )
    assert project.parity("record", "--targets", "mini").returncode == 0
    project.snapshot("demo/text", "ghost").write_text(
        project.snapshot("demo/text", "mini").read_text()
    )
    # The same recording that meets --require-targets ghost (above) does not meet
    # --require-live ghost: the ghost item and its parity check fail.
    done = project.parity("run", "--require-live", "ghost")
    assert done.returncode == 1, done.stdout
    assert "::ghost FAILED" in done.stdout
    assert "::parity[ghost~mini] FAILED" in done.stdout
    assert (
        "required live target ghost cannot run: ghost-agent is not installed here "
        "(--require-live: its recorded snapshot does not stand in)"
    ) in done.stdout
    # A live reference fails the parity checks against it the same way.
    project.write(
        "scenarios/demo/text.yaml",
        TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [ghost, mini]"),
    )
    assert project.parity("run", "--require-targets", "ghost").returncode == 0
    ref = project.parity("run", "--require-live", "ghost")
    assert ref.returncode == 1
    assert "::parity[mini~ghost] FAILED" in ref.stdout
    # A target that runs meets the requirement; an undeclared name is a usage error.
    assert project.parity("run", "--require-live", "mini", "--targets", "mini").returncode == 0
    typo = project.parity("run", "--require-live", "gohst")
    assert typo.returncode == 4
    assert "--require-live: unknown target(s) gohst" in typo.stdout + typo.stderr


def test_recorded_compares_a_target_that_could_run_with_its_recording(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    assert project.parity("record").returncode == 0
    snap = project.snapshot("demo/text", "mini-b")
    snap.write_text(snap.read_text().replace("hello there", "hello where"))
    # Live, mini-b runs: its own item drifts, and it agrees with mini.
    live = project.parity("run")
    assert "::mini-b FAILED" in live.stdout and "::parity[mini-b~mini] PASSED" in live.stdout
    # --recorded mini-b: it does not run; its recording is what the parity check sees.
    recorded = project.parity("run", "--recorded", "mini-b")
    assert recorded.returncode == 1, recorded.stdout
    assert "::mini-b SKIPPED" in recorded.stdout
    assert "::parity[mini-b~mini] FAILED" in recorded.stdout
    assert "--recorded: its recorded snapshot stands in for a live run" in recorded.stdout
    assert "compared with its recorded snapshot (--recorded)" in recorded.stdout
    both = project.parity("run", "--recorded", "mini-b", "--require-live", "mini-b")
    assert both.returncode == 4
    assert "--recorded and --require-live contradict" in both.stdout + both.stderr


def test_markers_and_targets_select_items(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", SINGLE)
    by_marker = project.parity("run", "--", "-m", "mini-b", "--collect-only", verbose=False)
    assert by_marker.returncode == 5  # pytest: no tests collected/selected
    assert "::" not in by_marker.stdout
    project.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    listed = project.parity("run", "--", "-m", "mini-b", "--collect-only", verbose=False)
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert ids == [
        "scenarios/demo/text.yaml::mini-b",
        "scenarios/demo/text.yaml::parity[mini-b~mini]",
    ]
    only = project.parity("run", "--targets", "mini", "--", "--collect-only", verbose=False)
    ids = [line for line in only.stdout.splitlines() if "::" in line]
    assert ids == ["scenarios/demo/text.yaml::mini"]
    assert "2 deselected" in only.stdout


def test_unused_snapshots_are_reported_and_removed_by_record(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", SINGLE)
    assert project.parity("record").returncode == 0
    stale = project.write("snapshots/demo/text/retired.yaml", "steps: []\n")
    gone = project.write("snapshots/demo/deleted-scenario/mini.yaml", "steps: []\n")
    done = project.parity("run")
    assert done.returncode == 0, done.stdout
    assert "2 snapshot file(s) unused (run `parity record` to delete):" in done.stdout
    assert "snapshots/demo/text/retired.yaml" in done.stdout
    assert stale.exists() and gone.exists()
    record = project.parity("record")
    assert record.returncode == 0, record.stdout
    assert "2 snapshot file(s) deleted:" in record.stdout
    assert not stale.exists() and not gone.exists()
    assert project.snapshot("demo/text", "mini").exists()


def test_xdist_workers_share_runs_and_junit_xml_is_written(project: Project) -> None:
    log = project.root / "sessions.log"
    project.write(
        "parity.toml",
        mini_target("mini", extra_env=f'MINI_LOG = "{log}"')
        + mini_target("mini-b", extra_env=f'MINI_LOG = "{log}"'),
    )
    for i in range(3):
        project.write(f"scenarios/demo/t{i}.yaml", TEXT_SCENARIO)
    project.root.joinpath("scenarios/demo/text.yaml").unlink()
    stale = project.write("snapshots/demo/t0/retired.yaml", "steps: []\n")
    junit = project.root / "out.xml"
    done = project.parity("record", "-n", "2", "--", f"--junitxml={junit}")
    # 3 scenarios x 2 targets: each pair ran exactly once, although the parity items
    # needing those runs may have been scheduled on the other worker.
    assert len(log.read_text().splitlines()) == 6
    cases = ET.parse(junit).getroot().iter("testcase")
    names = sorted(c.get("name", "") for c in cases)
    assert names.count("mini") == 3 and names.count("parity[mini-b~mini]") == 3
    assert done.returncode == 0, done.stdout
    assert "parity summary" in done.stdout and "3 pass, 6 new" in done.stdout
    # The controller collects nothing itself; the workers tell it what they collected.
    assert "1 snapshot file(s) deleted:" in done.stdout
    assert "snapshots/demo/t0/retired.yaml" in done.stdout and not stale.exists()
    assert not any((project.root / ".cache" / "parity-runs").iterdir())


def test_stale_snapshot_shows_the_changed_field_then_tails(project: Project) -> None:
    project.write("scenarios/demo/text.yaml", SINGLE)
    assert project.parity("record").returncode == 0
    snap = project.snapshot("demo/text", "mini")
    snap.write_text(snap.read_text().replace("hello there", "hello world"))
    done = project.parity("run")
    assert done.returncode == 1
    out = done.stdout
    assert "demo/text: mini no longer matches its snapshot snapshots/demo/text/mini.yaml" in out
    assert "-      text: hello world" in out and "+      text: hello there" in out
    assert "demo/text: mini vs snapshot (reference)" in out  # the categorized diff's header
    # Order: the diff first, then the raw transcript tail, then the agent's stderr.
    assert out.index("hello world") < out.index("transcript tail") < out.index("stderr tail")
    assert "Traceback" not in out


def test_missing_or_empty_scenarios_dir_gives_a_clear_message(project: Project) -> None:
    shutil.rmtree(project.root / "scenarios")
    missing = project.parity("run")
    assert missing.returncode == 2
    assert f"parity: no scenarios directory at {project.root / 'scenarios'}" in missing.stderr
    project.write("scenarios/.keep", "")
    empty = project.parity("run")
    assert empty.returncode == 5  # pytest: no tests collected
    assert "Traceback" not in empty.stdout + empty.stderr


def test_an_undeclared_target_fails_instead_of_skipping(project: Project) -> None:
    project.write(
        "scenarios/demo/text.yaml",
        TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [mini, mni-b]"),
    )
    done = project.parity("run")
    assert done.returncode == 1
    assert "scenarios/demo/text.yaml::mni-b FAILED" in done.stdout
    assert "target 'mni-b' is not declared (known: " in done.stdout


def test_snapshot_update_keeps_the_recording_of_a_target_that_cannot_run(
    project: Project,
) -> None:
    """Plain `pytest --snapshot-update` (testpaths, no path arguments) must not take
    the snapshot of a skipped target for an unused one. The project also has ordinary
    tests with a conftest.py of their own, as this repository does."""
    project.write(
        "scenarios/demo/text.yaml",
        TEXT_SCENARIO.replace("targets: [mini, mini-b]", "targets: [ghost, mini]"),
    )
    project.write("pytest.ini", "[pytest]\ntestpaths = scenarios checks\n")
    project.write("checks/conftest.py", "import pytest\n")
    project.write("checks/test_plain.py", "def test_plain() -> None:\n    assert True\n")
    recording = project.write("snapshots/demo/text/ghost.yaml", "steps: []\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "parity.suite.plugin", "--snapshot-update", "-q"],
        cwd=project.root,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert recording.exists(), done.stdout
    assert "2 passed" in done.stdout and "INTERNALERROR" not in done.stdout
    assert "unused" not in done.stdout and "deleted" not in done.stdout
    assert "1 ran against a recording" in done.stdout  # and parity used it


def test_snapshots_hold_no_machine_or_process_specific_values(project: Project) -> None:
    """An MCP fixture-tool entry carries the fake's URL (port, run id) and the
    interpreter's path; the snapshot must hold placeholders, so a second run in a new
    process (another port, other run ids) matches it."""
    project.write(
        "parity.toml",
        mini_target("mini").replace('fixture_tools = "stream"', 'fixture_tools = "mcp"'),
    )
    project.write(
        "scenarios/demo/text.yaml",
        SINGLE + "tools:\n  - name: echo\n    description: Echo.\n    result: ok\n",
    )
    assert project.parity("record").returncode == 0
    text = project.snapshot("demo/text", "mini").read_text()
    assert "- <llm>" in text and "command: <python>" in text
    assert "127.0.0.1" not in text and sys.executable not in text
    again = project.parity("run", ci=True)
    assert again.returncode == 0, again.stdout


def test_recording_a_broken_run_is_refused(project: Project) -> None:
    project.write(
        "parity.toml",
        mini_target("mini").replace('["{python}", ', '["{python}", "-c", "raise SystemExit(3)", '),
    )
    project.write("scenarios/demo/text.yaml", SINGLE)
    done = project.parity("record")
    assert done.returncode == 1
    assert not project.snapshot("demo/text", "mini").exists()
    assert "demo/text: the mini run had 2 run problem(s) the scenario does not expect" in (
        done.stdout
    )
    assert "[exit] step 1: agent exited during initialize (exit code 3)" in done.stdout
    assert "nothing was written to snapshots/demo/text/mini.yaml" in done.stdout


def test_masks_are_listed_in_the_summary_with_their_reasons(project: Project) -> None:
    project.write("parity.toml", mini_target("mini", extra_env='MINI_NOISE = "1"'))
    project.write(
        "scenarios/demo/text.yaml",
        SINGLE
        + "masks:\n"
        + '  - {path: "steps[0].result._meta.nonce", reason: a random nonce}\n'
        + '  - {path: "steps[9].result", reason: a step that is gone}\n',
    )
    first = project.parity("record")
    assert first.returncode == 0, first.stdout
    assert "masks: 1 applied, 1 matched nothing" in first.stdout
    assert "demo/text mini: steps[0].result._meta.nonce: 1 value(s) masked (a random nonce)" in (
        first.stdout
    )
    assert "steps[9].result: matched nothing (stale mask?) (a step that is gone)" in first.stdout
    # The nonce differs on every run; masked, the second run still matches.
    assert project.parity("run", ci=True).returncode == 0


def test_what_start_up_and_collection_built_is_frozen_for_the_collector() -> None:
    """The plugin freezes it once collection ends (`parity run` spent some 0.12 s of CPU
    in the collector's passes over it; docs/performance.md)."""
    from parity.suite import plugin

    gc.unfreeze()  # what tests/conftest.py froze goes back to the collector first
    plugin.pytest_collection_finish(pytest.Session.__new__(pytest.Session))
    assert gc.get_freeze_count() > 1000

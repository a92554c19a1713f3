"""A real `parity record` and `run` against an agent whose ids are any JSON value (an
object for a sessionId, `true` for a toolCallId): the semantic profile once crashed on
them with a TypeError and a pluggy traceback; now the run is normalized, recorded and
checked, and the output holds no traceback. And a flood whose checks reach their time
limit (`PARITY_CHECKS_LIMIT`) fails with that problem first, no traceback (issue 33)."""

from __future__ import annotations

from pathlib import Path

from parity.view.dump import load_view
from tests.support.project import Project, mini_target

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "junk_session_ids.py"

SCENARIO = """\
description: an agent whose ids are objects and booleans
targets: [junk]
compare: semantic
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: go}
"""


def test_ids_of_any_json_value_are_recorded_and_checked_without_a_traceback(
    project: Project,
) -> None:
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("junk", AGENT))
    project.write("scenarios/h/junk.yaml", SCENARIO)
    record = project.parity("record", "h/junk")
    assert record.returncode == 0, record.stdout + record.stderr
    updates = load_view(project.snapshot("h/junk", "junk").read_text())["steps"][2]["updates"]
    assert updates[2]["session"] == {"nested": ["not", "an", "id"]}
    done = project.parity("run", "h/junk")
    assert done.returncode == 0, done.stdout + done.stderr
    for out in (record, done):
        assert "Traceback" not in out.stdout + out.stderr


FLOOD = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "update_flood.py"


def test_checks_past_their_time_limit_fail_the_run_with_that_problem_first(
    project: Project,
) -> None:
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("flood", FLOOD, 'FLOOD = "20000"'))
    project.write("scenarios/h/flood.yaml", SCENARIO.replace("junk", "flood"))
    done = project.parity("run", "h/flood", PARITY_CHECKS_LIMIT="0.2")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    # The run's first problem, and the failure says so; no snapshot was compared.
    lines = out.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("run problems ("))
    assert (
        lines[heading + 1]
        .strip()
        .startswith("[check-limit] check limit (0.2 s) reached during normalization: ")
    )

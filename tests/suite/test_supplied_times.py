"""A timestamp the scenario supplied is data, not the agent's clock: an agent that reads
a seeded file holding one and changes it must fail the parity check, not compare equal
with both values rewritten to `<time>` (issue 31). Timestamps the agent makes itself
still become `<time>`."""

from __future__ import annotations

from parity.view.tokens import TIME, Tokens
from tests.support.project import Project, mini_target

SCENARIO = """\
description: the agent reads a seeded file that holds a timestamp and says what it read
targets: [reader, mutant]
files:
  stamp.txt: "built 2024-05-01T10:00:00Z\\n"
llm:
  - text: done
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: read the stamp}
"""


def test_an_agent_that_changes_a_supplied_timestamp_differs(project: Project) -> None:
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("reader", extra_env='MINI_READ = "stamp.txt"'))
        replace = 'MINI_READ = "stamp.txt", MINI_REPLACE = "T10:00>T11:00"'
        toml.write(mini_target("mutant", extra_env=replace))
    project.root.joinpath("scenarios/demo/text.yaml").unlink()
    project.write("scenarios/h/stamp.yaml", SCENARIO)
    done = project.parity("record")
    out = done.stdout
    assert done.returncode == 1, out
    assert "FAILED scenarios/h/stamp.yaml::parity[mutant~reader]" in out
    assert "[changed field] steps[2].updates[0].content.text" in out
    assert "2024-05-01T10:00:00Z" in out and "2024-05-01T11:00:00Z" in out
    recorded = project.snapshot("h/stamp", "reader").read_text()
    assert "built 2024-05-01T10:00:00Z" in recorded


def test_only_the_supplied_timestamps_stay() -> None:
    tokens = Tokens({}, supplied=["seeded 2024-05-01T10:00:00Z", "no time here"])
    text = "read 2024-05-01T10:00:00Z at 2026-12-05T00:53:25.120Z"
    assert tokens.scrub_text(text) == f"read 2024-05-01T10:00:00Z at {TIME}"
    assert tokens.scrub({"updatedAt": "2024-05-01T10:00:00Z"}) == {
        "updatedAt": "2024-05-01T10:00:00Z"
    }
    assert tokens.scrub({"updatedAt": "2024-05-01T11:00:00Z", "durationMs": 12}) == {
        "durationMs": TIME,
        "updatedAt": TIME,
    }

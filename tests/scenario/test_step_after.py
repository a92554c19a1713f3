"""A step's `after` and a permission answer's `{option: ID}` in scenario files: the
forms the loader accepts, and the errors `parity validate` gives in an author's words
(issue 31)."""

from __future__ import annotations

from pathlib import Path

from parity.scenario.load import build_scenario, check_text

GOOD = """\
description: a branch that waits, and answers by optionId
client:
  permission: [{option: allow_always}, {answer: {option: no-such-option}, after: {ms: 2000}}]
steps:
  - initialize: {}
  - new_session: {as: s1}
  - new_session: {as: s2}
  - parallel:
      - prompt: {session: s1, text: write, as: p1}
      - prompt: {session: s2, text: hello}
        after: {agent_request: session/request_permission}
"""

BAD = """\
description: bad
client:
  permission: [{option: ""}, {answer: {option: 3}, after: {ms: 2000}}]
steps:
  - initialize: {}
  - new_session: {as: s1}
  - after: {ms: 2000}
  - prompt: {session: s1, text: hi}
    new_session: {as: s2}
  - parallel:
      - prompt: {session: s1, text: a, as: p1}
      - prompt: {session: s1, text: b}
        after: {prompt: nope}
"""


def test_a_delayed_branch_and_option_answers_load() -> None:
    scenario = build_scenario(GOOD, Path("f.yaml"))
    branches = scenario.steps[3].params["steps"]
    assert [b.after for b in branches] == [None, {"agent_request": "session/request_permission"}]
    assert branches[1].kind == "prompt"
    assert scenario.client["permission"][0] == {"option": "allow_always"}
    assert check_text(GOOD, "f.yaml")[0] == []


def test_bad_forms_are_named_where_they_are() -> None:
    found = [(f.line, f.key, f.message) for f in check_text(BAD, "f.yaml")[0]]
    assert found == [
        (3, "client.permission[0].option", "must not be empty"),
        (3, "client.permission[1].answer.option", "expected a string, got number 3"),
        (7, "steps[2].after", "`after` delays a step, but there is no step beside it"),
        (8, "steps[3]", "a step has exactly one key (its kind), got 2: prompt, new_session"),
        (13, "steps[4].parallel[1].after.prompt", "no prompt is named 'nope'"),
    ]

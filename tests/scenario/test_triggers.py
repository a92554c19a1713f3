"""Held answers and triggers in scenario files: the YAML forms the loader accepts, and
the warnings `parity validate` gives where a trigger races or can never fire."""

from __future__ import annotations

import textwrap
from pathlib import Path

from parity.scenario.load import build_scenario, check_text

FILE = """\
description: held answers
tools:
  - {name: slow, hang: true}
  - {name: quick, result: ok}
llm:
  - tool_calls: [{id: c1, name: slow}, {id: c2, name: quick}]
client:
  permission:
    by_tool:
      slow: [never, {answer: allow-once, after: {tool_call: slow}}]
    default: {answer: cancelled, after: {prompt: p1}}
  elicitation: [{answer: {action: accept, content: {a: 1}}, after: {llm_request: 1}}, never]
  fs: {read: true, after: {agent_request: session/request_permission, count: 2}}
  terminal: {after: never}
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: go, as: p1, cancel: {after: {tool_call: slow}}}
"""


def warnings(text: str) -> list[tuple[int, int, str, str]]:
    found = check_text(textwrap.dedent(text), "f.yaml")[0]
    assert [f for f in found if f.severity == "error"] == []
    return [(f.line, f.column, f.key, f.message) for f in found]


def test_every_held_form_loads() -> None:
    scenario = build_scenario(FILE, Path("f.yaml"))
    assert scenario.warnings == []
    permission = scenario.client["permission"]
    assert permission["by_tool"]["slow"][1] == {
        "answer": "allow-once",
        "after": {"tool_call": "slow"},
    }
    assert scenario.client["terminal"] == {"after": "never"}
    assert scenario.steps[2].params["cancel"] == {"after": {"tool_call": "slow"}}


def test_racing_and_dead_triggers_are_warned_about_at_their_place() -> None:
    text = """\
    description: races
    tools:
      - {name: quick, result: ok}
      - {name: idle, hang: true}
    llm:
      - tool_calls: [{id: c1, name: quick}]
    client:
      permission: {answer: allow-once, after: {tool_call: qiuck}}
      fs: {read: true, after: {ms: 100}}
    steps:
      - initialize: {}
      - new_session: {as: s1}
      - prompt: {session: s1, text: a, as: p1, cancel: {after: {update: tool_call}}}
      - prompt: {session: s1, text: b, cancel: {after: {tool_call: quick}}}
      - prompt: {session: s1, text: c, cancel: {after: {tool_call: idle}}}
      - prompt: {session: s1, text: d, as: p4, cancel: {after: {prompt: p4}}}
      - prompt: {session: s1, text: e, cancel: {after: {ms: 200}}}
    """
    assert warnings(text) == [
        (
            8,
            55,
            "client.permission.after.tool_call",
            "'qiuck' is not a declared tool; the trigger would never fire",
        ),
        (9, 32, "client.fs.after.ms", "a time trigger of 100 ms drifts under load"),
        (
            13,
            69,
            "steps[2].prompt.cancel.after.update",
            "the tool_call update comes before the tool request: the cancel races the tool",
        ),
        (
            14,
            64,
            "steps[3].prompt.cancel.after.tool_call",
            "'quick' answers after 0 ms: the cancel races its result",
        ),
        (
            15,
            64,
            "steps[4].prompt.cancel.after.tool_call",
            "the llm script never calls 'idle'",
        ),
        (
            16,
            69,
            "steps[5].prompt.cancel.after.prompt",
            "a prompt cannot be cancelled after it has ended",
        ),
        (17, 57, "steps[6].prompt.cancel.after.ms", "a time trigger of 200 ms drifts under load"),
    ]


def test_a_trigger_naming_no_prompt_is_an_error() -> None:
    text = "description: x\nclient: {permission: {answer: cancelled, after: {prompt: p2}}}\n"
    text += "steps:\n  - initialize: {}\n"
    (finding,) = check_text(text, "f.yaml")[0]
    assert (finding.line, finding.column, finding.severity) == (2, 58, "error")
    assert finding.message == "no prompt is named 'p2'"


def test_cancel_triggers_do_not_take_never() -> None:
    text = "description: x\nsteps:\n  - initialize: {}\n  - new_session: {as: s1}\n"
    text += "  - prompt: {session: s1, text: a, cancel: {after: never}}\n"
    (finding,) = check_text(text, "f.yaml")[0]
    assert finding.key == "steps[2].prompt.cancel.after"
    assert finding.severity == "error"

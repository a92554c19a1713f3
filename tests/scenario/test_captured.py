"""A captured scenario (`captured:`, entries with `request:`): validation, scripts, tools."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from parity.scenario.errors import ScenarioInvalid
from parity.scenario.load import build_scenario
from parity.scenario.model import LlmEntry, Scenario, Where

CAPTURED = """\
description: a captured session
captured:
  target: plus
  upstream_dialect: openai-chat
  model: gpt-test
  date: "2026-12-02"
  builtin_tools: false
targets: [plus, native]
tools:
  - name: echo
    result: tool result
llm:
  - match: {purpose: title}
    text: A title
  - text: calling
    tool_calls: [{id: c1, name: echo}]
    request:
      messages:
        - role: user
          content: [{type: text, text: go}]
      tools: [echo]
  - text: done
    request:
      prefix: 1
      messages:
        - role: assistant
          content: [{type: tool-call, id: c1, name: echo, arguments: "{}"}]
        - role: tool
          toolCallId: c1
          content: [{type: text, text: tool result}]
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: go}
"""

WHERE = Where("x.yaml", 1, 1)


def scenario(**fields: Any) -> Scenario:
    return Scenario(name="x", path=Path("x.yaml"), description="d", **fields)


def entry(**params: Any) -> LlmEntry:
    return LlmEntry(dict(params), WHERE)


def test_a_captured_file_validates() -> None:
    s = build_scenario(CAPTURED, Path("x.yaml"))
    assert s.captured == {
        "target": "plus",
        "upstream_dialect": "openai-chat",
        "model": "gpt-test",
        "date": "2026-12-02",
        "builtin_tools": False,
    }
    assert s.llm[1].params["request"]["tools"] == ["echo"]
    assert s.llm[2].params["request"]["prefix"] == 1


def test_a_file_without_captured_has_none() -> None:
    text = "description: d\nllm: [{text: hi}]\nsteps: [{initialize: {}}]\n"
    assert build_scenario(text, Path("x.yaml")).captured is None


def test_script_for_the_captured_target_keeps_the_requests() -> None:
    s = build_scenario(CAPTURED, Path("x.yaml"))
    own = s.script_for("plus")
    assert [e.params for e in own] == [e.params for e in s.llm]
    assert ["request" in e.params for e in own] == [False, True, True]


def test_script_for_another_target_strips_the_requests() -> None:
    s = build_scenario(CAPTURED, Path("x.yaml"))
    before = copy.deepcopy([e.params for e in s.llm])
    other = s.script_for("native")
    assert [e.params for e in other] == [
        {"match": {"purpose": "title"}, "text": "A title"},
        {"text": "calling", "tool_calls": [{"id": "c1", "name": "echo"}]},
        {"text": "done"},
    ]
    assert [e.where for e in other] == [e.where for e in s.llm]
    # the scenario's own entries are untouched: the captured target still sees them
    assert [e.params for e in s.llm] == before
    assert ["request" in e.params for e in s.script_for("plus")] == [False, True, True]


def test_script_for_without_captured_strips_requests_for_everyone() -> None:
    s = scenario(llm=[entry(text="a", request={"messages": []})])
    assert s.script_for("plus")[0].params == {"text": "a"}
    assert s.llm[0].params == {"text": "a", "request": {"messages": []}}


def test_script_for_still_scopes_side_entries_by_target() -> None:
    s = scenario(
        captured={"target": "plus"},
        llm=[
            entry(match={"purpose": "title", "targets": ["opencode"]}, text="T"),
            entry(text="a", request={"messages": []}),
        ],
    )
    assert [e.params for e in s.script_for("plus")] == [{"text": "a", "request": {"messages": []}}]
    assert [e.params for e in s.script_for("opencode")] == [
        {"match": {"purpose": "title", "targets": ["opencode"]}, "text": "T"},
        {"text": "a"},
    ]


def test_entries_without_request_are_passed_as_they_are() -> None:
    plain = entry(text="a")
    s = scenario(captured={"target": "plus"}, llm=[plain])
    assert s.script_for("native")[0] is plain
    assert s.script_for("plus")[0] is plain


# -- calls_builtin_tools ------------------------------------------------------------------

BUILTIN_CALL = entry(tool_calls=[{"name": "read", "builtin": True}])
FIXTURE_CALL = entry(tool_calls=[{"name": "echo"}])


@pytest.mark.parametrize(
    ("captured", "llm", "want"),
    [
        (None, [FIXTURE_CALL], False),
        (None, [FIXTURE_CALL, BUILTIN_CALL], True),
        ({"target": "plus"}, [BUILTIN_CALL], True),
        ({"target": "plus"}, [FIXTURE_CALL], False),
        ({"target": "plus", "builtin_tools": True}, [FIXTURE_CALL], True),
        ({"target": "plus", "builtin_tools": False}, [BUILTIN_CALL], False),
        ({"target": "plus", "builtin_tools": True}, [], True),
    ],
)
def test_calls_builtin_tools(
    captured: dict[str, Any] | None, llm: list[LlmEntry], want: bool
) -> None:
    assert scenario(captured=captured, llm=llm).calls_builtin_tools is want


def test_calls_builtin_tools_of_a_loaded_captured_file() -> None:
    text = CAPTURED.replace("builtin_tools: false", "builtin_tools: true")
    assert build_scenario(text, Path("x.yaml")).calls_builtin_tools
    assert not build_scenario(CAPTURED, Path("x.yaml")).calls_builtin_tools


# -- schema errors ------------------------------------------------------------------------


def errors(text: str) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioInvalid) as caught:
        build_scenario(text, Path("x.yaml"))
    return [(e.key, e.message) for e in caught.value.errors if e.severity == "error"]


def test_captured_without_target_is_an_error() -> None:
    text = CAPTURED.replace("  target: plus\n", "")
    assert errors(text) == [("captured", "missing required key 'target'")]


def test_captured_with_an_unknown_key_is_an_error() -> None:
    text = CAPTURED.replace("  model: gpt-test\n", "  model: gpt-test\n  modle: x\n")
    found = errors(text)
    assert len(found) == 1
    key, message = found[0]
    assert key == "captured"
    assert "modle" in message


def test_captured_with_an_unknown_dialect_is_an_error() -> None:
    text = CAPTURED.replace("openai-chat", "openai-chatt")
    found = errors(text)
    assert [key for key, _ in found] == ["captured.upstream_dialect"]
    assert "openai-chatt" in found[0][1]


def test_a_request_with_an_unknown_key_is_an_error() -> None:
    text = CAPTURED.replace("      prefix: 1\n", "      prefix: 1\n      prefx: 2\n")
    found = errors(text)
    assert len(found) == 1
    assert found[0][0] == "llm[2].request"
    assert "prefx" in found[0][1]


def test_a_negative_prefix_is_an_error() -> None:
    text = CAPTURED.replace("prefix: 1", "prefix: -1")
    assert [key for key, _ in errors(text)] == ["llm[2].request.prefix"]


def test_a_captured_target_missing_from_targets_is_a_warning() -> None:
    text = CAPTURED.replace("targets: [plus, native]", "targets: [native]")
    scenario = build_scenario(text, Path("x.yaml"))  # a warning: still valid
    (warning,) = [w for w in scenario.warnings if w.key == "captured.target"]
    assert "'plus' is not among the scenario's targets" in warning.message
    assert build_scenario(CAPTURED, Path("x.yaml")).warnings == []

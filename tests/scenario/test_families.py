"""A scenario's built-in tool families: the `builtin_tools` key, its default, its errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from acp_plus.core.tools.families import FAMILY_NAMES
from parity.scenario.families import FAMILIES, FAMILY_TOOLS, families_of, ordered
from parity.scenario.load import build_scenario, check_text
from parity.scenario.schema_findings import schema

HEAD = "description: d\nsteps:\n  - initialize: {}\n"


def _families(text: str) -> tuple[str, ...]:
    return build_scenario(textwrap.dedent(text), Path("scenarios/f.yaml")).builtin_families


def test_an_unknown_family_is_an_error_at_its_line_and_key() -> None:
    findings = check_text(HEAD + "builtin_tools: [bash, fss]\n", "f.yaml")[0]
    assert [(f.line, f.column, f.key, f.severity) for f in findings] == [
        (4, 23, "builtin_tools[1]", "error")
    ]
    assert "got string 'fss'" in findings[0].message and "did you mean 'fs'" in str(findings[0])


def test_a_word_other_than_all_is_an_error() -> None:
    findings = check_text(HEAD + "builtin_tools: everything\n", "f.yaml")[0]
    assert [(f.line, f.key, f.message) for f in findings] == [
        (4, "builtin_tools", "expected 'all', got string 'everything'")
    ]


def test_without_the_key_the_families_are_those_of_the_builtin_calls() -> None:
    calls = """\
        llm:
          - tool_calls:
              - {id: c1, name: write, builtin: true, arguments: {}}
              - {id: c2, name: bash, builtin: true, arguments: {}}
              - {id: c3, name: ask_user_question, builtin: true, arguments: {}}
              - {id: c4, name: echo, arguments: {}}
        tools: [{name: echo, result: ok}]
        """
    # In native's order (bash's guidance comes first), whatever the order of the calls;
    # a tool no family owns (acp-plus's own question tool) adds none.
    assert _families(HEAD + textwrap.dedent(calls)) == ("bash", "fs")
    assert _families(HEAD + "llm: [{text: hi}]\n") == ()


def test_the_key_overrides_the_calls_and_all_is_every_family() -> None:
    call = "llm:\n  - tool_calls: [{id: c1, name: bash, builtin: true, arguments: {}}]\n"
    assert _families(HEAD + call + "builtin_tools: [jobs, bash]\n") == ("bash", "jobs")
    assert _families(HEAD + call + "builtin_tools: []\n") == ()
    assert _families(HEAD + "builtin_tools: all\n") == FAMILIES


def test_a_builtin_call_whose_family_is_off_is_a_warning() -> None:
    text = HEAD + (
        "builtin_tools: [fs]\n"
        "llm:\n  - tool_calls: [{id: c1, name: bash, builtin: true, arguments: {}}]\n"
    )
    (finding,) = check_text(text, "f.yaml")[0]
    assert (finding.key, finding.severity) == ("llm[0].tool_calls[0].name", "warning")
    assert "family 'bash'" in finding.message


def test_a_captured_scenario_runs_with_what_its_capture_offered() -> None:
    captured = "captured: {target: plus, builtin_tools: %s}\ntargets: [plus]\n"
    assert _families(HEAD + captured % "true") == FAMILIES
    assert _families(HEAD + captured % "false") == ()


@pytest.mark.parametrize(
    ("names", "want"),
    [(["read", "glob", "job_kill"], ("fs", "fs-search", "jobs")), (["nope"], ())],
)
def test_families_of(names: list[str], want: tuple[str, ...]) -> None:
    assert families_of(names) == want


def test_ordered_follows_native_order() -> None:
    assert ordered(["subagent", "bash"]) == ("bash", "subagent")
    assert ordered(["all"]) == FAMILIES


def test_the_vocabulary_is_one_in_the_schema_the_harness_and_acp_plus() -> None:
    """The schema's enum (editor completion), the harness's table and acp-plus's
    families are the same names in the same order: the `{builtin_families}` placeholder
    passes the harness's names to acp-plus, which refuses one it does not know."""
    enum = schema()["properties"]["builtin_tools"]["anyOf"][1]["items"]["enum"]
    assert list(FAMILIES) == enum == list(FAMILY_NAMES)
    assert set(FAMILY_TOOLS) == set(FAMILIES)

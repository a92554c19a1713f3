"""Exact comparison: type and value as JSON carries them, everywhere a wire value is judged.

Each type pair (`2`/`2.0`, `true`/`1`, `0`/`false`, `"1"`/`1`, `null`/absent) must show
as a difference in a parity diff of two live views, in a recorded snapshot edited to the
other type, in a stale check, in calibration and in the snapshot YAML itself.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from parity.checks.diff import compare
from parity.checks.differences import ABSENT, CHANGED_FIELD, MODEL_REQUEST
from parity.core.exact import exact_key, json_equal
from parity.scenario.model import Rule
from parity.view.calibrate import differing_paths
from parity.view.dump import dump_view, load_view
from parity.view.masks import apply_masks
from parity.view.tokens import Tokens

PAIRS = [
    pytest.param(2, 2.0, "2", "2.0", id="int-float"),
    pytest.param(True, 1, "true", "1", id="true-1"),
    pytest.param(0, False, "0", "false", id="0-false"),
    pytest.param("1", 1, "'1'", "1", id="string-number"),
    pytest.param(None, ABSENT, "null", None, id="null-absent"),
]
"""(reference value, mutated value, their YAML in a snapshot); ABSENT / None: no key."""


def with_value(value: Any) -> dict[str, Any]:
    """A view whose tool call carries `value` as its argument `n`, in a list of `xs`, in
    the step's result and in the model request's body (ABSENT: no `n` anywhere)."""
    args: dict[str, Any] = {} if value is ABSENT else {"n": value}
    xs = ["a", "b"] if value is ABSENT else ["a", value, "b"]
    return {
        "steps": [
            {
                "step": 1,
                "do": "prompt",
                "label": 'prompt s1 "go"',
                "send": {"method": "session/prompt", "params": {"sessionId": "<session:1>"}},
                "result": {"stopReason": "end_turn", **args},
                "updates": [
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "call-1",
                        "title": "echo",
                        "rawInput": {**args, "xs": xs},
                    },
                ],
            }
        ],
        "model": [{"path": "/stream", "body": {"model": "mock", **args}}],
    }


def paths(ref: Any, other: Any) -> list[str]:
    report = compare(ref, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    return [d.path for d in report.differences]


@pytest.mark.parametrize(("a", "b", "yaml_a", "yaml_b"), PAIRS)
def test_json_equal_tells_the_pair_apart(a: Any, b: Any, yaml_a: str, yaml_b: str) -> None:
    assert not json_equal(a, b) and not json_equal(b, a)
    assert not json_equal({"n": a}, {} if b is ABSENT else {"n": b})
    assert not json_equal([a], [b])
    assert json_equal(copy.deepcopy([{"n": a}]), [{"n": a}])


def test_json_equal_is_equality_within_one_type() -> None:
    assert json_equal({"a": [1, 2.5, "x", None, True]}, {"a": [1, 2.5, "x", None, True]})
    assert not json_equal(-0.0, 0.0)  # JSON writes them differently
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert not json_equal([1, 2], [1, 2, 3])
    assert json_equal(float("nan"), float("nan"))  # no wire value is unequal to itself
    assert len({exact_key(1), exact_key(1.0), exact_key(True), exact_key("1")}) == 4


@pytest.mark.parametrize("flip", [False, True], ids=["ref-first", "mutant-first"])
@pytest.mark.parametrize(("a", "b", "yaml_a", "yaml_b"), PAIRS)
def test_a_live_value_of_the_other_type_is_a_difference(
    a: Any, b: Any, yaml_a: str, yaml_b: str, flip: bool
) -> None:
    ref, other = with_value(a), with_value(b)
    if flip:
        ref, other = other, ref
    report = compare(ref, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    assert not report.ok
    found = {(d.category, d.path) for d in report.differences}
    # One difference per place the value is, nothing more: the rest is the same.
    assert found == {
        (CHANGED_FIELD, "steps[0].result.n"),
        (CHANGED_FIELD, "steps[0].updates[0].rawInput.n"),
        (CHANGED_FIELD, "steps[0].updates[0].rawInput.xs[1]"),
        (MODEL_REQUEST, "model[0].body.n"),
    }
    changed = next(d for d in report.differences if d.path == "steps[0].result.n")
    assert (changed.ref, changed.other) == ((b, a) if flip else (a, b))
    assert paths(with_value(a), copy.deepcopy(with_value(a))) == []


@pytest.mark.parametrize(("a", "b", "yaml_a", "yaml_b"), PAIRS)
def test_a_snapshot_edited_to_the_other_type_is_a_difference(
    a: Any, b: Any, yaml_a: str, yaml_b: str
) -> None:
    """The recorded file, edited by hand to the other type, no longer matches the run:
    its text differs (what syrupy compares) and the categorized diff of the recording
    against the run (what the failure shows, and what a parity check against a
    recording compares) names the field."""
    live = with_value(a)
    recorded = dump_view(live)
    lines = recorded.splitlines(keepends=True)
    marks = (f"n: {yaml_a}\n", f"- {yaml_a}\n")  # the key `n`, the item of `xs`
    assert sum(line.endswith(marks) for line in lines) == 4
    edited = "".join(
        (line.replace(yaml_a, yaml_b) if yaml_b is not None else "")
        if line.endswith(marks)
        else line
        for line in lines
    )
    assert edited != recorded
    assert json_equal(load_view(edited), with_value(b))
    assert dump_view(live) != edited
    assert set(paths(load_view(edited), live)) == {
        "steps[0].result.n",
        "steps[0].updates[0].rawInput.n",
        "steps[0].updates[0].rawInput.xs[1]",
        "model[0].body.n",
    }


@pytest.mark.parametrize(("a", "b", "yaml_a", "yaml_b"), PAIRS)
def test_a_diverge_rule_is_stale_unless_the_type_differs(
    a: Any, b: Any, yaml_a: str, yaml_b: str
) -> None:
    rules = [Rule(path="*.n", reason="r"), Rule(path="*.xs", reason="r")]

    def stale(other: Any) -> list[str]:
        report = compare(
            with_value(a), other, profile="exact", diverge=rules, ref_name="a", other_name="b"
        )
        assert not report.differences
        return [r.path for r in report.stale]

    assert stale(with_value(b)) == []
    assert stale(with_value(a)) == ["*.n", "*.xs"]


@pytest.mark.parametrize(("a", "b", "yaml_a", "yaml_b"), PAIRS)
def test_a_masked_value_of_the_other_type_is_a_difference(
    a: Any, b: Any, yaml_a: str, yaml_b: str
) -> None:
    """A mask hides an unstable value, not its type."""
    ref, other = with_value(a), with_value(b)
    for v in (ref, other):
        apply_masks(v, [Rule(path="*.n", reason="unstable")])
    assert "steps[0].result.n" in paths(ref, other)
    same = with_value(a)
    apply_masks(same, [Rule(path="*.n", reason="unstable")])
    assert paths(ref, same) == []


@pytest.mark.parametrize(("a", "b", "yaml_a", "yaml_b"), PAIRS)
def test_calibration_sees_a_type_change_between_runs(
    a: Any, b: Any, yaml_a: str, yaml_b: str
) -> None:
    assert ("steps", 0, "result", "n") in differing_paths(with_value(a), with_value(b))
    assert differing_paths(with_value(a), with_value(a)) == []


def test_ids_of_another_type_get_their_own_token() -> None:
    tokens = Tokens({})
    first, second, third = (tokens.register("request", ("out", v)) for v in (1, 1.0, True))
    assert len({first, second, third}) == 3
    assert tokens.lookup("request", ("out", 1.0)) == second


@pytest.mark.parametrize("where", ["stopReason", "error"])
def test_outcomes_compare_exactly(where: str) -> None:
    def step(value: Any) -> dict[str, Any]:
        outcome = (
            {"result": {"stopReason": value}}
            if where == "stopReason"
            else {"error": {"code": value, "message": "m"}}
        )
        return {"steps": [{"step": 1, "do": "request", "label": "x", **outcome}]}

    assert paths(step(-32601), step(-32601.0)) != []
    assert paths(step(-32601), step(-32601)) == []


def test_an_answer_goes_to_the_agent_request_with_the_same_id_and_type() -> None:
    from parity.view.ownership import _match_answers
    from tests.support.wire import Wire

    wire = Wire()
    asks = [
        wire.frame("in", {"jsonrpc": "2.0", "id": ident, "method": "x/ask", "params": {}})
        for ident in (1, 1.0)
    ]
    answer = wire.frame("out", {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert _match_answers(wire.t) == {asks[0]: answer}  # not the later 1.0

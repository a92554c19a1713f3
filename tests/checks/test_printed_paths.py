"""Every path a parity diff prints is a selector that selects its difference: written as a
`diverge` rule's path, it explains that difference (docs/transcript.md: "a valid
selector, ready for a diverge rule"), in a same-dialect comparison and across dialects,
where model requests are compared in canonical form."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parity.checks.diff import compare
from parity.checks.differences import Difference
from parity.scenario.model import Rule
from parity.scenario.selectors import Path, get_path
from tests.checks.test_exact import with_value
from tests.fakellm.test_canonical import CHAT, RESPONSES, STREAM


def cross_dialect(stream: dict[str, Any], chat: dict[str, Any]) -> tuple[Any, Any]:
    ref = with_value(2)
    other = copy.deepcopy(ref)
    ref["model"] = [
        {"path": "/catalog", "method": "GET", "body": None},
        {"path": "/stream", "body": stream},
    ]
    other["model"] = [{"path": "/v1/chat/completions", "body": chat}]
    return ref, other


def key(d: Difference) -> tuple[Any, ...]:
    return (d.category, d.ref_path, d.other_path)


def assert_printed_paths_select(ref: Any, other: Any) -> int:
    """Each difference's printed path, as the only diverge rule, suppresses it."""
    report = compare(ref, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    for d in report.differences:
        rule = Rule(path=d.path, reason="as printed")
        ruled = compare(ref, other, profile="exact", diverge=[rule], ref_name="a", other_name="b")
        suppressed = [key(s) for s, _ in ruled.suppressed]
        assert key(d) in suppressed, f"{d.path!r} ({d.category}) selects nothing it printed"
        assert not ruled.stale
    return len(report.differences)


def test_a_canonical_model_path_is_a_rule_that_matches() -> None:
    chat: Any = copy.deepcopy(CHAT)
    chat["tools"][0]["function"]["name"] = "echo2"
    chat["messages"][1]["content"] = "stop"
    ref, other = cross_dialect(STREAM, chat)
    report = compare(ref, other, profile="exact", diverge=[], ref_name="a", other_name="b")
    printed = [d.path for d in report.differences]
    assert "model[0].canonical.tools[0].name" in printed
    assert assert_printed_paths_select(ref, other) == len(printed)
    # The rule the issue tried: it explains the tool's name, nothing else, and is not stale.
    rule = Rule(path="model[0].canonical.tools[0].name", reason="renamed")
    ruled = compare(ref, other, profile="exact", diverge=[rule], ref_name="a", other_name="b")
    assert [d.path for d, _ in ruled.suppressed] == ["model[0].canonical.tools[0].name"]
    assert not ruled.stale


def test_a_type_change_across_dialects_is_a_rule_that_matches() -> None:
    """`{"n": 2}` against `{"n": 2.0}` as tool arguments, parity-stream against responses."""
    stream: Any = copy.deepcopy(STREAM)
    responses: Any = copy.deepcopy(RESPONSES)
    stream["messages"][1]["content"][1]["arguments"] = '{"n": 2}'
    responses["input"][2]["arguments"] = '{"n": 2.0}'
    ref, other = cross_dialect(stream, CHAT)
    other["model"] = [{"path": "/v1/responses", "body": responses}]
    assert assert_printed_paths_select(ref, other) == 1


ODD_KEYS = st.sampled_from(
    ["a.b", "a[0]", "*", "**", 'say "hi"', "back\\slash", " padded ", "x y", "", "0", "-1",
     "usage_update", "naïve.é", "it's", "tab\tkey", "new\nline"]
)  # fmt: skip
VALUES = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([2.0, "1", "x", [], {}])


def places(node: Any, path: Path = ()) -> list[Path]:
    """Every path inside `node`, containers and leaves."""
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += places(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += places(v, (*path, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: Any, depth: int, leaves: bool = False) -> Any:
    """`base` with one to three random edits at least `depth` levels down (the view's
    layout stays a view): a value replaced (by another type, too), a key or item
    removed, a key (odd ones included) or item added. `leaves`: only scalars are
    replaced (not null), texts by texts (a model body keeps the shape its dialect's reader
    expects)."""
    view = copy.deepcopy(base)
    values = VALUES.filter(lambda v: not isinstance(v, list | dict)) if leaves else VALUES
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([p for p in places(view) if len(p) >= depth]))
        parent, last = get_path(view, path[:-1]), path[-1]
        op = draw(st.sampled_from(["set", "drop", "add"]))
        if op == "set" and not (leaves and isinstance(parent[last], list | dict | None)):
            is_text = leaves and isinstance(parent[last], str)
            parent[last] = copy.deepcopy(draw(ODD_KEYS if is_text else values))
        elif op == "drop":
            del parent[last]
        else:
            target = parent[last] if isinstance(parent[last], dict | list) else parent
            if isinstance(target, dict):
                target[draw(ODD_KEYS)] = copy.deepcopy(draw(values))
            elif not leaves:
                target.insert(draw(st.integers(0, len(target))), copy.deepcopy(draw(values)))
    return view


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), value=VALUES, flip=st.booleans())
def test_every_printed_path_selects_its_difference_same_dialect(
    data: st.DataObject, value: Any, flip: bool
) -> None:
    ref = with_value(value)
    other = data.draw(mutated(ref, 4))
    if flip:
        ref, other = other, ref
    assert_printed_paths_select(ref, other)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), flip=st.booleans())
def test_every_printed_path_selects_its_difference_across_dialects(
    data: st.DataObject, flip: bool
) -> None:
    chat = data.draw(mutated(CHAT, 2, leaves=True))
    ref, other = cross_dialect(STREAM, chat)
    if flip:
        ref, other = other, ref
    assert_printed_paths_select(ref, other)


def test_an_update_kind_of_another_type_is_a_difference_not_a_crash() -> None:
    """Found by the property above: `sessionUpdate: []` did not hash in the chunk merge."""
    ref = with_value(None)
    other = copy.deepcopy(ref)
    other["steps"][0]["updates"][0]["sessionUpdate"] = []
    assert assert_printed_paths_select(ref, other) == 2  # not paired: missing + extra

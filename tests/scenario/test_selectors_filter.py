"""The selector filter segment `[field.path=value]` (known differences per method)."""

from __future__ import annotations

import pytest

from parity.scenario.selectors import parse_selector, select

VIEW = {
    "steps": [
        {"send": {"method": "session/new"}, "n": 1},
        {"send": {"method": "session/list"}, "n": 2, "error": {"code": -32601}},
        {"n": "2"},
        {"n": 2.0},
        {"n": True},
    ]
}


def test_filters_select_items_by_a_nested_field() -> None:
    assert select(VIEW, "steps[send.method=session/list]") == [("steps", 1)]
    assert select(VIEW, "steps[send.method=session/list].error.code") == [
        ("steps", 1, "error", "code")
    ]
    assert select(VIEW, "steps[send.method=nothing]") == []


@pytest.mark.parametrize(
    ("literal", "index"),
    [("2", [1]), ("'2'", [2]), ('"2"', [2]), ("2.0", [3]), ("true", [4]), ("1", [0])],
)
def test_filter_values_are_type_exact(literal: str, index: list[int]) -> None:
    assert select(VIEW, f"steps[n={literal}]") == [("steps", i) for i in index]


def test_a_contains_filter_selects_strings_that_contain_the_text() -> None:
    assert select(VIEW, "steps[send.method~=session/]") == [("steps", 0), ("steps", 1)]
    assert select(VIEW, "steps[send.method~=list]") == [("steps", 1)]
    # Only strings contain: the number 2 and the string "2" differ here too.
    assert select(VIEW, "steps[n~='2']") == [("steps", 2)]
    assert select(VIEW, "steps[send.method~=nothing]") == []


@pytest.mark.parametrize(
    "bad", ["steps[=x]", "steps[.=x]", "steps[a..b=x]", "steps[a~=]", "steps[a~=2]", "steps[~=x]"]
)
def test_malformed_filters_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_selector(bad)

"""A view as snapshot YAML and back: the text read back is the view written."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parity.core.exact import json_equal
from parity.view import dump


@pytest.fixture(params=["libyaml", "pure-python"])
def dumper(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """`parity.view.dump` with libyaml's emitter, and without it (PyYAML built without
    libyaml falls back to the pure-Python one, which writes U+0085 raw)."""
    if request.param == "pure-python":
        monkeypatch.delattr(yaml, "CSafeDumper", raising=False)
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    yield importlib.reload(dump)
    monkeypatch.undo()
    importlib.reload(dump)


@pytest.mark.parametrize(
    "text",
    [
        "one line",
        "two\nlines\n",
        "no final newline\nhere",
        "Loading\x85done",  # YAML reads U+0085 (and U+2028/9) as a line break
        "Loading\x85 done\nnext line",
        "para\u2028graph\u2029end",
    ],
)
def test_strings_read_back_as_written(dumper: ModuleType, text: str) -> None:
    view = {"steps": [{"text": text}]}
    assert dumper.load_view(dumper.dump_view(view)) == view


def test_multi_line_strings_are_literal_blocks(dumper: ModuleType) -> None:
    assert dumper.dump_view({"t": "a\nb\n"}) == "t: |\n  a\n  b\n"


# Exactness: what a snapshot holds is what the wire carried, type included.

# Strings YAML 1.1 would read as something else when written plain.
TRICKY = st.sampled_from(
    ["1", "2.0", "-0", "1e3", "true", "True", "yes", "no", "on", "off", "y", "n", "null", "~",
     "", " ", "0x1f", "0o7", "0b1", "1_000", "1:20", ".inf", ".nan", "-", "<<", "=", "2001-12-14",
     "'1'", '"1"', "- a", "a: b", "#", "!x", "&a", "*a", "|", ">"]
)  # fmt: skip
STRINGS = st.text() | TRICKY
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | STRINGS
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(STRINGS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON_VALUES)
def test_every_json_value_reads_back_with_its_type(dumper: ModuleType, value: Any) -> None:
    """dump -> load is type-exact: `2.0` stays a float, `"1"` a string, `true` no `1`."""
    view = {"steps": [{"v": value}], "v": value}
    assert json_equal(dumper.load_view(dumper.dump_view(view)), view)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2, "2"),
        (2.0, "2.0"),
        (-0.0, "-0.0"),
        (1e20, "1.0e+20"),
        (True, "true"),
        (False, "false"),
        (1, "1"),
        (0, "0"),
        ("1", "'1'"),
        ("2.0", "'2.0'"),
        ("true", "'true'"),
        ("null", "'null'"),
        ("", "''"),
        (None, "null"),
    ],
)
def test_scalars_are_written_as_their_json_type(dumper: ModuleType, value: Any, text: str) -> None:
    assert dumper.dump_view({"v": value}) == f"v: {text}\n"
    assert json_equal(dumper.load_view(f"v: {text}\n"), {"v": value})

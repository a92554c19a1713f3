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


# The short paths (`_Representer`, `_Constructing`) against PyYAML's own: a flood's view
# takes them millions of times, and they must give exactly what PyYAML's would.


def _reference_dump(module: ModuleType, value: Any) -> str:
    """`value` as PyYAML's own `represent_data` writes it, in `dump_view`'s style."""
    base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Reference(base):  # type: ignore[valid-type,misc]
        pass

    Reference.add_representer(str, module._represent_str)
    return yaml.dump(
        value,
        Dumper=Reference,
        width=100,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
    )


def _reference_load(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=JSON_VALUES)
def test_the_short_paths_write_and_read_what_pyyaml_does(dumper: ModuleType, value: Any) -> None:
    view = {"steps": [{"updates": [value, {"v": value}]}], "v": value}
    text = dumper.dump_view(view)
    assert text == _reference_dump(dumper, view)
    assert json_equal(dumper.load_view(text), _reference_load(text))


def test_a_dict_or_list_met_twice_is_an_alias_as_pyyaml_writes_it(dumper: ModuleType) -> None:
    shared: dict[str, Any] = {"a": [1, "x"]}
    loop: list[Any] = ["x"]
    loop.append(loop)
    view = {"one": shared, "two": [shared, shared["a"]], "loop": loop}
    text = dumper.dump_view(view)
    assert text == _reference_dump(dumper, view)
    assert "&id001" in text and "*id001" in text
    back = dumper.load_view(text)
    assert back["two"][0] is back["one"] and back["loop"][1] is back["loop"]


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",  # an alias: one object, twice
        "base: &b {k: 1}\nmerged:\n  <<: *b\n  j: 2\n",  # a merge key
        "? !!str =\n: v\n=: w\n",  # `=`, PyYAML's value key
        "d: 2001-12-14\nt: !!binary aGk=\ns: !!set {a, b}\n",  # other tags
        "x: !!omap [{a: 1}]\n",
        "? [1, 2]\n: x\n",  # a key that is no scalar: PyYAML's error
        "x: !custom 1\n",  # a tag with no constructor: PyYAML's error
        "",
        "- 1\n- 1.5\n- .inf\n- ~\n- yes\n- '1'\n- 0x1f\n",
    ],
)
def test_what_the_short_path_leaves_is_read_by_pyyaml(text: str) -> None:
    """Snapshots hold plain maps, lists and scalars; anything else (hand-edited YAML)
    is read as PyYAML reads it, or fails as it fails."""
    try:
        expected = _reference_load(text)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            dump.load_view(text)
        return
    back = dump.load_view(text)
    assert json_equal(back, expected) if "!!" not in text else back == expected
    if "*x" in text:
        assert back["c"] is back["a"]

"""A view as snapshot YAML and back: the text read back is the view written."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

import pytest
import yaml

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

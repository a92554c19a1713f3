"""Scenario YAML through libyaml's parser reads as through PyYAML's own: the same node
tree (kinds, tags, values, the line and column every finding points at), the same data
and the same findings; a text libyaml refuses, or that PyYAML's reader refuses, is read
by PyYAML's own parser, so its error stays word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from parity.scenario import yaml_positions

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = [*sorted(ROOT.glob("scenarios/**/*.yaml")), ROOT / "known-differences.yaml"]


def _tree(node: Node | None) -> Any:
    """A node tree as plain data: kind, tag, where it starts, and its value."""
    if node is None:
        return None
    where = (type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column)
    if isinstance(node, ScalarNode):
        return (*where, node.value)
    if isinstance(node, SequenceNode):
        return (*where, [_tree(item) for item in node.value])
    assert isinstance(node, MappingNode)
    return (*where, [(_tree(k), _tree(v)) for k, v in node.value])


def _read(text: str) -> Any:
    try:
        node, data, findings = yaml_positions.parse(text, "f.yaml")
    except yaml.YAMLError as exc:  # PyYAML's reader refuses the text outright
        return repr(exc)
    return _tree(node), data, findings


def _both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = _read(text)
    monkeypatch.setattr(yaml_positions, "_CLoader", None)
    pure = _read(text)
    monkeypatch.undo()
    return fast, pure


def test_every_shipped_file_reads_the_same_through_libyaml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert len(SHIPPED) > 50 and yaml_positions._CLoader is not None
    for path in SHIPPED:
        fast, pure = _both(path.read_text(encoding="utf-8"), monkeypatch)
        assert fast == pure, path


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [x, {c: d}]\nn: ~\nt: yes\n'q': \"é😀 x\"\n  # comment\n",
        "base: &b {k: 1, j: 2}\nuse:\n  <<: *b\n  k: 3\n",  # a merge key overridden
        "a: 1\nb: 2\na: 3\n",  # a duplicate key
        "1: one\ntrue: yes\n? [x]\n: list key\n",  # keys that are no strings
        "steps:\n\t- x\n",  # a tab: both refuse it
        "a: [1, 2\n",  # unclosed
        'a: "\\ud83d"\n',  # a lone surrogate's escape: libyaml refuses it
        "a: b\x07\n",  # a control character
        "",
        "# only a comment\n",
        "--- a\n--- b\n",  # two documents
        "a: !!binary aGk=\nb: 2001-12-14\n",
        "\ufeffa: 1\nb: [x]\n",  # a byte order mark
        "a: 1\r\nb:\r\n  - x\r\n  - {c: d}\r\n",  # CRLF line ends
        "a: 'x\x85y'\nb: [😀, {c: 😀}]\nd: |\n  lit\n   eral\n",  # NEL, wide characters
    ],
)
def test_tricky_texts_read_the_same_through_libyaml(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, pure = _both(text, monkeypatch)
    assert fast == pure


def test_libyaml_reads_the_shipped_files_without_falling_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The speed is libyaml's: a shipped file that fell back would cost the old time."""
    fallbacks: list[str] = []
    original = yaml.SafeLoader.__init__

    def counted(self: yaml.SafeLoader, stream: Any) -> None:
        fallbacks.append(str(stream)[:40])
        original(self, stream)

    monkeypatch.setattr(yaml.SafeLoader, "__init__", counted)
    for path in SHIPPED:
        node, _, _ = yaml_positions.parse(path.read_text(encoding="utf-8"), str(path))
        assert node is not None, path
    assert fallbacks == []

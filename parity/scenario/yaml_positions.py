"""Scenario YAML: parse once, keep the node tree, and map key paths to line:column.

The loaded data no longer knows where anything was written, so every finding is
positioned through the composed node tree: `locate` walks it along a key path,
`finding_at` makes a `ScenarioError` pointing at a node, and a `Sink` collects the
cross-checks' findings by key path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from parity.scenario.errors import KeyPath, ScenarioError, Severity

_CLoader: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def _libyaml(text: str, file: str) -> tuple[Node, Any, list[ScenarioError]] | None:
    """`parse` through libyaml's parser, when PyYAML has it (the usual wheels do):
    PyYAML's pure-Python parser took 1.3 s for the shipped scenarios and known
    differences in every pytest worker, and 0.1 s in every `parity run`. None when
    libyaml is missing, finds the text wrong or empty: PyYAML's own parser then reads
    it, so what a wrong file is told (message, line, column) stays its own. Nodes and
    marks are the same (`tests/scenario/test_yaml_positions.py` compares them)."""
    if _CLoader is None:
        return None
    try:
        # PyYAML's reader refuses characters YAML forbids; libyaml's rules differ.
        yaml.reader.Reader(text)
        loader = _CLoader(text)
    except yaml.YAMLError:
        return None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        findings = list(_yaml_findings(node, (), file))  # before `<<` merges flatten
        return node, loader.construct_document(node), findings
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def parse(text: str, file: str) -> tuple[Node | None, Any, list[ScenarioError]]:
    """The document's node tree, its data and the findings only the YAML can show
    (syntax, duplicate and non-string keys); no tree or data when it does not parse."""
    fast = _libyaml(text, file)
    if fast is not None:
        return fast
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        # Key checks run on the composed tree, before construction flattens `<<` merges
        # into it (a merged key overridden locally is not a duplicate).
        findings = list(_yaml_findings(node, (), file)) if node is not None else []
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        message = f"invalid YAML: {exc.problem or exc.context or 'cannot parse'}"
        hint = f"{exc.context}" if exc.context and exc.problem else ""
        return None, None, [ScenarioError(file, line, column, "", message, hint)]
    except yaml.YAMLError as exc:
        return None, None, [ScenarioError(file, 1, 1, "", f"invalid YAML: {exc}")]
    finally:
        loader.dispose()
    if node is None:
        hint = "a scenario needs at least `description` and `steps`"
        return None, None, [ScenarioError(file, 1, 1, "", "empty file", hint)]
    return node, data, findings


def _yaml_findings(node: Node, path: KeyPath, file: str) -> Iterator[ScenarioError]:
    """Duplicate and non-string keys: the loaded data can no longer show them."""
    seen: set[int] = set()

    def walk(node: Node, path: KeyPath) -> Iterator[ScenarioError]:
        if id(node) in seen:  # aliases share nodes; report each node once
            return
        seen.add(id(node))
        if isinstance(node, MappingNode):
            first: dict[str, Node] = {}
            for key, value in node.value:
                if not isinstance(key, ScalarNode):
                    yield finding_at(
                        file, key, key_text(path), "mapping keys must be plain strings"
                    )
                    continue
                if key.tag != "tag:yaml.org,2002:str" and key.value != "<<":
                    hint = f"YAML reads unquoted {key.value!r} as a {key.tag.rsplit(':', 1)[-1]}"
                    hint += "; quote it"
                    yield finding_at(
                        file, key, key_text(path), f"key {key.value!r} is not a string", hint
                    )
                if key.value in first:
                    line = first[key.value].start_mark.line + 1
                    msg = f"duplicate key {key.value!r}; first at line {line}"
                    yield finding_at(
                        file, key, key_text(path), msg, "YAML keeps only the later value"
                    )
                first[key.value] = key
                yield from walk(value, (*path, key.value))
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                yield from walk(item, (*path, index))

    yield from walk(node, path)


def finding_at(
    file: str,
    node: Node | None,
    key: str,
    message: str,
    hint: str = "",
    severity: Severity = "error",
) -> ScenarioError:
    """A finding pointing at `node` (at the top of the file without one)."""
    line, column = (node.start_mark.line + 1, node.start_mark.column + 1) if node else (0, 0)
    return ScenarioError(file, line, column, key, message, hint, severity)


def locate(root: Node, path: KeyPath, *, key: bool = False) -> Node:
    """The node at `path` (its key node with `key=True`), or the deepest one that exists."""
    node = root
    for depth, part in enumerate(path):
        child: Node | None = None
        key_node: Node | None = None
        if isinstance(node, MappingNode):
            for k, v in node.value:  # the last duplicate wins, as in the loaded data
                if isinstance(k, ScalarNode) and k.value == str(part):
                    key_node, child = k, v
        elif isinstance(node, SequenceNode) and isinstance(part, int):
            child = node.value[part] if 0 <= part < len(node.value) else None
        if child is None:
            return node
        if key and depth == len(path) - 1 and key_node is not None:
            return key_node
        node = child
    return node


def key_text(path: Sequence[str | int]) -> str:
    """`steps[2].prompt.cancel`; keys that are not identifiers are quoted: `files["a.txt"]`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text


@dataclass
class Sink:
    """Collects cross-check findings, positioning each by its key path."""

    root: Node
    file: str
    found: list[ScenarioError] = field(default_factory=list)

    def add(
        self, path: KeyPath, message: str, hint: str = "", severity: Severity = "error"
    ) -> None:
        self.found.append(
            finding_at(self.file, locate(self.root, path), key_text(path), message, hint, severity)
        )

    def line(self, path: KeyPath) -> int:
        return locate(self.root, path).start_mark.line + 1


def mappings(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """(index, mapping) for each mapping in a list; anything else yields nothing (the
    checks read data the schema may already have found malformed)."""
    return (
        [(i, v) for i, v in enumerate(value) if isinstance(v, dict)]
        if isinstance(value, list)
        else []
    )

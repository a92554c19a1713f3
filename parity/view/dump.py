"""A view as YAML text: the exact bytes of a snapshot file, and back.

`dump_view` is what `parity record` writes to `snapshots/<scenario>/<target>.yaml` (through
the syrupy extension, `parity.suite.snapshots`), what `parity show` prints and what the
HTML report shows; `load_view` reads a snapshot back for the parity checks and diffs;
`text_diff` is the text diff a drifted snapshot shows (the extension's `diff_lines`).
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml

# libyaml's C emitter and parser when PyYAML was built with them (the usual wheels are):
# the pure-Python ones cost tens of milliseconds per snapshot. Output is the same.
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Representer(yaml.representer.SafeRepresenter):
    """Strings, dicts and lists take a short path to their nodes: PyYAML's own
    `represent_data` is generic Python (type lookups by MRO, alias bookkeeping for every
    value), and a flood's view has millions of them. The nodes are the ones PyYAML
    makes under `dump_yaml`'s options (keys unsorted, block style, no default style),
    aliases of a dict or list met twice included; anything else takes PyYAML's path
    (`tests/view/test_dump.py` compares the two on any JSON)."""

    def represent_data(self, data: Any) -> yaml.Node:
        kind = type(data)
        if kind is str:
            return yaml.ScalarNode(_STR, data, style=_str_style(data))
        if kind is not dict and kind is not list:
            return super().represent_data(data)
        # What `represent_mapping`/`represent_sequence` do under `dump_yaml`'s options:
        # the node is known by the object's id before its items, so a second meeting
        # (or a cycle) becomes an alias.
        known = self.represented_objects.get(id(data))
        if known is not None:
            return known
        self.object_keeper.append(data)
        if kind is dict:
            pairs: list[tuple[yaml.Node, yaml.Node]] = []
            node: yaml.Node = yaml.MappingNode(_MAP, pairs, flow_style=False)
            self.represented_objects[id(data)] = node
            represent = self.represent_data
            for key, value in data.items():
                pairs.append((represent(key), represent(value)))
            return node
        items: list[yaml.Node] = []
        node = yaml.SequenceNode(_SEQ, items, flow_style=False)
        self.represented_objects[id(data)] = node
        items.extend(map(self.represent_data, data))
        return node


class _Dumper(_Representer, _BaseDumper):  # type: ignore[valid-type,misc]
    """Block style everywhere; multi-line strings as `|` literals so diffs read well."""


class _PureDumper(_Representer, yaml.SafeDumper):
    """The same style in pure Python, for a view libyaml cannot write: a lone UTF-16
    surrogate (legal in JSON as `"\\ud83d"`, and how an invalid UTF-8 byte of a raw line
    is kept) cannot be encoded to UTF-8, which libyaml needs; PyYAML's emitter writes it
    as the escape `"\\uD83D"` instead, so the snapshot keeps the exact value."""


_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
"""Characters YAML reads as line breaks: written raw (`allow_unicode`) they come back
changed, so a string holding one is double-quoted, where they are escaped."""


def _str_style(value: str) -> str | None:
    # PyYAML falls back to a quoted style by itself when a literal block cannot hold it.
    if "\x85" in value or "\u2028" in value or "\u2029" in value:  # _LINE_BREAKS
        return '"'
    return "|" if "\n" in value else None


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR, value, style=_str_style(value))


_Dumper.add_representer(str, _represent_str)
_PureDumper.add_representer(str, _represent_str)


def dump_view(view: Any) -> str:
    """Serialize a normalized view as YAML; keys keep the view's (deterministic) order."""
    return dump_yaml(view, width=100)


def dump_yaml(data: Any, *, width: int) -> str:
    """Plain data as block YAML in this module's style, keys in the data's order, lines
    folded past `width` (a scenario `parity capture` writes uses this too)."""
    options: dict[str, Any] = {
        "sort_keys": False,
        "allow_unicode": True,
        "default_flow_style": False,
        "width": width,
    }
    try:
        return str(yaml.dump(data, Dumper=_Dumper, **options))
    except UnicodeEncodeError:
        # Only a view holding a lone surrogate gets here; the same view always does, so
        # its text is as deterministic as any other's.
        return str(yaml.dump(data, Dumper=_PureDumper, **options))


class _Unusual(Exception):
    """A node `_Constructing` leaves to PyYAML's own constructor."""


_SCALARS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float"))
"""Scalar tags whose PyYAML constructors read only the node (no alias bookkeeping)."""


class _Constructing(yaml.constructor.SafeConstructor):
    """Builds the document in one recursive pass: PyYAML's `construct_document` is
    generic Python (two-step generators for every dict and list, a table of every node
    constructed), and a flood's snapshot has millions of nodes. Exactly the values
    PyYAML's would build, for what a snapshot holds: plain maps, lists and scalars. A
    node met twice (an alias), a merge key (`<<`), a key that is no scalar, any other
    tag: the whole document goes to PyYAML's own, as does a nesting too deep for this
    pass (`tests/view/test_dump.py` compares the two on any JSON)."""

    def construct_document(self, node: yaml.Node) -> Any:
        try:
            return self._build(node, set())
        except (_Unusual, RecursionError):
            return super().construct_document(node)

    def _build(self, node: yaml.Node, seen: set[int]) -> Any:
        kind, tag = node.__class__, node.tag
        if kind is yaml.ScalarNode:
            if tag == _STR:
                return node.value
            if tag in _SCALARS:
                return self.yaml_constructors[tag](self, node)
            raise _Unusual
        if id(node) in seen:
            raise _Unusual
        seen.add(id(node))
        if kind is yaml.SequenceNode and tag == _SEQ:
            return [self._build(item, seen) for item in node.value]
        if kind is not yaml.MappingNode or tag != _MAP:
            raise _Unusual
        out: dict[Any, Any] = {}
        for key, value in node.value:
            # A merge (`<<`) or value (`=`) key has a tag of its own: PyYAML's then.
            if key.__class__ is not yaml.ScalarNode:
                raise _Unusual
            out[self._build(key, seen)] = self._build(value, seen)
        return out


class _FastLoader(_Constructing, _Loader):  # type: ignore[valid-type,misc]
    """libyaml's parser (when built with it) and `_Constructing`."""


def load_view(text: str) -> Any:
    """Parse a snapshot file's text back into the view it holds."""
    try:
        return yaml.load(text, Loader=_FastLoader)
    except yaml.YAMLError:
        # libyaml refuses the escape of a lone surrogate (`"\\uD83D"`) that
        # `_PureDumper` writes; PyYAML's own parser reads it back exactly. A text that is
        # not YAML fails here too, with PyYAML's error.
        return yaml.load(text, Loader=yaml.SafeLoader)


DIFF_LINES = 80
"""Lines of the text diff a drifted snapshot shows before the rest is counted."""


def text_diff(recorded: str, live: str, shown_as: str) -> list[str]:
    """The recorded snapshot text against this run's, as a unified diff of their YAML
    (syrupy's own marks changed characters, which long views bury); `shown_as` names
    the file in the headers, and past `DIFF_LINES` lines the rest is counted."""
    lines = list(
        difflib.unified_diff(
            recorded.splitlines(),
            live.splitlines(),
            f"{shown_as} (recorded)",
            f"{shown_as} (this run)",
            n=2,
            lineterm="",
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]
    return lines

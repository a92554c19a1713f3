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


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Block style everywhere; multi-line strings as `|` literals so diffs read well."""


class _PureDumper(yaml.SafeDumper):
    """The same style in pure Python, for a view libyaml cannot write: a lone UTF-16
    surrogate (legal in JSON as `"\\ud83d"`, and how an invalid UTF-8 byte of a raw line
    is kept) cannot be encoded to UTF-8, which libyaml needs; PyYAML's emitter writes it
    as the escape `"\\uD83D"` instead, so the snapshot keeps the exact value."""


_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
"""Characters YAML reads as line breaks: written raw (`allow_unicode`) they come back
changed, so a string holding one is double-quoted, where they are escaped."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style by itself when a literal block cannot hold it.
    if any(c in value for c in _LINE_BREAKS):
        style: str | None = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


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


def load_view(text: str) -> Any:
    """Parse a snapshot file's text back into the view it holds."""
    try:
        return yaml.load(text, Loader=_Loader)
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

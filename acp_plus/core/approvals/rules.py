"""The guard's rules: ordered `deny` / `ask` rules on a call's tool, path and arguments (pure).

The guard runs before any approval: the first rule that matches decides. `deny` fails
the call with `Error: <reason>` and nobody is asked; `ask` routes the call to approval
even when the tool itself would not ask. Because the guard comes before the grants, the
reviewer and the client, a deny can never be answered by a later allow, whatever the
tool (built-in, fixture, MCP or a session's own).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_plus.core.approvals.settings import Rule

PATH_KEYS = ("file_path", "path", "directory", "cwd", "notebook_path")
"""Argument keys read as paths (besides every key ending in `_path`)."""


@dataclass(frozen=True)
class Match:
    """The rule that matched a call: its action, reason and the ledger's name for it."""

    action: str
    reason: str
    rule: str


def rule_name(rule: Rule, index: int) -> str:
    """The name the ledger gives the rule at 0-based `index`."""
    return rule.name or f"rule {index + 1}"


def path_arguments(args: Any) -> list[str]:
    """The path-like string values of a call's top-level arguments, in key order."""
    if not isinstance(args, dict):
        return []
    found: list[str] = []
    for key, value in args.items():
        if key in PATH_KEYS or key.endswith("_path"):
            if isinstance(value, str) and value:
                found.append(value)
            elif isinstance(value, list):
                found.extend(v for v in value if isinstance(v, str) and v)
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _path_forms(given: str, cwd: Path, resolve: Callable[[str, Path], Path]) -> list[str]:
    # A rule may be written for the path as given, the resolved absolute path, or the
    # path below the workspace; all three are tried (symlinks resolved, `..` folded).
    absolute = resolve(given, cwd)
    forms = [given, str(absolute)]
    root = resolve(".", cwd)
    if absolute == root or root in absolute.parents:
        forms.append(absolute.relative_to(root).as_posix() or ".")
    return forms


def _matches(
    rule: Rule, tool: str, args: Any, cwd: Path, resolve: Callable[[str, Path], Path]
) -> bool:
    if not fnmatch.fnmatchcase(tool, rule.tool):
        return False
    if rule.path is not None:
        pattern = rule.path
        if not any(
            fnmatch.fnmatchcase(form, pattern)
            for given in path_arguments(args)
            for form in _path_forms(given, cwd, resolve)
        ):
            return False
    if rule.arguments is not None:
        regex = re.compile(rule.arguments)
        if not any(regex.search(text) for text in _strings(args)):
            return False
    return True


def first_match(
    rules: Sequence[Rule],
    tool: str,
    args: Any,
    cwd: Path,
    resolve: Callable[[str, Path], Path],
) -> Match | None:
    """The first rule matching the call, or None. `resolve` makes a path absolute
    (`core/sandbox.resolve_path`; injectable for tests)."""
    for index, rule in enumerate(rules):
        if _matches(rule, tool, args, cwd, resolve):
            return Match(rule.action, rule.reason, rule_name(rule, index))
    return None

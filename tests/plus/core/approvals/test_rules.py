"""Guard rules: first match wins, on tool globs, resolved paths and argument strings."""

from __future__ import annotations

from pathlib import Path

from acp_plus.core.approvals.rules import first_match, path_arguments
from acp_plus.core.approvals.settings import Rule
from acp_plus.core.sandbox import resolve_path

WS = Path("/ws")


def _resolve(given: str, cwd: Path) -> Path:
    # No file system: fold `..` as realpath would for paths without symlinks.
    import os

    return Path(os.path.normpath(cwd / given))


def test_first_matching_rule_decides() -> None:
    rules = (
        Rule("ask", "asked", tool="bash"),
        Rule("deny", "denied", tool="*"),
    )
    assert first_match(rules, "bash", {}, WS, _resolve).action == "ask"  # type: ignore[union-attr]
    hit = first_match(rules, "write", {}, WS, _resolve)
    assert hit is not None and (hit.action, hit.reason, hit.rule) == ("deny", "denied", "rule 2")


def test_tool_glob_covers_mcp_names() -> None:
    rules = (Rule("deny", "no", tool="mcp__*__delete*", name="mcp-delete"),)
    hit = first_match(rules, "mcp__parity__delete_note", {}, WS, _resolve)
    assert hit is not None and hit.rule == "mcp-delete"
    assert first_match(rules, "delete_note", {}, WS, _resolve) is None


def test_path_rule_sees_through_dot_dot_and_absolute_forms() -> None:
    rules = (Rule("deny", "secret", path="secrets/*"),)
    for given in ("secrets/a", "docs/../secrets/a", "/ws/secrets/a", "./secrets/x/y"):
        assert first_match(rules, "write", {"file_path": given}, WS, _resolve), given
    assert first_match(rules, "write", {"file_path": "docs/a"}, WS, _resolve) is None
    assert first_match(rules, "write", {"content": "secrets/a"}, WS, _resolve) is None


def test_path_rule_follows_symlinks(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "secrets")
    rules = (Rule("deny", "secret", path="secrets/*"),)
    assert first_match(rules, "read", {"file_path": "link/key"}, tmp_path, resolve_path)


def test_arguments_rule_searches_nested_strings() -> None:
    rules = (Rule("deny", "force", arguments=r"push\s+--force"),)
    assert first_match(rules, "git", {"argv": ["x", {"a": "push  --force"}]}, WS, _resolve)
    assert first_match(rules, "git", {"argv": ["push"]}, WS, _resolve) is None
    assert first_match(rules, "git", "push --force", WS, _resolve)  # raw text arguments


def test_all_conditions_must_hold() -> None:
    rules = (Rule("deny", "x", tool="write", path="*.env"),)
    assert first_match(rules, "write", {"file_path": "a.env"}, WS, _resolve)
    assert first_match(rules, "edit", {"file_path": "a.env"}, WS, _resolve) is None


def test_path_arguments_reads_path_keys_only() -> None:
    args = {"file_path": "a", "paths": ["no"], "src_path": "b", "path": ["c", 1], "x": "d"}
    assert path_arguments(args) == ["a", "b", "c"]
    assert path_arguments("a") == []

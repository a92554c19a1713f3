"""The model's view besides the conversation (acp_plus/core/context.py): system prompt,
runtime context, workspace instructions. Pure parts directly; discovery on a real tree.
The texts themselves are checked against the recorded native in the parity suite
(scenarios/context/, scenarios/baseline/)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from acp_plus.core.context import (
    DEFAULT_PERSONA,
    ContextSettings,
    Instruction,
    InstructionSettings,
    ModelContext,
    context_due,
    dedupe,
    discover_instructions,
    persona_problem,
    render_instructions,
    runtime_context,
    system_prompt,
)
from acp_plus.core.events import context_message, user_message
from acp_plus.settings.config import build
from acp_plus.settings.config_schema import ConfigError


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def test_system_prompt_fills_the_persona_and_joins_sections() -> None:
    text = system_prompt("I am.", DEFAULT_PERSONA, model="m1", cwd="/w")
    assert text is not None
    assert text == "I am.\n\nYou are a coding agent powered by the m1 model."
    assert system_prompt("I am.", "in {{cwd}}", model="m1", cwd="/w") == "I am.\n\nin /w"
    assert system_prompt("", "", model="m", cwd="/") is None
    assert system_prompt("", "only {{model}}", model="m", cwd="/") == "only m"


def test_the_mcp_server_sections_follow_the_guidance() -> None:
    context = ModelContext(identity="I am.", guidance=("g1", ""), servers=("## MCP", "### a"))
    assert context.system("m") == "I am.\n\ng1\n\n## MCP\n\n### a"
    assert dataclasses.replace(context, servers=()).system("m") == "I am.\n\ng1"


def test_unknown_persona_variable_is_a_config_error() -> None:
    assert persona_problem("{{model}} in {{cwd}}") is None
    assert persona_problem("hi {{user}}") == "unknown variable {{user}} (known: {{model}}, {{cwd}})"
    with pytest.raises(ConfigError, match=r"persona: unknown variable \{\{user\}\}"):
        build({"persona": "hi {{user}}"}, Path("/tmp"))


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"max_bytes": -1}, "workspace_context.max_bytes: must be >= 0"),
        ({"files": ["a/AGENTS.md"]}, "is not a file name"),
        ({"local_files": [".."]}, "is not a file name"),
        ({"depth": 1}, "workspace_context.depth: unknown key"),
    ],
)
def test_workspace_context_keys_are_validated(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build({"workspace_context": table}, Path("/tmp"))


def test_runtime_context_per_sandbox_mode() -> None:
    ask = runtime_context("workspace-write", '/w "x"')
    assert ask.startswith("Current runtime context. This snapshot supersedes")
    assert 'session workspace: "/w \\"x\\"".' in ask  # JSON-quoted root
    assert ask.endswith("without an available answerer, the request fails closed.")
    assert "policy: read-only" in runtime_context("read-only", "/w")
    # A working directory, when given, comes first, JSON-quoted (native 0.2.1-rc.2).
    at = runtime_context("workspace-write", "/w", '/w/ä "b"')
    assert at.split("\n\n")[1] == 'Current working directory: "/w/ä \\"b\\"".'
    assert at.split("\n\n")[2].startswith("Current DSH file policy: workspace-write.")
    full = runtime_context("danger-full-access", "/w")
    assert "danger-full-access" in full and "Approval prompts are disabled" in full


def _item(display: str, content: str, directory: str = "/r") -> Instruction:
    return Instruction(display, content, directory)


def test_render_frames_every_file_in_order() -> None:
    text = render_instructions([_item("AGENTS.md", "a\n"), _item("CLAUDE.md", "c\n")], 65536)
    assert text.startswith("<system-reminder>\nThe following workspace instructions")
    assert "Instructions from: AGENTS.md\n\na\n\n\nInstructions from: CLAUDE.md\n\nc\n" in text
    assert text.endswith("c\n\n</system-reminder>")
    assert render_instructions([], 65536) == ""
    assert render_instructions([_item("AGENTS.md", "a")], 0) == ""


def test_a_file_cannot_close_the_frame() -> None:
    text = render_instructions([_item("AGENTS.md", "x</system-reminder>y")], 65536)
    assert text.count("</system-reminder>") == 1
    assert "x<\\/system-reminder>y" in text


def test_over_budget_the_broadest_files_go_first() -> None:
    items = [_item("AGENTS.md", "g" * 300), _item("sub/AGENTS.md", "s" * 50)]
    full = render_instructions(items, 65536)
    text = render_instructions(items, _size(full) - 1)
    assert "Workspace instruction budget" in text and "omitted AGENTS.md" in text
    assert "s" * 50 in text and "g" * 300 not in text
    assert _size(text) <= _size(full) - 1


@pytest.mark.parametrize("budget", [400, 300, 260])
def test_the_most_specific_file_is_cut_to_fit(budget: int) -> None:
    items = [_item("AGENTS.md", "é" * 400)]  # two bytes a character: cuts stay whole
    text = render_instructions(items, budget)
    assert _size(text) <= budget
    assert "truncated AGENTS.md from 800 to " in text
    assert "\ufffd" not in text


def test_a_budget_too_small_for_any_frame_keeps_only_the_notice() -> None:
    text = render_instructions([_item("AGENTS.md", "x" * 100)], 60)
    assert _size(text) <= 60
    assert text.startswith("Workspace instruction budget 60 bytes")
    assert "<system-reminder>" not in text


def test_dedupe_is_per_directory_on_trimmed_text() -> None:
    items = [
        _item("AGENTS.md", "same\n", "/r"),
        _item("CLAUDE.md", "\n same \n", "/r"),
        _item("sub/AGENTS.md", "same\n", "/r/sub"),
    ]
    assert [i.display for i in dedupe(items)] == ["AGENTS.md", "sub/AGENTS.md"]


def test_discovery_walks_from_the_project_root_to_the_cwd(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    cwd = root / "pkg" / "mod"
    cwd.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("root\n")
    (root / "pkg" / "CLAUDE.md").write_text("pkg\n")
    (cwd / "AGENTS.md").write_text("mod\n")
    (cwd / "AGENTS.local.md").write_text("mine\n")
    (cwd / "CLAUDE.md").mkdir()  # a directory named like a candidate is not a file
    (tmp_path / "AGENTS.md").write_text("above the root: never read\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("global\n")
    found = discover_instructions(cwd, home, InstructionSettings())
    assert [
        i.display.rsplit("/", 1)[-1] if i.directory == "<home>" else i.display for i in found
    ] == [
        "AGENTS.md",  # the user-global file first
        "AGENTS.md",
        "pkg/CLAUDE.md",
        "pkg/mod/AGENTS.md",
        "pkg/mod/AGENTS.local.md",
    ]
    assert found[0].content == "global\n"


def test_without_a_marker_the_cwd_is_the_root_and_large_files_are_ignored(
    tmp_path: Path,
) -> None:
    cwd = tmp_path / "w"
    cwd.mkdir()
    (tmp_path / "AGENTS.md").write_text("parent: not read without a marker\n")
    (cwd / "AGENTS.md").write_text("x" * 20)
    (cwd / "CLAUDE.md").write_text("small\n")
    found = discover_instructions(cwd, None, InstructionSettings(max_source_bytes=10))
    assert [(i.display, i.content) for i in found] == [("CLAUDE.md", "small\n")]
    assert discover_instructions(cwd, None, InstructionSettings(max_bytes=0)) == []


def test_context_is_due_once_and_again_only_when_it_changes() -> None:
    calls: list[int] = []

    def instructions() -> str:
        calls.append(1)
        return "<system-reminder>\nrules\n</system-reminder>"

    context = ModelContext(runtime="ctx 1", instructions=instructions)
    events: list[dict[str, object]] = [dict(user_message("u1", 1, []))]
    due = context_due(events, context)
    assert due == [("workspace-instructions", instructions()), ("runtime-context", "ctx 1")]
    events += [dict(context_message(str(n), 1, s, t)) for n, (s, t) in enumerate(due)]
    assert context_due(events, context) == []
    changed = ModelContext(runtime="ctx 2", instructions=instructions)
    assert context_due(events, changed) == [("runtime-context", "ctx 2")]
    assert context_due(events, ModelContext()) == []


def test_session_context_from_settings(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("be kind\n")
    settings = ContextSettings(home=tmp_path / "home")
    context = settings.for_session(str(tmp_path), "read-only")
    assert context.system("m") is not None and "powered by the m model" in str(context.system("m"))
    assert context.runtime is not None and "policy: read-only" in context.runtime
    assert context.instructions is not None and "be kind" in context.instructions()
    off = ContextSettings(runtime_context=False, instructions=InstructionSettings(max_bytes=0))
    bare = off.for_session(str(tmp_path), "read-only")
    assert bare.runtime is None and bare.instructions is None

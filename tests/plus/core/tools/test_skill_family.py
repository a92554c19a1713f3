"""acp-plus's `skill` family against native's, as recorded.

What native shows the model (the tool's definition, the catalog messages, the loaded
skills' blocks) is read from the native snapshots of real runs
(`snapshots/tools/skill-*/native.yaml`), with the skills each scenario placed written
here from the scenario file itself; the rest checks the rules those runs show, at the
level of the pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from acp_plus.core import events as ev
from acp_plus.core.tools import skill_discovery as sd
from acp_plus.core.tools.base import ToolContext, ToolRegistry
from acp_plus.core.tools.skill_family import (
    SKILL_GUIDANCE,
    SkillTool,
    catalog_description,
    catalog_due,
    gestures,
    render_catalog,
    skill_tools,
)
from parity.view.dump import load_view

ROOT = Path(__file__).parents[4]
SCENARIOS = ROOT / "scenarios" / "tools"
SNAPSHOTS = ROOT / "snapshots" / "tools"
NAMES = ("skill-load", "skill-errors", "skill-home", "skill-catalog-change")


def _requests(name: str) -> list[dict[str, Any]]:
    view = load_view((SNAPSHOTS / name / "native.yaml").read_text())
    return [r["body"] for r in view["model"] if r.get("path") == "/stream"]


def _seed(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """The scenario's workdir and home files under `tmp_path`: (workdir, home)."""
    scenario = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    workdir, home = tmp_path / "work", tmp_path / "home"
    for base, files in ((workdir, scenario.get("files")), (home, scenario.get("home_files"))):
        base.mkdir(exist_ok=True)
        for rel, text in (files or {}).items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text)
    return workdir, home


def _tool(home: Path) -> SkillTool:
    return SkillTool(None, {"HOME": str(home)})


def _texts(body: Mapping[str, Any], role: str) -> list[str]:
    return [m["content"][0].get("text", "") for m in body["messages"] if m["role"] == role]


def test_the_definition_is_natives_byte_for_byte() -> None:
    (tool,) = skill_tools(None)
    ours = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    seen = [t for n in NAMES for b in _requests(n) for t in b["tools"] if t["name"] == "skill"]
    assert seen and all(t == ours for t in seen)


def test_native_adds_no_system_prompt_paragraph() -> None:
    assert SKILL_GUIDANCE == ()
    for body in _requests("skill-load"):
        assert body["system"].split("\n\n") == [
            "You are an AI agent powered by DeepSeek Harness.",
            "You are a coding agent powered by the mock model.",
        ]


@pytest.mark.parametrize("name", ["skill-load", "skill-errors", "skill-home"])
async def test_the_first_catalog_and_loaded_skills_are_natives(name: str, tmp_path: Path) -> None:
    workdir, home = _seed(name, tmp_path)
    tool = _tool(home)
    first = _requests(name)[0]
    notes = await tool.step_context(
        [ev.user_message("u", 1, first["messages"][0]["content"])], workdir, 1
    )
    recorded = _texts(first, "user")[2:]  # after the prompt and the runtime context
    ours = [n["content"][0]["text"] for n in notes]
    unmask = {"<workdir>": str(workdir), "<home>": str(home)}
    for mask, real in unmask.items():
        recorded = [t.replace(mask, real) for t in recorded]
    assert ours == recorded
    # Every tool result native gave for a skill call, success or error, is ours.
    last = _requests(name)[-1]
    calls = [
        (block["id"], block["arguments"])
        for m in last["messages"]
        if m["role"] == "assistant"
        for block in m["content"]
        if block.get("type") == "tool-call" and block["name"] == "skill"
    ]
    results = {m["toolCallId"]: m for m in last["messages"] if m["role"] == "tool"}
    for call_id, arguments in calls:
        result = await tool.run(yaml.safe_load(arguments), ToolContext("s", workdir, call_id, 1))
        text = results[call_id]["content"][0]["text"]
        for mask, real in unmask.items():
            text = text.replace(mask, real)
        assert (result.content[0]["text"], result.is_error) == (text, results[call_id]["isError"])


def test_the_replacement_catalogs_are_natives() -> None:
    last = _requests("skill-catalog-change")[-1]
    catalogs = [t for t in _texts(last, "user") if t.startswith("<system-reminder>")]
    entries = [
        [{"name": "alpha", "description": "First skill."}],
        [
            {"name": "alpha", "description": "First skill."},
            {"name": "beta", "description": "Second skill."},
        ],
        [{"name": "beta", "description": "Second skill."}],
        [],
    ]
    ours = [render_catalog(e, update=i > 0) for i, e in enumerate(entries)]
    assert catalogs == ours


def _skill(name: str, *, model: bool = True, description: str = "d") -> sd.Skill:
    return sd.Skill(name, description, model, True, Path(f"/s/{name}.md"), Path("/s"), "body")


def _catalog(entries: list[dict[str, str]]) -> dict[str, Any]:
    return {**ev.context_message("c", 1, "skill-catalog", "text"), "entries": entries}


def test_a_catalog_is_due_when_the_model_invocable_skills_change() -> None:
    assert catalog_due([], []) is None  # never a skill: no catalog at all
    assert catalog_due([], [_skill("a", model=False)]) is None
    due = catalog_due([], [_skill("a"), _skill("b", model=False)])
    assert due is not None and due[0] == [{"name": "a", "description": "d"}]
    assert due[1].startswith("<system-reminder>\nA skill is a reusable")
    log = [_catalog([{"name": "a", "description": "d"}])]
    assert catalog_due(log, [_skill("a")]) is None
    changed = catalog_due(log, [_skill("a", description="other")])
    assert changed is not None and "The available skill catalog changed" in changed[1]
    retired = catalog_due(log, [])
    assert retired is not None and retired[0] == [] and "No skills are currently" in retired[1]


def test_a_catalog_description_is_one_line_capped_at_500() -> None:
    assert catalog_description(" a \t b\n\u00a0c  ") == "a b c"
    assert catalog_description("x" * 500) == "x" * 500
    assert catalog_description("x" * 501) == "x" * 497 + "..."
    # JavaScript counts UTF-16 units: an astral character is two.
    assert catalog_description("\U0001f600" * 251) == "\U0001f600" * 248 + "\ud83d..."


def test_gestures_are_the_users_own_slash_names_of_this_step() -> None:
    def user(text: str, source: ev.ContextSource | None = None) -> dict[str, Any]:
        message: dict[str, Any] = dict(ev.user_message("u", 1, [ev.text_block(text)]))
        return message if source is None else {**message, "source": source}

    earlier = [user("/old"), {"type": "assistant/message", "blocks": []}]
    step = [
        user("use /lint then /bot, /lint again\n/end"),
        user("/ctx", "runtime-context"),
        user("a/lint /usr/bin /x-y-"),
    ]
    assert gestures([*earlier, *step]) == ["lint", "end"]
    assert gestures([*step, {"type": "tool/result"}]) == []


def test_front_matter_as_native_reads_it() -> None:
    assert sd.front_matter("---\r\nname: a\r\n---\r\nbody") == ({"name": "a"}, "body")
    assert sd.front_matter("---\nname: a\n---") == ({"name": "a"}, "")
    assert sd.front_matter("---\nname: a\n") is None  # never closed
    assert sd.front_matter(" ---\nname: a\n---\n") is None
    assert sd.front_matter("---\n- a\n---\n") is None  # not a mapping
    # YAML 1.2, as native's parser: `on` and dates stay strings.
    assert sd.front_matter("---\nd: on\nt: 2024-01-01\nb: true\n---\n") == (
        {"d": "on", "t": "2024-01-01", "b": True},
        "",
    )


@pytest.mark.parametrize(
    ("extra", "model", "user"),
    [
        ("", True, True),
        ("disable-model-invocation: yes\n", False, True),
        ("disable-model-invocation: 'ON'\nuser-invocable: 0\n", False, False),
        ("user-invocable: 'off'\n", True, False),
        ("disable-model-invocation: 2\n", None, None),
        ("disable-model-invocation: maybe\n", None, None),
        ("userInvocable: false\n", None, None),
        ("modelInvocable: true\n", None, None),
    ],
)
def test_invocation_flags_fail_closed(extra: str, model: bool | None, user: bool | None) -> None:
    text = f"---\nname: a\ndescription: d\n{extra}---\n\n body \n"
    skill = sd.parse_skill(text, Path("/r/a.md"), Path("/r"))
    if model is None:
        assert skill is None
    else:
        assert skill is not None
        assert (skill.model_invocable, skill.user_invocable, skill.content) == (model, user, "body")


@pytest.mark.parametrize(
    "head",
    ["name: Bad_Name\ndescription: d", "name: a", "description: d", "name: ''\ndescription: d"],
)
def test_a_file_without_a_valid_name_and_description_is_no_skill(head: str) -> None:
    assert sd.parse_skill(f"---\n{head}\n---\nbody", Path("/a.md"), Path("/")) is None


def test_roots_precedence_and_the_system_folder(tmp_path: Path) -> None:
    def put(rel: str, name: str, description: str) -> None:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{rel}\n")

    work, state, agents = tmp_path / "repo" / "sub", tmp_path / "state", tmp_path / "agents"
    work.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    put("repo/.dsh/skills/a.md", "a", "project dsh")
    put("repo/.agents/skills/a/SKILL.md", "a", "project agents")
    put("repo/sub/.dsh/skills/c.md", "c", "below the project root")
    put("state/skills/b/SKILL.md", "b", "acp-plus home")
    put("state/skills/.system/SKILL.md", "s", "system")
    put("state/skills/.system.md", "sys", "a file is no folder")
    put("agents/skills/b.md", "b", "shared")
    put("agents/skills/d.md", "d", "shared")
    put("agents/skills/deep/er/SKILL.md", "e", "nested")
    (agents / "skills/latin1.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    (agents / "skills/nul.md").write_bytes(b"---\nname: nul\ndescription: d\n---\n\0")
    (agents / "skills/bom.md").write_bytes(b"\xef\xbb\xbf---\nname: bom\ndescription: d\n---\n")
    roots = sd.roots(work, state, {"DSH_AGENTS_HOME": str(agents), "HOME": "/nowhere"})
    assert [r.path for r in roots] == [
        tmp_path / "repo/.dsh/skills",
        tmp_path / "repo/.agents/skills",
        state / "skills",
        agents / "skills",
    ]
    found = {s.name: (s.description, s.base) for s in sd.discover(roots)}
    assert found == {
        "a": ("project dsh", tmp_path / "repo/.dsh/skills"),
        "b": ("acp-plus home", state / "skills/b"),
        "bom": ("d", agents / "skills"),
        "d": ("shared", agents / "skills"),
        "sys": ("a file is no folder", state / "skills"),
    }
    assert sd.roots(tmp_path, None, {"HOME": "/h"})[-1].path == Path("/h/.agents/skills")


def test_a_load_rereads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("---\nname: a\ndescription: d\n---\nold\n")
    (skill,) = sd.discover([sd.Root(tmp_path)])
    path.write_text("---\nname: a\ndescription: d\n---\nnew\n")
    fresh = sd.load(skill)
    assert fresh is not None and fresh.content == "new"
    path.write_text("---\nname: b\ndescription: d\n---\nrenamed\n")
    assert sd.load(skill) is None
    path.unlink()
    assert sd.load(skill) is None


async def test_the_registry_gathers_the_tools_step_context(tmp_path: Path) -> None:
    (tmp_path / ".agents/skills").mkdir(parents=True)
    (tmp_path / ".agents/skills/a.md").write_text("---\nname: a\ndescription: d\n---\nA\n")
    registry = ToolRegistry([*skill_tools(None)])
    pending = [ev.user_message("u", 1, [ev.text_block("/a")])]
    notes = await registry.step_context([], pending, tmp_path, 1)
    assert [n.get("source") for n in notes] == ["skill-catalog", "skill-invocation"]
    assert notes[0].get("entries") == [{"name": "a", "description": "d"}]
    assert notes[1]["content"][0]["text"].startswith('<skill_content name="a">')
    assert await ToolRegistry().step_context([], pending, tmp_path, 1) == []

"""The `skill` family as native 0.2.1-rc.2 mounts it: the `skill` tool, the session's
skill catalog, and a user's `/name` gesture.

- The tool loads a skill the model names: native's `<skill_content>` block (the base
  directory, the body verbatim) or one of its error texts.
- The catalog is what the model is told about the available skills: no system-prompt
  paragraph (`SKILL_GUIDANCE` is empty) but a user-role `<system-reminder>` committed
  before a step whenever the model-invocable skills differ from the last catalog the
  session holds (the first one whole, later ones as a replacement, an empty replacement
  retiring every name; none while the session never had a skill).
- A whitespace-bounded `/name` in the user's own message of the step, naming a skill
  the user may invoke, puts that skill's `<skill_content>` in the model's view after
  the catalog.

Both messages are model context (`user/message` with a `source`); the catalog keeps its
entries in the event, so the comparison reads the log and survives a restart. Where
the skills are found: `skill_discovery.py`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acp_plus.core import events as ev
from acp_plus.core.tools import skill_discovery as sd
from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult

SKILL_GUIDANCE: tuple[str, ...] = ()
"""The system-prompt paragraphs native adds with `skill`: none (the catalog is a message)."""

DESCRIPTION = (
    "Load the full instructions for a skill. Call it before acting on a task that names "
    "or clearly matches a skill in the session skill catalog."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "description": "The exact skill name from the available skills list.",
        }
    },
    "required": ["name"],
}

DESCRIPTION_MAX = 500
"""Native's `catalogDescriptionMaxLength`: a catalog description's cap, `...` included."""

_RESOURCES = (
    "Resolve relative paths mentioned by this skill against the base directory before "
    "using them. Load referenced resources only as needed."
)
_CATALOG_HEAD = (
    "A skill is a reusable set of task-specific instructions. The following skills are "
    "available in this session:"
)
_CATALOG_RULE = (
    "If the user names a skill, or the task clearly matches a skill's description, call "
    "the `skill` tool with the exact skill name before taking task actions. Load all "
    "applicable skills, then follow their full instructions. This catalog contains "
    "summaries only; do not infer or follow a skill's instructions until it has been loaded."
)
_DIRECT = (
    "A user may also invoke a skill directly; its <skill_content> block then appears in "
    "this conversation. Follow it, and do not call the `skill` tool again for that skill."
)
_UPDATE_HEAD = (
    "The available skill catalog changed. This complete catalog replaces every earlier "
    "available-skills list in this session:"
)
_UPDATE_RULE = (
    "Use only names in this replacement catalog. If the user names a listed skill, or the "
    "task clearly matches its description, call the `skill` tool with the exact name "
    "before acting."
)
_EMPTY = (
    "No skills are currently available through the `skill` tool. Do not use names from "
    "earlier skill catalogs.",
    "A user may still invoke a skill directly; its <skill_content> block then appears in "
    "this conversation. Follow it, and do not call the `skill` tool for it.",
)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""JavaScript's `\\s` (Python's differs: it has U+001C..U+001F and U+0085, not U+FEFF)."""
_GESTURE = re.compile(f"(?:^|(?<=[{_JS_SPACE}]))/([a-z0-9]+(?:-[a-z0-9]+)*)(?=[{_JS_SPACE}]|\\Z)")
"""A user's `/name`: after the start or whitespace, before whitespace or the very end."""


def escape_text(value: str) -> str:
    """Native's escaping of prose inside skill markup."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_skill(skill: sd.Skill) -> str:
    """Native's `<skill_content>` block of a loaded skill (the tool's result and a
    gesture's injection alike); the name is a skill name, nothing to escape."""
    return "\n".join(
        (
            f'<skill_content name="{skill.name}">',
            "<skill_resources>",
            f"Base directory for this skill: {escape_text(str(skill.base))}",
            _RESOURCES,
            "</skill_resources>",
            "",
            "<skill_instructions>",
            skill.content,
            "</skill_instructions>",
            "</skill_content>",
        )
    )


def catalog_description(value: str, limit: int = DESCRIPTION_MAX) -> str:
    """A description as the catalog shows it: whitespace runs as one space, trimmed,
    capped at `limit` UTF-16 units with `...` (JavaScript's whitespace and lengths)."""
    normalized = re.sub(f"[{_JS_SPACE}]+", " ", value).strip(" ")
    units = normalized.encode("utf-16-le", "surrogatepass")
    if len(units) // 2 <= limit:
        return normalized
    return units[: (limit - 3) * 2].decode("utf-16-le", "surrogatepass") + "..."


def catalog_entries(skills: Sequence[sd.Skill]) -> list[dict[str, str]]:
    """The catalog of `skills`: the model-invocable ones, name and capped description."""
    return [
        {"name": s.name, "description": catalog_description(s.description)}
        for s in skills
        if s.model_invocable
    ]


def render_catalog(entries: Sequence[Mapping[str, str]], update: bool) -> str:
    """Native's catalog message: the first one, or a replacement (`update`)."""
    lines = [f"- `{e['name']}`: {escape_text(e['description'])}" for e in entries]
    if not update:
        tail: Sequence[str] = (_CATALOG_RULE, _DIRECT)
    else:
        tail = (_UPDATE_RULE, _DIRECT) if entries else _EMPTY
    head = _UPDATE_HEAD if update else _CATALOG_HEAD
    body = ["<system-reminder>", head, "", "<available_skills>", *lines, "</available_skills>"]
    return "\n".join((*body, "", *tail, "</system-reminder>"))


def _digest(entries: Sequence[Mapping[str, str]]) -> str:
    canonical = "\n".join(json.dumps([e["name"], e["description"]]) for e in entries)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def last_catalog(events: Sequence[Mapping[str, Any]]) -> list[dict[str, str]] | None:
    """The entries of the newest catalog the session holds, or None (never published)."""
    for event in reversed(events):
        if event.get("type") == "user/message" and event.get("source") == "skill-catalog":
            entries = event.get("entries")
            if isinstance(entries, list):
                return entries
    return None


def catalog_due(
    events: Sequence[Mapping[str, Any]], skills: Sequence[sd.Skill]
) -> tuple[list[dict[str, str]], str] | None:
    """The catalog to commit before the next step (entries and text), or None: the
    same skills as the last catalog, or none ever."""
    entries = catalog_entries(skills)
    last = last_catalog(events)
    if last is None and not entries:
        return None
    if last is not None and _digest(last) == _digest(entries):
        return None
    return entries, render_catalog(entries, update=last is not None)


def gestures(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """The `/name`s of the user's own messages of this step (those after the last
    model output), deduplicated in first-seen order."""
    step: list[Mapping[str, Any]] = []
    for event in reversed(events):
        if event.get("type") in ("assistant/message", "tool/result", "turn/end"):
            break
        if event.get("type") == "user/message" and "source" not in event:
            step.insert(0, event)
    names: list[str] = []
    for message in step:
        for block in message.get("content") or ():
            if block.get("type") == "text":
                for name in _GESTURE.findall(str(block.get("text", ""))):
                    if name not in names:
                        names.append(name)
    return names


class SkillTool:
    """Load a skill's full instructions; before each step, the catalog and gestures."""

    name = "skill"
    description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(self, home: Path | None, env: Mapping[str, str] | None = None) -> None:
        self.home = home
        self.env = dict(os.environ if env is None else env)

    def discover(self, cwd: Path) -> list[sd.Skill]:
        """The session's skills, read now (file I/O)."""
        return sd.discover(sd.roots(cwd, self.home, self.env))

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Reading a skill asks nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Native's checks in its order: arguments, name grammar, the catalog, the file."""
        problem = arguments_error(PARAMETERS, args)
        if problem is not None:
            return ToolResult.text(f"Error: {problem}", is_error=True)
        name = args["name"]
        if not sd.is_skill_name(name):
            return ToolResult.text(f'Error: invalid skill name "{name}"', is_error=True)
        skill, why = await asyncio.to_thread(self._load, name, ctx.cwd)
        if skill is None:
            return ToolResult.text(f'Error: skill "{name}" {why}', is_error=True)
        return ToolResult.text(render_skill(skill))

    def _load(self, name: str, cwd: Path) -> tuple[sd.Skill | None, str]:
        unknown = "is unknown or no longer available"
        found = next((s for s in self.discover(cwd) if s.name == name), None)
        fresh = None if found is None else sd.load(found)
        if fresh is None:
            return None, unknown
        if not fresh.model_invocable:
            return None, "is not available for model invocation"
        return fresh, ""

    async def step_context(
        self, events: Sequence[Mapping[str, Any]], cwd: Path, turn: int
    ) -> list[ev.UserMessage]:
        """What native adds before a step: a changed catalog, then the gestures' skills."""
        skills = await asyncio.to_thread(self.discover, cwd)
        notes: list[ev.UserMessage] = []
        due = catalog_due(events, skills)
        if due is not None:
            entries, text = due
            note = ev.context_message(str(uuid.uuid4()), turn, "skill-catalog", text)
            notes.append({**note, "entries": entries})
        by_name = {s.name: s for s in skills}
        for name in gestures(events):
            skill = by_name.get(name)
            fresh = None if skill is None else await asyncio.to_thread(sd.load, skill)
            if fresh is not None and fresh.user_invocable:
                text = render_skill(fresh)
                notes.append(ev.context_message(str(uuid.uuid4()), turn, "skill-invocation", text))
        return notes


def skill_tools(home: Path | None) -> list[Tool]:
    """The family's tools: `skill`."""
    return [SkillTool(home)]


__all__ = [
    "SKILL_GUIDANCE",
    "SkillTool",
    "catalog_description",
    "catalog_due",
    "catalog_entries",
    "escape_text",
    "gestures",
    "last_catalog",
    "render_catalog",
    "render_skill",
    "skill_tools",
]

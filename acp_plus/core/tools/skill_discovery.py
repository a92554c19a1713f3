"""Where skills come from, as native 0.2.1-rc.2's local skill provider finds them.

A skill is a Markdown file with YAML front matter: a directory bundle
`<root>/<name>/SKILL.md` (its directory is the skill's base) or a flat file
`<root>/<name>.md` (the root is its base); nothing deeper. The roots, in precedence
order (a name found in an earlier root hides the same name later):

1. `<project>/.dsh/skills`, 2. `<project>/.agents/skills` (the project is the nearest
   ancestor of the session's cwd holding `.git`, else the cwd itself),
3. `<home>/skills` (acp-plus's home, where native reads `$DSH_HOME/skills`; its
   `.system` child is skipped),
4. `$DSH_AGENTS_HOME/skills`, else `~/.agents/skills` (shared with other agents).

The front matter must hold a non-empty string `name` (kebab-case) and `description`;
`disable-model-invocation` and `user-invocable` take YAML booleans or `true/false`,
`yes/no`, `on/off`, `1/0`; anything else there (or a camel-case spelling) drops the
skill, as native fails closed. A file that is not a skill is skipped silently (native
logs it). Every read is fresh: a skill written mid-session is seen at the next step.

`parse_skill` and `front_matter` are pure; `discover` and `load` read the file system.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""Native's skill-name grammar: kebab-case, lower-case letters and digits."""


@dataclass(frozen=True)
class Skill:
    """One discovered skill: its summary, where its file is, and its body as last read."""

    name: str
    description: str
    model_invocable: bool
    user_invocable: bool
    path: Path
    """The skill's file (`SKILL.md` or `<name>.md`)."""
    base: Path
    """The directory the skill's relative paths resolve against."""
    content: str
    """The body after the front matter, trimmed."""


@dataclass(frozen=True)
class Root:
    """One skill root: its directory, and whether its `.system` child is skipped."""

    path: Path
    skip_system: bool = False


def is_skill_name(name: object) -> bool:
    """Whether `name` is a string native accepts as a skill name."""
    return isinstance(name, str) and SKILL_NAME.fullmatch(name) is not None


def project_root(cwd: Path) -> Path:
    """The nearest ancestor of `cwd` (itself included) holding `.git`, else `cwd`."""
    for directory in (cwd, *cwd.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return cwd


def roots(cwd: Path, home: Path | None, env: Mapping[str, str]) -> tuple[Root, ...]:
    """The skill roots of a session in `cwd`, in native's precedence order."""
    project = project_root(Path(os.path.abspath(cwd)))
    agents = Path(
        env.get("DSH_AGENTS_HOME") or Path(env.get("HOME") or "~").expanduser() / ".agents"
    )
    found = [Root(project / ".dsh" / "skills"), Root(project / ".agents" / "skills")]
    if home is not None:
        found.append(Root(home / "skills", skip_system=True))
    found.append(Root(agents / "skills"))
    return tuple(found)


@functools.cache
def _yaml12_loader() -> type[Any]:
    """PyYAML's safe loader with YAML 1.2's core booleans and no timestamps, as the
    `yaml` package native parses front matter with reads them (`on`, `yes` and
    `2024-01-01` stay strings). Built on first use: most sessions read no skill file, and
    PyYAML is a large part of the agent's start-up imports otherwise."""
    import yaml

    class Yaml12Loader(yaml.SafeLoader):
        pass

    Yaml12Loader.yaml_implicit_resolvers = {
        first: [
            (tag, regexp) for tag, regexp in resolvers if not tag.endswith((":bool", ":timestamp"))
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Yaml12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    return Yaml12Loader


def front_matter(text: str) -> tuple[dict[str, Any], str] | None:
    """The front matter mapping and the body after it, or None when the text has none
    (its first line must be `---`, closed by a later `---` line; CRLF allowed)."""
    import yaml

    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].removesuffix("\r") != "---":
        return None
    start = line_start = first_end + 1
    while line_start <= len(text):
        newline = text.find("\n", line_start)
        line_end = len(text) if newline < 0 else newline
        if text[line_start:line_end].removesuffix("\r") == "---":
            data = yaml.load(text[start:line_start], Loader=_yaml12_loader())
            if not isinstance(data, dict):
                return None
            return data, text[len(text) if newline < 0 else newline + 1 :]
        if newline < 0:
            return None
        line_start = newline + 1
    return None


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _flag(data: Mapping[str, Any], key: str) -> bool | None:
    """A front-matter boolean as native reads it; ValueError when it is not one."""
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return value == 1
    if isinstance(value, str) and value.lower() in (*_TRUE, *_FALSE):
        return value.lower() in _TRUE
    raise ValueError(key)


def parse_skill(text: str, path: Path, base: Path) -> Skill | None:
    """The skill a file's text declares, or None when it declares none native accepts."""
    import yaml

    try:
        parsed = front_matter(text)
    except yaml.YAMLError:
        return None
    if parsed is None:
        return None
    data, body = parsed
    name, description = data.get("name"), data.get("description")
    if not (isinstance(name, str) and name and isinstance(description, str) and description):
        return None
    if not is_skill_name(name):
        return None
    if any(
        legacy in data for legacy in ("disableModelInvocation", "modelInvocable", "userInvocable")
    ):
        return None
    try:
        disabled = _flag(data, "disable-model-invocation")
        user = _flag(data, "user-invocable")
    except ValueError:
        return None
    return Skill(
        name, description, disabled is not True, user is not False, path, base, body.strip()
    )


def _read(path: Path) -> str | None:
    """A skill file's text as native's file service reads text (a leading byte-order mark
    dropped); None when it is gone or is no text (not UTF-8, or a NUL in its first 8 KiB),
    files native skips."""
    try:
        data = path.read_bytes()
        return None if b"\0" in data[:8192] else data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


def _entries(root: Root) -> list[tuple[Path, Path]]:
    """A root's candidate files and their bases, in native's order (by entry name)."""
    try:
        names = sorted(os.listdir(root.path))
    except OSError:  # absent, not a folder, unreadable: no skills there
        return []
    found: list[tuple[Path, Path]] = []
    for name in names:
        if root.skip_system and name == ".system":
            continue
        entry = root.path / name
        if entry.is_dir():
            found.append((entry / "SKILL.md", entry))
        elif entry.is_file() and name.endswith(".md"):
            found.append((entry, root.path))
    return found


def discover(skill_roots: Sequence[Root]) -> list[Skill]:
    """Every winning skill of the roots (the first root holding a name wins it), sorted
    by name as JavaScript compares strings (by UTF-16 code unit; names are ASCII)."""
    winners: dict[str, Skill] = {}
    for root in skill_roots:
        for path, base in _entries(root):
            text = _read(path)
            skill = None if text is None else parse_skill(text, path, base)
            if skill is not None and skill.name not in winners:
                winners[skill.name] = skill
    return sorted(winners.values(), key=lambda skill: skill.name)


def load(skill: Skill) -> Skill | None:
    """The skill as its file says now (the body is reread at every load, as native's
    is), or None when the file is gone or no longer declares this skill."""
    text = _read(skill.path)
    fresh = None if text is None else parse_skill(text, skill.path, skill.base)
    return fresh if fresh is not None and fresh.name == skill.name else None


__all__ = [
    "Root",
    "Skill",
    "discover",
    "front_matter",
    "is_skill_name",
    "load",
    "parse_skill",
    "project_root",
    "roots",
]

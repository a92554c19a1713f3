"""What the model is told besides the conversation: system prompt, runtime context and
workspace instructions. Native dsh-acp's model view, rebuilt (docs/contract-notes.md,
"The model's view").

Native sends three things acp-plus must send the same way for `plus~native` model-view
parity:

- a system prompt: the harness identity line, then the deployment persona (a template
  with `{{model}}` and `{{cwd}}`), sections joined by a blank line;
- once per session, after the first prompt, the workspace instructions (`AGENTS.md`,
  `CLAUDE.md` and their `.local` overlays from the project root down to the cwd, plus
  a user-global `AGENTS.md` in the home) as one user message framed in
  `<system-reminder>`, within a byte budget;
- a "runtime context" user message (file policy and approval policy), committed after
  the prompt whenever it differs from the last one the session holds.

Everything here is pure except `discover_instructions`, which reads the file system.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_plus.core.events import ContextSource

# -- system prompt ---------------------------------------------------------------------

DEFAULT_IDENTITY = "You are an AI agent powered by DeepSeek Harness."
"""Native's fixed harness identity, the first section a model reads."""

DEFAULT_PERSONA = "You are a coding agent powered by the {{model}} model."
"""The persona native's shipped ACP profile configures (0.2.1-rc.2's `system-prompt` row,
`personaPrefix`; 0.1.0-rc.8's deployment had a longer one, a version fact)."""

PERSONA_VARIABLES = ("model", "cwd")
_VARIABLE = re.compile(r"\{\{([^{}]*)\}\}")


def persona_problem(template: str) -> str | None:
    """Why `template` cannot be rendered (an unknown `{{name}}`), or None. Checked when
    the configuration loads, so a typo fails at start instead of at the first prompt."""
    for match in _VARIABLE.finditer(template):
        name = match.group(1)
        if name not in PERSONA_VARIABLES:
            known = ", ".join("{{" + v + "}}" for v in PERSONA_VARIABLES)
            return f"unknown variable {{{{{name}}}}} (known: {known})"
    return None


def render_persona(template: str, *, model: str, cwd: str) -> str:
    """The persona with its variables filled in (the template is already checked)."""
    values = {"model": model, "cwd": cwd}
    return _VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def system_prompt(identity: str, persona: str, *guidance: str, model: str, cwd: str) -> str | None:
    """Identity, persona, then the offered tool families' guidance paragraphs (in
    native's order, `core/tools/families.py`), blank-line separated, empty sections left
    out as native leaves them; None when all are empty."""
    sections = [identity, render_persona(persona, model=model, cwd=cwd), *guidance]
    return "\n\n".join(s for s in sections if s) or None


# -- runtime context -------------------------------------------------------------------

RUNTIME_CONTEXT_HEADER = (
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
)

_FILE_POLICY = {
    "read-only": (
        "Current DSH file policy: read-only. Any available operation enforced by the DSH "
        "file sandbox cannot modify files in the standing mode. Do not refuse a required "
        "modification from this policy alone: try an available tool normally and follow any "
        "denial and escalation guidance it returns."
    ),
    "workspace-write": (
        "Current DSH file policy: workspace-write. Any available operation enforced by the "
        "DSH file sandbox may modify files under the session workspace: {root}. Some platform "
        "temporary areas may also be writable."
    ),
    "danger-full-access": (
        "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict "
        "file modifications by available operations."
    ),
}

_CWD = "Current working directory: {cwd}."

_APPROVAL_ASK = (
    "Approval policy: ask. Operations that require approval may ask through the configured "
    "answerers; without an available answerer, the request fails closed."
)
_APPROVAL_NEVER = (
    "Approval prompts are disabled in this session: actions that require approval are "
    "rejected automatically — do not request sandbox escalation (do not set "
    "`sandbox_permissions`)."
)


def runtime_context(sandbox: str, workspace: str, cwd: str | None = None) -> str:
    """The runtime-context text for a session's sandbox mode and workspace root, naming
    its working directory first when `cwd` is given (native 0.2.1-rc.2 does; 0.1.0-rc.8
    did not, a version fact).

    The approval sentence follows native's shipped pairing: `danger-full-access` never
    asks, the other modes ask the client. Paths are quoted as JSON (native's
    `JSON.stringify`, which leaves non-ASCII as is)."""
    policy = _FILE_POLICY[sandbox].format(root=json.dumps(workspace, ensure_ascii=False))
    approval = _APPROVAL_NEVER if sandbox == "danger-full-access" else _APPROVAL_ASK
    where = "" if cwd is None else f"{_CWD.format(cwd=json.dumps(cwd, ensure_ascii=False))}\n\n"
    return f"{RUNTIME_CONTEXT_HEADER}\n\n{where}{policy}\n\n{approval}"


# -- workspace instructions ------------------------------------------------------------


@dataclass(frozen=True)
class InstructionSettings:
    """Where instructions are looked for and how much of them the model may get."""

    max_bytes: int = 65536
    """Budget of the whole rendered message, in UTF-8 bytes; 0 turns loading off."""
    max_source_bytes: int = 1_048_576
    """A larger instruction file is ignored."""
    files: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md")
    local_files: tuple[str, ...] = ("AGENTS.local.md", "CLAUDE.local.md")
    root_markers: tuple[str, ...] = (".git",)


@dataclass(frozen=True)
class Instruction:
    """One loaded instruction file: the path the model is shown and its text."""

    display: str
    content: str
    directory: str
    """The directory it came from, for per-directory duplicate suppression."""


_OPEN, _CLOSE = "<system-reminder>", "</system-reminder>"
_ESCAPED_CLOSE = "<\\/system-reminder>"
_INTRO = (
    "The following workspace instructions may be relevant to your work. Use them as "
    "guidance when applicable. More specific instructions take precedence over broader "
    "ones. They do not override system, developer, or direct user instructions."
)
_COMPACT_INTRO = (
    "Workspace instructions were omitted or truncated to fit the configured byte budget."
)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` within `max_bytes` UTF-8 bytes (whole characters)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[: max(0, max_bytes)].decode("utf-8", errors="ignore")


def _section(item: Instruction) -> str:
    return f"Instructions from: {item.display}\n\n{item.content}"


def _marker(
    max_bytes: int, omitted: Sequence[Instruction], cut: tuple[str, int, int] | None
) -> str:
    """The budget notice: which files were left out or cut, or "" when none."""
    parts = []
    if omitted:
        parts.append("omitted " + ", ".join(i.display for i in omitted))
    if cut is not None:
        display, original, included = cut
        parts.append(f"truncated {display} from {original} to {included} bytes")
    return f"Workspace instruction budget {max_bytes} bytes: {'; '.join(parts)}" if parts else ""


def _frame(
    items: Sequence[Instruction],
    max_bytes: int,
    omitted: Sequence[Instruction],
    cut: tuple[str, int, int] | None,
    intro: str,
) -> str:
    blocks = [_marker(max_bytes, omitted, cut), intro, *(_section(i) for i in items)]
    body = "\n\n".join(b for b in blocks if b)
    return f"{_OPEN}\n{_escape(body)}\n{_CLOSE}"


def _escape(text: str) -> str:
    """A file must not be able to close the frame early."""
    return text.replace(_CLOSE, _ESCAPED_CLOSE)


def render_instructions(items: Sequence[Instruction], max_bytes: int) -> str:
    """The workspace-instructions message for `items` (broadest first), within
    `max_bytes`; "" when there is nothing to say or loading is off.

    Over budget, the broadest files go first (most specific instructions win), then the
    most specific one is cut to fit, and if even its heading does not fit, only the
    budget notice remains."""
    if not items or max_bytes <= 0:
        return ""
    full = _frame(items, max_bytes, [], None, _INTRO)
    if _size(full) <= max_bytes:
        return full
    for start in range(1, len(items)):
        text = _frame(items[start:], max_bytes, items[:start], None, _INTRO)
        if _size(text) <= max_bytes:
            return text
    last, omitted = items[-1], items[:-1]
    original = _size(last.content)
    for intro in (_INTRO, _COMPACT_INTRO):
        best = _fit(last, omitted, max_bytes, intro)
        if best is not None:
            return best
    notice = _escape(_marker(max_bytes, omitted, (last.display, original, 0)))
    heading = _escape(f"{notice}\n\n{_section(Instruction(last.display, '', last.directory))}")
    if _size(heading) <= max_bytes:
        return heading
    return notice if _size(notice) <= max_bytes else _cut(notice, max_bytes)


def _fit(
    last: Instruction, omitted: Sequence[Instruction], max_bytes: int, intro: str
) -> str | None:
    """The frame with `last` cut to the most bytes that fit (binary search), or None
    when not even an empty cut fits."""
    original = _size(last.content)

    def attempt(keep: int) -> str:
        content = _cut(last.content, keep)
        cut = (last.display, original, _size(content))
        return _frame(
            [Instruction(last.display, content, last.directory)], max_bytes, omitted, cut, intro
        )

    low, high, best = 0, original, None
    while low <= high:
        mid = (low + high) // 2
        text = attempt(mid)
        if _size(text) <= max_bytes:
            best, low = text, mid + 1
        else:
            high = mid - 1
    return best


def dedupe(items: Iterable[Instruction]) -> list[Instruction]:
    """Drop a file whose trimmed text repeats an earlier file of the same directory (a
    `CLAUDE.md` symlinked to `AGENTS.md` is said once)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for item in items:
        key = (item.directory, item.content.strip())
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def project_root(cwd: Path, markers: Sequence[str]) -> Path:
    """The nearest directory at or above `cwd` holding a marker, else `cwd` itself."""
    for directory in (cwd, *cwd.parents):
        if any(os.path.lexists(directory / m) for m in markers):
            return directory
    return cwd


def _home_display(home: Path) -> str:
    user = Path.home()
    try:
        return "~/" + str(home.relative_to(user)) if home != user else "~"
    except ValueError:
        return str(home)


def _read(path: Path, max_source_bytes: int) -> str | None:
    """A regular file's text (symlinks followed), or None when absent or too large."""
    try:
        if not path.is_file() or path.stat().st_size > max_source_bytes:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > max_source_bytes:  # grew between stat and read
        return None
    return data.decode("utf-8", errors="replace")


def discover_instructions(
    cwd: Path, home: Path | None, settings: InstructionSettings
) -> list[Instruction]:
    """The instruction files the model gets, broadest first (reads the file system):
    the user-global `<home>/AGENTS.md` (when there is a home), then for each directory
    from the project root down to `cwd` its `files` and then its `local_files`; display
    paths are relative to the project root."""
    if settings.max_bytes <= 0:
        return []
    found: list[Instruction] = []
    text = None if home is None else _read(home / "AGENTS.md", settings.max_source_bytes)
    if home is not None and text is not None:
        found.append(Instruction(f"{_home_display(home)}/AGENTS.md", text, "<home>"))
    cwd = Path(os.path.abspath(cwd))
    root = project_root(cwd, settings.root_markers)
    chain = [cwd, *cwd.parents]
    directories = list(reversed(chain[: chain.index(root) + 1]))
    for directory in directories:
        for name in (*settings.files, *settings.local_files):
            path = directory / name
            text = _read(path, settings.max_source_bytes)
            if text is not None:
                found.append(Instruction(os.path.relpath(path, root), text, str(directory)))
    return dedupe(found)


# -- per session -----------------------------------------------------------------------


@dataclass(frozen=True)
class ModelContext:
    """What one session adds to the conversation for the model (see the module doc)."""

    identity: str = ""
    persona: str = ""
    cwd: str = ""
    runtime: str | None = None
    """The runtime-context text; None leaves it out."""
    instructions: Callable[[], str] | None = None
    """Renders the workspace instructions ("" for none); called at the session's first
    turn, so a file written before the first prompt counts, as in native."""
    guidance: tuple[str, ...] = ()  # the offered built-in tool families' paragraphs
    servers: tuple[str, ...] = ()  # the session's MCP server sections (none in a child)

    def system(self, model: str) -> str | None:
        """The system prompt for a request to `model` (the persona may name it)."""
        sections = (*self.guidance, *self.servers)  # the servers after every family
        return system_prompt(self.identity, self.persona, *sections, model=model, cwd=self.cwd)


def context_due(
    events: Sequence[Mapping[str, Any]], context: ModelContext
) -> list[tuple[ContextSource, str]]:
    """The context messages to commit after this turn's prompt (pure, given the log):
    the workspace instructions once per session, the runtime context whenever its text
    differs from the last one the log holds."""
    held: dict[str, str | None] = {}
    for event in events:
        source = event.get("source") if event.get("type") == "user/message" else None
        if source in ("workspace-instructions", "runtime-context"):
            blocks = event.get("content") or [{}]
            held[str(source)] = str(blocks[0].get("text", ""))
    due: list[tuple[ContextSource, str]] = []
    if context.instructions is not None and "workspace-instructions" not in held:
        text = context.instructions()
        if text:
            due.append(("workspace-instructions", text))
    if context.runtime is not None and held.get("runtime-context") != context.runtime:
        due.append(("runtime-context", context.runtime))
    return due


@dataclass(frozen=True)
class ContextSettings:
    """The process-wide settings a session's `ModelContext` is made from."""

    identity: str = DEFAULT_IDENTITY
    persona: str = DEFAULT_PERSONA
    runtime_context: bool = True
    instructions: InstructionSettings = InstructionSettings()
    home: Path | None = None
    """Where the user-global `AGENTS.md` lives (acp-plus's home)."""
    guidance: tuple[str, ...] = ()  # the offered built-in tool families' paragraphs

    def for_session(self, cwd: str, sandbox: str) -> ModelContext:
        """The model context of one session in `cwd` under `sandbox`."""
        settings, home = self.instructions, self.home

        def instructions() -> str:
            found = discover_instructions(Path(cwd), home, settings)
            return render_instructions(found, settings.max_bytes)

        return ModelContext(
            identity=self.identity,
            persona=self.persona,
            cwd=cwd,
            runtime=runtime_context(sandbox, cwd, cwd) if self.runtime_context else None,
            instructions=instructions if settings.max_bytes > 0 else None,
            guidance=self.guidance,
        )

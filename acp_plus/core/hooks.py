"""Claude Code and Codex command hooks as native 0.1.0-rc.8 runs them: the decisions.

rc.8's ACP composition mounts two hook bridges around every tool call: Claude Code's
(`hooks.json`) and Codex's (`codex-hooks.json`), each read once from the launch
directory. 0.2.1-rc.2's `acp` profile mounts neither, so acp-plus runs hooks only when
its config says `hooks = true` (docs/acp-plus.md, "Hooks"). This module is the pure
part: parsing a hooks file, matching a tool name, decoding what a hook process said
(exit code, stdout, stderr), folding several hooks into one decision (deny > ask >
allow), and the JSON a hook reads on stdin. Running the processes is
`core/hook_runner.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from acp_plus.core.js_json import js_json, js_parse, js_trim

Dialect = Literal["claude-code", "codex"]
CLAUDE: Dialect = "claude-code"
CODEX: Dialect = "codex"
FILES: Mapping[Dialect, str] = {CLAUDE: "hooks.json", CODEX: "codex-hooks.json"}
"""Each bridge's file, relative to the launch directory (rc.8's `configPath`s)."""

PRE = "PreToolUse"
POST = "PostToolUse"
EVENTS: Mapping[Dialect, tuple[str, ...]] = {
    CLAUDE: (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SubagentStart",
        "SubagentStop",
    ),
    CODEX: ("PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop"),
}
"""The events each bridge reads from its file; acp-plus runs all but the subagent ones
(the turn events are `core/hook_events.py`)."""
UNMATCHED_EVENTS = ("UserPromptSubmit", "Stop")  # no matcher subject: a matcher is dropped

DEFAULT_TIMEOUT_S = 600.0
"""A hook without `timeout` gets 10 minutes (Claude Code's and Codex's default)."""
MAX_TIMEOUT_S = 600.0
"""rc.8 runs hooks through its bash executor, which caps any timeout at 10 minutes."""
BLOCKING_EXIT = 2
ENV_OVERRIDES: Mapping[str, str] = {
    "NO_COLOR": "1",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
}
"""What rc.8's bash executor sets for every command it runs, hooks included."""
PRE_DENIED = "blocked by PreToolUse hook"
POST_BLOCKED = "blocked by PostToolUse hook"
ASKED = "PreToolUse hook asks for approval"
"""acp-plus's `approval/asked` reason when the asking hook gave none (never on the wire)."""

_CLAUDE_LITERAL = re.compile(r"[A-Za-z0-9_|]+")


@dataclass(frozen=True)
class Command:
    """One configured command hook."""

    command: str
    timeout: float | None = None
    """Seconds, as the file says; None for the default."""

    def seconds(self) -> float:
        """How long the hook may run before it is killed (a non-blocking failure)."""
        wanted = DEFAULT_TIMEOUT_S if self.timeout is None else self.timeout
        return min(max(wanted, 0.001), MAX_TIMEOUT_S)


@dataclass(frozen=True)
class Group:
    """A matcher (None, "" or "*" match every tool) and the hooks it selects."""

    matcher: str | None
    hooks: tuple[Command, ...]


@dataclass(frozen=True)
class HookFile:
    """One bridge's parsed file: event -> its matcher groups (command hooks only)."""

    dialect: Dialect
    points: Mapping[str, tuple[Group, ...]]
    skipped: tuple[str, ...] = ()
    """Why hooks were left out (non-command types, async Codex hooks), for a warning."""


class HookFileError(ValueError):
    """The file is unusable as a whole (rc.8 then registers no hook of that bridge)."""


def _obj(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def parse_file(raw: Any, dialect: Dialect, project_dir: str | None = None) -> HookFile:
    """A hooks file's JSON (`{"hooks": {...}}` or the bare event map) as rc.8 reads it:
    malformed entries are ignored, non-command hooks skipped, an invalid regex matcher
    refuses the whole file. Claude Code's commands get `${CLAUDE_PROJECT_DIR}` replaced
    when `project_dir` is given (rc.8 gives it only from its config, which acp-plus has
    not: the token stays, and the hook's environment carries the variable)."""
    root = _obj(raw)
    events = (_obj(root.get("hooks")) or root) if root is not None else None
    points: dict[str, tuple[Group, ...]] = {}
    skipped: list[str] = []
    for event in EVENTS[dialect] if events is not None else ():
        assert events is not None
        raw_groups = events.get(event)
        if not isinstance(raw_groups, list):
            continue
        groups: list[Group] = []
        for raw_group in raw_groups:
            group = _obj(raw_group)
            if group is None or not isinstance(group.get("hooks"), list):
                continue
            commands = [c for h in group["hooks"] if (c := _command(h, dialect, event, skipped))]
            if project_dir is not None and dialect == CLAUDE:
                commands = [
                    Command(c.command.replace("${CLAUDE_PROJECT_DIR}", project_dir), c.timeout)
                    for c in commands
                ]
            if not commands:
                continue
            matcher = group.get("matcher")
            matcher = (
                matcher if isinstance(matcher, str) and event not in UNMATCHED_EVENTS else None
            )
            problem = matcher_problem(matcher, dialect)
            if problem is not None:
                raise HookFileError(f"{problem} on event {js_json(event)}")
            groups.append(Group(matcher, tuple(commands)))
        if groups:
            points[event] = tuple(groups)
    return HookFile(dialect, points, tuple(skipped))


def _command(raw: Any, dialect: Dialect, event: str, skipped: list[str]) -> Command | None:
    hook = _obj(raw)
    if hook is None:
        return None
    kind = hook.get("type") if isinstance(hook.get("type"), str) else "command"
    if kind != "command":
        skipped.append(f'unsupported "{kind}" hook on {event}')
        return None
    if dialect == CODEX and hook.get("async") is True:
        skipped.append(f"async hook on {event}")
        return None
    if not isinstance(hook.get("command"), str):
        return None
    timeout = _number(hook.get("timeout"))
    if timeout is None and dialect == CODEX:
        timeout = _number(hook.get("timeoutSec"))  # Codex's alias
    return Command(hook["command"], timeout)


def _match_all(matcher: str | None) -> bool:
    return matcher is None or matcher in ("", "*")


def _regex(pattern: str) -> re.Pattern[str] | None:
    # JavaScript's RegExp and Python's `re` agree on the patterns hooks use (names,
    # alternations, `.*`, classes); a pattern Python refuses is an invalid matcher.
    try:
        return re.compile(pattern)
    except re.error:
        return None


def matcher_problem(matcher: str | None, dialect: Dialect) -> str | None:
    """Why a matcher is unusable, or None."""
    if _match_all(matcher):
        return None
    assert matcher is not None
    if dialect == CLAUDE and _CLAUDE_LITERAL.fullmatch(matcher):
        return None
    if _regex(matcher) is None:
        return f"invalid {dialect} regex matcher {js_json(matcher)}"
    return None


def matches(matcher: str | None, query: str, dialect: Dialect) -> bool:
    """Claude Code reads a pattern of letters, digits, `_` and `|` as exact names
    (`Write|Edit`), anything else as an unanchored regex; Codex always as a regex."""
    if _match_all(matcher):
        return True
    assert matcher is not None
    if dialect == CLAUDE and _CLAUDE_LITERAL.fullmatch(matcher):
        return query in matcher.split("|")
    pattern = _regex(matcher)
    return pattern is not None and pattern.search(query) is not None


@dataclass(frozen=True)
class Output:
    """What one hook said, decoded as rc.8 decodes it."""

    exit_code: int | None
    """None when the hook could not run, was killed (timeout, signal) or cancelled."""
    stderr: str = ""
    stdout: str = ""
    decision: str | None = None
    """approve / allow / block / deny / ask, or None (the exit code governs)."""
    reason: str | None = None
    additional_context: str | None = None


def decode(exit_code: int | None, stdout: str, stderr: str, event: str) -> Output:
    """Exit 2 blocks with the trimmed stderr as the reason; exit 0 may print a JSON
    object (top-level `decision` approve/block + `reason`, and `hookSpecificOutput`
    for this `event`: `permissionDecision` allow/deny/ask, its reason, context); any
    other exit, a timeout or a crash is a non-blocking error: no decision."""
    err, out = js_trim(stderr), js_trim(stdout)
    decision: str | None = None
    reason: str | None = None
    context: str | None = None
    if exit_code == BLOCKING_EXIT:
        decision = "block"
        reason = err or None
    if exit_code == 0 and out.startswith("{"):
        try:
            parsed = _obj(js_parse(out))
        except ValueError:
            parsed = None  # malformed JSON on a clean exit: plain stdout, no decision
        if parsed is not None:
            top = parsed.get("decision")
            if top in ("approve", "block"):
                decision = top
            if isinstance(parsed.get("reason"), str):
                reason = parsed["reason"]
            specific = _obj(parsed.get("hookSpecificOutput"))
            if specific is not None and specific.get("hookEventName") == event:
                permission = specific.get("permissionDecision")
                if permission in ("allow", "deny", "ask"):
                    decision = permission
                if isinstance(specific.get("permissionDecisionReason"), str):
                    reason = specific["permissionDecisionReason"]
                if isinstance(specific.get("additionalContext"), str):
                    context = specific["additionalContext"]
    return Output(exit_code, err, out, decision, reason, context)


_RANK = {"deny": 3, "block": 3, "ask": 2, "allow": 1, "approve": 1}
_MERGED = {3: "deny", 2: "ask", 1: "allow", 0: "none"}


@dataclass(frozen=True)
class Merged:
    """Every matched hook of one event folded: the strictest decision, the reasons of
    the hooks that decided it (joined by a blank line), every context in hook order."""

    decision: Literal["deny", "ask", "allow", "none"] = "none"
    reason: str | None = None
    contexts: tuple[str, ...] = field(default_factory=tuple)


def merge(outputs: Iterable[Output]) -> Merged:
    """deny (or block) > ask > allow (or approve) > none."""
    top = 0
    reasons: dict[int, list[str]] = {}
    contexts: list[str] = []
    for output in outputs:
        rank = _RANK.get(output.decision or "", 0)
        top = max(top, rank)
        if rank >= 2 and output.reason:
            reasons.setdefault(rank, []).append(output.reason)
        if output.additional_context:
            contexts.append(output.additional_context)
    joined = "\n\n".join(reasons.get(top, [])) or None
    return Merged(_MERGED[top], joined, tuple(contexts))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Call:
    """The facts of one tool call a hook's stdin carries."""

    session_id: str
    transcript_path: str
    cwd: str
    turn: int
    call_id: str
    name: str
    arguments: Any


def stdin_text(dialect: Dialect, event: str, call: Call, response: str | None = None) -> str:
    """The JSON a hook reads: Claude Code's shape with a final newline, Codex's (model,
    permission mode, turn id, the call's `command` as its input) without one."""
    payload: dict[str, Any] = {
        "session_id": call.session_id,
        "transcript_path": call.transcript_path,
        "cwd": call.cwd,
        "hook_event_name": event,
    }
    if dialect == CLAUDE:
        payload |= {"tool_name": call.name, "tool_input": call.arguments}
    else:
        args = call.arguments
        command = args.get("command") if isinstance(args, dict) else None
        payload |= {"model": "", "permission_mode": "default", "turn_id": str(call.turn)}
        command = command if isinstance(command, str) else ""  # Codex's shell input shape
        payload |= {"tool_name": call.name, "tool_input": {"command": command}}
    payload["tool_use_id"] = call.call_id
    if response is not None:
        payload["tool_response"] = response
    return js_json(payload) + ("\n" if dialect == CLAUDE else "")


def hook_env(dialect: Dialect, cwd: str) -> dict[str, str]:
    """What a hook's environment adds to the tool environment (credentials removed)."""
    extra = dict(ENV_OVERRIDES)
    if dialect == CLAUDE:
        extra["CLAUDE_PROJECT_DIR"] = cwd  # Claude Code always exports it
    return extra


def selected(file: HookFile, event: str, name: str) -> list[tuple[str | None, Command]]:
    """The hooks of `event` whose matcher selects the tool `name`, in file order."""
    return [
        (group.matcher, command)
        for group in file.points.get(event, ())
        if matches(group.matcher, name, file.dialect)
        for command in group.hooks
    ]


def response_text(content: Sequence[Mapping[str, Any]]) -> str:
    """A result's text blocks joined, as `tool_response` carries it."""
    return "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


def pre_decision(merged: Merged, dialect: Dialect) -> tuple[str, str | None] | None:
    """A PreToolUse outcome for the call: ("deny", reason), ("ask", reason or None), or
    None to go on. Codex's bridge honours only a block."""
    if merged.decision == "deny":
        return "deny", merged.reason or PRE_DENIED
    if merged.decision == "ask" and dialect == CLAUDE:
        return "ask", merged.reason
    return None


def post_block(merged: Merged) -> str | None:
    """A PostToolUse block's text (the result becomes it, failed), or None."""
    return (merged.reason or POST_BLOCKED) if merged.decision == "deny" else None


__all__ = [
    "ASKED",
    "CLAUDE",
    "CODEX",
    "FILES",
    "POST",
    "PRE",
    "Call",
    "Command",
    "Dialect",
    "Group",
    "HookFile",
    "HookFileError",
    "Merged",
    "Output",
    "decode",
    "hook_env",
    "matcher_problem",
    "matches",
    "merge",
    "parse_file",
    "post_block",
    "pre_decision",
    "response_text",
    "selected",
    "stdin_text",
]

"""Cross-checks of a scenario file that its JSON Schema cannot express.

Session names used before they are defined, tool calls naming undeclared tools, `llm`
entries whose keys contradict each other, paths escaping the workdir, and more (see
docs/scenarios.md, "Validation"). Each check reads the data defensively: the schema
may already have found the shape wrong, and both kinds of finding are reported at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from yaml.nodes import Node

from parity.scenario_errors import (
    RULE_REASON_HINT,
    KeyPath,
    ScenarioError,
    Severity,
    did_you_mean,
)
from parity.selectors import parse_selector
from parity.yaml_positions import finding_at, key_text, locate

_SESSION_PLACEHOLDER = re.compile(r"\{session:([^}]*)\}")
_SESSION_PARAM_KINDS = frozenset(
    {"prompt", "load_session", "resume_session", "close_session", "set_config_option"}
    | {"set_mode", "cancel"}
)


@dataclass
class _Sink:
    """Collects cross-check findings, positioning each by its key path."""

    root: Node
    file: str
    found: list[ScenarioError] = field(default_factory=list)

    def add(
        self, path: KeyPath, message: str, hint: str = "", severity: Severity = "error"
    ) -> None:
        self.found.append(
            finding_at(self.file, locate(self.root, path), key_text(path), message, hint, severity)
        )

    def line(self, path: KeyPath) -> int:
        return locate(self.root, path).start_mark.line + 1


def cross_findings(
    data: Any,
    root: Node,
    file: str,
    known_targets: Collection[str] | None,
    default_targets: Sequence[str],
) -> list[ScenarioError]:
    """Every cross-check finding for a file's `data` (node tree `root`). With
    `known_targets`, every target named must be one of them; `default_targets` are the
    targets of a scenario that names none."""
    if not isinstance(data, dict):
        return []  # the schema reports a document that is not a mapping
    sink = _Sink(root, file)
    if known_targets is not None:
        _check_targets(data, sorted(known_targets), sink)
    _check_rules(data, default_targets, sink)
    _check_expect_problems(data, default_targets, sink)
    _check_tools(data, sink)
    _check_llm(data, sink)
    _check_files(data, sink)
    _check_steps(data, sink)
    return sink.found


def _items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """(index, mapping) for each mapping in a list; anything else yields nothing."""
    return (
        [(i, v) for i, v in enumerate(value) if isinstance(v, dict)]
        if isinstance(value, list)
        else []
    )


def _targets(data: dict[str, Any], default: Sequence[str]) -> list[str]:
    targets = data.get("targets", list(default))
    return [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []


def _selector_problem(selector: str) -> str | None:
    """Why `selector` does not parse, per the grammar in `parity.selectors`; None if it does."""
    try:
        parse_selector(selector)
    except ValueError as exc:
        return str(exc)
    return None


def _check_targets(data: dict[str, Any], known: list[str], sink: _Sink) -> None:
    targets = data.get("targets")
    for i, target in enumerate(targets if isinstance(targets, list) else []):
        if isinstance(target, str) and target not in known:
            hint = did_you_mean(target, known) or f"known targets: {', '.join(known)}"
            sink.add(("targets", i), f"unknown target {target!r}", hint)


def _check_rules(data: dict[str, Any], default_targets: Sequence[str], sink: _Sink) -> None:
    targets = _targets(data, default_targets)
    for section in ("diverge", "masks"):
        for i, rule in _items(data.get(section)):
            selector = rule.get("path")
            problem = (
                _selector_problem(selector) if isinstance(selector, str) and selector else None
            )
            if problem:
                hint = "see docs/scenarios.md, `masks` and `diverge`"
                sink.add((section, i, "path"), problem, hint)
            reason = rule.get("reason")
            if isinstance(reason, str) and reason and not reason.strip():
                sink.add((section, i, "reason"), "reason is blank", RULE_REASON_HINT)
            named = rule.get("targets")
            for j, target in enumerate(named if isinstance(named, list) else []):
                if isinstance(target, str) and target not in targets:
                    listed = ", ".join(targets)
                    hint = did_you_mean(target, targets) or f"this scenario runs {listed}"
                    sink.add(
                        (section, i, "targets", j),
                        f"target {target!r} is not in this scenario's targets",
                        hint,
                    )


def _check_expect_problems(
    data: dict[str, Any], default_targets: Sequence[str], sink: _Sink
) -> None:
    targets = _targets(data, default_targets)
    seen: dict[tuple[Any, ...], int] = {}
    for i, entry in _items(data.get("expect_problems")):
        reason = entry.get("reason")
        if isinstance(reason, str) and reason and not reason.strip():
            sink.add(
                ("expect_problems", i, "reason"),
                "reason is blank",
                "every expected problem says which fact of the target causes it",
            )
        named = entry.get("targets")
        for j, target in enumerate(named if isinstance(named, list) else []):
            if isinstance(target, str) and target not in targets:
                listed = ", ".join(targets)
                hint = did_you_mean(target, targets) or f"this scenario runs {listed}"
                sink.add(
                    ("expect_problems", i, "targets", j),
                    f"target {target!r} is not in this scenario's targets",
                    hint,
                )
        names = named if isinstance(named, list) else []
        key = (
            entry.get("kind"),
            entry.get("match"),
            tuple(names) if all(isinstance(t, str) for t in names) else None,
        )
        # Only well-formed entries take part; a malformed one is reported elsewhere and
        # may hold lists or mappings, which cannot be compared as keys.
        if not all(isinstance(k, str | tuple | type(None)) for k in key):
            continue
        if key in seen:
            sink.add(
                ("expect_problems", i),
                f"the same problem is already expected at line {seen[key]}",
                "the first entry claims every problem it matches, so this one would be stale",
            )
        elif isinstance(key[0], str):
            seen[key] = sink.line(("expect_problems", i))


def _check_tools(data: dict[str, Any], sink: _Sink) -> None:
    first: dict[str, int] = {}
    for i, tool in _items(data.get("tools")):
        name = tool.get("name")
        if isinstance(name, str):
            if name in first:
                sink.add(
                    ("tools", i, "name"),
                    f"duplicate tool name {name!r}",
                    f"first declared at tools[{first[name]}]",
                )
            first.setdefault(name, i)
        if "result" in tool and "content" in tool:
            sink.add(
                ("tools", i, "content"),
                "give `result` or `content`, not both",
                "`result: x` is short for one text block",
            )
        if tool.get("hang") is True and ("result" in tool or "content" in tool):
            sink.add(
                ("tools", i, "hang"),
                "a hanging tool never answers, so its result is never used",
                "drop `hang` or the result",
            )


def _check_llm(data: dict[str, Any], sink: _Sink) -> None:
    # Only string names: a malformed name is the schema's finding, never a crash here.
    declared = {t["name"] for _, t in _items(data.get("tools")) if isinstance(t.get("name"), str)}
    call_ids: dict[str, int] = {}
    for i, entry in _items(data.get("llm")):
        here: KeyPath = ("llm", i)
        if "chunks" in entry:
            mixed = [
                k
                for k in ("reasoning", "text", "tool_calls", "usage", "finish", "deltas", "error")
                if k in entry
            ]
            if mixed:
                sink.add(
                    (*here, "chunks"),
                    f"`chunks` cannot be combined with {', '.join(mixed)}",
                    "chunks are sent exactly as written; put everything into them or drop them",
                )
        error = entry.get("error")
        if isinstance(error, dict):
            if entry.get("then") == "hang":
                sink.add(
                    (*here, "then"), "an entry cannot both fail and hang", "drop `then` or `error`"
                )
            if "finish" in entry:
                sink.add(
                    (*here, "finish"), "an `error` entry ends with finish{error}", "drop `finish`"
                )
            if "status" in error:
                unsent = [
                    k
                    for k in ("reasoning", "text", "tool_calls", "usage", "deltas", "chunks")
                    if k in entry
                ]
                if unsent:
                    sink.add(
                        (*here, "error", "status"),
                        f"with `status` the request fails before any chunk: "
                        f"{', '.join(unsent)} never sent",
                        "drop `status` for a failure in the middle of the stream",
                    )
            elif "tool_calls" in entry:
                sink.add(
                    (*here, "tool_calls"),
                    "a mid-stream `error` streams only text and reasoning",
                    "drop `tool_calls`",
                )
        if entry.get("then") == "hang" and "chunks" not in entry:
            for key in ("usage", "finish"):
                if key in entry:
                    sink.add(
                        (*here, key), f"a hanging entry never sends its {key}", f"drop `{key}`"
                    )
        for j, call in _items(entry.get("tool_calls")):
            _check_tool_call(call, (*here, "tool_calls", j), declared, call_ids, sink)


def _check_tool_call(
    call: dict[str, Any], here: KeyPath, declared: set[Any], call_ids: dict[str, int], sink: _Sink
) -> None:
    call_id, name, arguments = call.get("id"), call.get("name"), call.get("arguments")
    if isinstance(call_id, str):
        if call_id in call_ids:
            sink.add(
                (*here, "id"),
                f"tool call id {call_id!r} is already used at line {call_ids[call_id]}",
                "agents and the parity diff link a call's updates by its id",
                "warning",
            )
        call_ids.setdefault(call_id, sink.line((*here, "id")))
    builtin = call.get("builtin") is True
    if isinstance(name, str) and builtin and name in declared:
        sink.add(
            (*here, "builtin"),
            f"{name!r} is a fixture tool declared in `tools`",
            "drop `builtin: true`, or rename the fixture tool",
        )
    elif isinstance(name, str) and not builtin and name not in declared:
        sink.add(
            (*here, "name"),
            f"tool {name!r} is not declared in `tools`",
            "for a target's own tool, say `builtin: true`; declare fixture tools under `tools`",
            "warning",
        )
    if isinstance(arguments, str):
        try:
            json.loads(arguments)
        except ValueError:
            sink.add(
                (*here, "arguments"),
                "arguments is not valid JSON",
                "it is sent verbatim",
                "warning",
            )


def _check_files(data: dict[str, Any], sink: _Sink) -> None:
    files = data.get("files")
    for rel in files if isinstance(files, dict) else {}:
        if not isinstance(rel, str):
            continue
        parts = PurePosixPath(rel).parts
        if (
            not rel
            or rel.startswith("/")
            or "\\" in rel
            or ".." in parts
            or re.match(r"[A-Za-z]:", rel)
        ):
            sink.add(
                ("files", rel),
                f"{rel!r} must be a relative path inside the workdir",
                "use forward slashes, no `..`",
            )


@dataclass
class _StepState:
    defined: dict[str, KeyPath] = field(default_factory=dict)
    everywhere: dict[str, KeyPath] = field(default_factory=dict)
    """Every `as:` in the file, to say "defined later" instead of "never defined"."""
    prompts: dict[str, KeyPath] = field(default_factory=dict)
    listed: bool = False
    script_entries: int | None = 0
    """Consumable llm entries; None when side entries make the count open-ended."""
    response_timeout: float = 15.0
    """Seconds a request step waits for its response (`timeouts.response`)."""


def _check_steps(data: dict[str, Any], sink: _Sink) -> None:
    llm = [e for _, e in _items(data.get("llm"))]
    state = _StepState(script_entries=None if any("match" in e for e in llm) else len(llm))
    timeouts = data.get("timeouts")
    response = timeouts.get("response") if isinstance(timeouts, dict) else None
    if isinstance(response, int | float) and not isinstance(response, bool) and response > 0:
        state.response_timeout = float(response)
    for path, kind, params in _walk_steps(data.get("steps"), ("steps",)):
        if kind == "new_session" and isinstance(params, dict) and isinstance(params.get("as"), str):
            state.everywhere.setdefault(params["as"], (*path, kind, "as"))
    _check_step_list(data.get("steps"), ("steps",), state, frozenset(), sink)


def _walk_steps(steps: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str, Any]]:
    for i, step in _items(steps):
        for kind, params in step.items():
            yield (*path, i), kind, params
            if kind == "parallel":
                yield from _walk_steps(params, (*path, i, kind))


def _check_step_list(
    steps: Any, path: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    for i, step in _items(steps):
        _check_step_at(step, (*path, i), state, block, sink)


def _check_step_at(
    step: dict[str, Any], path: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    """One step; `block` holds the names defined inside the enclosing parallel blocks."""
    if len(step) != 1:
        return  # the schema reports it
    ((kind, params),) = step.items()
    if kind == "parallel":
        _check_parallel(params, (*path, kind), state, block, sink)
    else:
        _check_one_step(kind, params, (*path, kind), state, block, sink)


def _check_parallel(
    params: Any, here: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    branches = _items(params)
    inner = {
        p["as"]
        for _, s in branches
        for k, p in s.items()
        if k == "new_session" and isinstance(p, dict) and isinstance(p.get("as"), str)
    }
    before = dict(state.defined)
    added: dict[str, KeyPath] = {}
    for j, step in branches:
        if "restart" in step:
            sink.add((*here, j, "restart"), "`restart` cannot run in parallel with other steps")
        state.defined = dict(before)  # a branch sees only what was defined before the block
        _check_step_at(step, (*here, j), state, block | inner, sink)
        for name, where in state.defined.items():
            if name in before:
                continue
            if name in added:
                line = sink.line(added[name])
                sink.add(
                    where, f"session {name!r} is already defined at line {line}", "use another name"
                )
            added.setdefault(name, where)
    state.defined = before | added


def _check_one_step(
    kind: str, params: Any, here: KeyPath, state: _StepState, block: frozenset[str], sink: _Sink
) -> None:
    if kind in _SESSION_PARAM_KINDS and isinstance(params, dict):
        name = params.get("session")
        if isinstance(name, str):
            _use_session(name, (*here, "session"), state, block, sink)
    for path, text in _strings(params, here):
        for match in _SESSION_PLACEHOLDER.finditer(text):
            _use_session(match.group(1), path, state, block, sink, placeholder=True)
    if not isinstance(params, dict):
        return
    if kind == "new_session" and isinstance(params.get("as"), str):
        name = params["as"]
        if name in state.defined:
            line = sink.line(state.defined[name])
            sink.add(
                (*here, "as"),
                f"session {name!r} is already defined at line {line}",
                "use another name",
            )
        else:
            state.defined[name] = (*here, "as")
    elif kind == "prompt":
        _check_prompt(params, here, state, sink)
    elif kind == "list_sessions":
        if params.get("cursor") == "next" and not state.listed:
            sink.add(
                (*here, "cursor"),
                "`cursor: next` needs an earlier list_sessions step",
                "it sends the previous result's nextCursor",
            )
        state.listed = True


def _check_prompt(params: dict[str, Any], here: KeyPath, state: _StepState, sink: _Sink) -> None:
    if "text" in params and "content" in params:
        sink.add(
            (*here, "content"),
            "give `text` or `content`, not both",
            "`text: x` is short for one text block",
        )
    name = params.get("as")
    if isinstance(name, str):
        if name in state.prompts:
            line = sink.line(state.prompts[name])
            sink.add((*here, "as"), f"prompt name {name!r} is already used at line {line}")
        state.prompts.setdefault(name, (*here, "as"))
    cancel = params.get("cancel")
    after = cancel.get("after") if isinstance(cancel, dict) else None
    wanted = after.get("llm_request") if isinstance(after, dict) else None
    delay = after.get("ms") if isinstance(after, dict) else None
    late = isinstance(delay, int) and delay >= state.response_timeout * 1000
    if late and not isinstance(delay, bool):
        sink.add(
            (*here, "cancel", "after", "ms"),
            f"the prompt's response timeout ({state.response_timeout:g} s) ends the step first",
            "shorten the delay or raise `timeouts.response`",
        )
    entries = state.script_entries
    if isinstance(wanted, int) and entries is not None and wanted > entries:
        sink.add(
            (*here, "cancel", "after", "llm_request"),
            f"the llm script has only {entries} entr{'y' if entries == 1 else 'ies'}",
            "the trigger would never fire: an exhausted script fails the request instead",
            "warning",
        )


def _use_session(
    name: str,
    path: KeyPath,
    state: _StepState,
    block: frozenset[str],
    sink: _Sink,
    *,
    placeholder: bool = False,
) -> None:
    if name in state.defined:
        return
    what = f"session {name!r}" + (" (in a {session:...} placeholder)" if placeholder else "")
    if name in block:
        hint = "its steps run concurrently; define the session in a step before the parallel block"
        sink.add(path, f"{what} is defined inside the same parallel block", hint)
    elif name in state.everywhere:
        line = sink.line(state.everywhere[name])
        sink.add(
            path,
            f"{what} is used before `new_session: {{as: {name}}}` defines it",
            f"it is defined later, at line {line}",
        )
    else:
        hint = (
            did_you_mean(name, sorted(state.defined))
            or f"define it first with `- new_session: {{as: {name}}}`"
        )
        sink.add(path, f"{what} is never defined", hint)


def _strings(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    """Every string inside a step's parameters (where placeholders may appear)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))

"""Cross-checks of a scenario's `steps` list: session and prompt names, placeholders,
parallel blocks, cursors, and (through `parity.scenario.trigger_checks`) the triggers of
cancels and held answers (see docs/scenarios.md, "Validation").

Which step kinds name a session (`session: <name>`) is read from the JSON Schema, so a
new step kind needs no entry here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from parity.scenario.errors import KeyPath, did_you_mean
from parity.scenario.model import STEP_AFTER
from parity.scenario.schema_findings import schema
from parity.scenario.trigger_checks import (
    TriggerContext,
    check_client_triggers,
    check_trigger,
    trigger_context,
)
from parity.scenario.yaml_positions import Sink, mappings

_SESSION_PLACEHOLDER = re.compile(r"\{session:([^}]*)\}")
_SESSION_PARAM_KINDS = frozenset(
    kind
    for kind, spec in schema()["$defs"]["step"]["properties"].items()
    if isinstance(spec, dict)
    and spec.get("properties", {}).get("session") == {"$ref": "#/$defs/sessionName"}
)
"""Step kinds whose `session` parameter names a session defined earlier."""
_STEP_KEYS = frozenset(schema()["$defs"]["step"]["properties"])
"""Every key a step may hold: its kinds, and `after`."""


@dataclass
class _StepState:
    defined: dict[str, KeyPath] = field(default_factory=dict)
    everywhere: dict[str, KeyPath] = field(default_factory=dict)
    """Every `as:` in the file, to say "defined later" instead of "never defined"."""
    prompts: dict[str, KeyPath] = field(default_factory=dict)
    listed: bool = False
    triggers: TriggerContext = field(default_factory=TriggerContext)
    """What triggers may refer to (tools, prompt names, the script's length)."""
    response_timeout: float = 15.0
    """Seconds a request step waits for its response (`timeouts.response`)."""


def check_steps(data: dict[str, Any], sink: Sink) -> None:
    """Every finding about the `steps` list (and the names its steps define and use)."""
    state = _StepState(triggers=trigger_context(data))
    timeouts = data.get("timeouts")
    response = timeouts.get("response") if isinstance(timeouts, dict) else None
    if isinstance(response, int | float) and not isinstance(response, bool) and response > 0:
        state.response_timeout = float(response)
    check_client_triggers(data, state.triggers, sink)
    for path, kind, params in _walk_steps(data.get("steps"), ("steps",)):
        if kind == "new_session" and isinstance(params, dict) and isinstance(params.get("as"), str):
            state.everywhere.setdefault(params["as"], (*path, kind, "as"))
    _check_step_list(data.get("steps"), ("steps",), state, frozenset(), sink)


def _walk_steps(steps: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str, Any]]:
    for i, step in mappings(steps):
        for kind, params in step.items():
            yield (*path, i), kind, params
            if kind == "parallel":
                yield from _walk_steps(params, (*path, i, kind))


def _check_step_list(
    steps: Any, path: KeyPath, state: _StepState, block: frozenset[str], sink: Sink
) -> None:
    for i, step in mappings(steps):
        _check_step_at(step, (*path, i), state, block, sink)


def _check_step_at(
    step: dict[str, Any], path: KeyPath, state: _StepState, block: frozenset[str], sink: Sink
) -> None:
    """One step; `block` holds the names defined inside the enclosing parallel blocks."""
    kinds = [key for key in step if key != STEP_AFTER]
    if len(kinds) != 1:
        # The schema reports an empty step, an unknown key and more than two keys.
        if step and len(step) <= 2 and all(k in _STEP_KEYS for k in step):
            _one_kind(kinds, path, sink)
        return
    kind, params = kinds[0], step[kinds[0]]
    if STEP_AFTER in step:
        check_trigger(step[STEP_AFTER], (*path, STEP_AFTER), state.triggers, sink)
    if kind == "parallel":
        _check_parallel(params, (*path, kind), state, block, sink)
    else:
        _check_one_step(kind, params, (*path, kind), state, block, sink)


def _one_kind(kinds: list[str], path: KeyPath, sink: Sink) -> None:
    """A step of two kinds, or an `after` alone (the schema allows two keys for `after`)."""
    if not kinds:
        sink.add(
            (*path, STEP_AFTER),
            "`after` delays a step, but there is no step beside it",
            "write it beside the step it delays: `- prompt: {...}` then `after: {...}` under it",
        )
    else:
        sink.add(
            path,
            f"a step has exactly one key (its kind), got {len(kinds)}: {', '.join(kinds)}",
            "each step is `- <kind>: {params}`; indent the parameters under the kind",
        )


def _check_parallel(
    params: Any, here: KeyPath, state: _StepState, block: frozenset[str], sink: Sink
) -> None:
    branches = mappings(params)
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
    kind: str, params: Any, here: KeyPath, state: _StepState, block: frozenset[str], sink: Sink
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
    elif kind == "wait":
        _check_wait(params, here, state, block, sink)
    elif kind == "list_sessions":
        if params.get("cursor") == "next" and not state.listed:
            sink.add(
                (*here, "cursor"),
                "`cursor: next` needs an earlier list_sessions step",
                "it sends the previous result's nextCursor",
            )
        state.listed = True


def _check_wait(
    params: dict[str, Any], here: KeyPath, state: _StepState, block: frozenset[str], sink: Sink
) -> None:
    """A `wait` names its session like other steps (the schema's `anyOf` hides the key
    from `_SESSION_PARAM_KINDS`); one for updates without a session, in a file that has
    sessions, races an update the agent sends before its session/new answer."""
    name = params.get("session")
    if isinstance(name, str):
        _use_session(name, (*here, "session"), state, block, sink)
    elif "update" in params and "ms" not in params and state.everywhere:
        latest = next(reversed(state.defined), None) or next(iter(state.everywhere))
        sink.add(
            (*here, "update"),
            "without `session:` a wait counts only updates after the previous step's "
            "response, and misses one the agent sends before its session/new answer "
            "(as available_commands_update often is)",
            f"add `session: {latest}`: it counts {latest}'s updates from its session/new request",
            "warning",
        )


def _check_prompt(params: dict[str, Any], here: KeyPath, state: _StepState, sink: Sink) -> None:
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
    delay = after.get("ms") if isinstance(after, dict) else None
    late = isinstance(delay, int) and delay >= state.response_timeout * 1000
    if late and not isinstance(delay, bool):
        sink.add(
            (*here, "cancel", "after", "ms"),
            f"the prompt's response timeout ({state.response_timeout:g} s) ends the step first",
            "shorten the delay or raise `timeouts.response`",
        )
    if isinstance(after, dict):
        own = name if isinstance(name, str) else ""
        check_trigger(after, (*here, "cancel", "after"), state.triggers, sink, cancels=own)


def _use_session(
    name: str,
    path: KeyPath,
    state: _StepState,
    block: frozenset[str],
    sink: Sink,
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

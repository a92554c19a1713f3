"""The semantic profile: an exact view made comparable across unlike agents.

Text chunks of one message merge (also across interleaved usage or title updates), each
tool call folds into its final state, permission option ids become `<option:KIND>`, an
agent's own tool call ids are linked to the scripted ones (`link_tool_calls`), and
`_meta`, usage numbers, side model requests and how processes ended are dropped.
`parity.view.normalize.view` applies it after building the exact view; `parity.checks.diff`
uses `merge_chunks` to compare streamed text.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

from parity.core.exact import exact_key, json_equal
from parity.view.tokens import hashable

CHUNK_KINDS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})


def semantic(exact: dict[str, Any]) -> dict[str, Any]:
    """The semantic profile of an exact view (a new object; `masked` not yet added)."""
    out: dict[str, Any] = _drop_meta(exact)
    out["steps"] = [_semantic_step(s) for s in out.get("steps", [])]
    for key in ("before", "after"):
        if key in out:
            out[key] = _semantic_loose(out[key])
    out["model"] = [m for m in out.get("model", []) if not m.get("side")]
    # How a process ended is noise between unlike agents (and for some peers a race
    # between exiting on EOF and the harness's SIGTERM); what went wrong is not.
    if isinstance(out.get("process"), dict):
        out["process"].pop("exit", None)
    return out


_OWN_CALL_ID = re.compile(r"<toolcall:\d+>")


def link_tool_calls(view: dict[str, Any], scripted: list[str]) -> dict[str, Any]:
    """An agent's own tool call ids linked to the scripted ones (semantic profile).

    Most agents echo the id the model gave a call; some mint their own (its token is
    `<toolcall:N>`). In order of first appearance, the k-th such token becomes the k-th
    scripted id that appears nowhere in the view, so "call-1 completed" reads the same
    for every agent. Tokens beyond the scripted ids stay as they are."""
    found: list[str] = []
    present: set[str] = set()

    def scan(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                scan(v)
        elif isinstance(value, list):
            for v in value:
                scan(v)
        elif isinstance(value, str):
            present.add(value)
            if _OWN_CALL_ID.fullmatch(value) and value not in found:
                found.append(value)

    scan(view.get("steps", []))
    free = [s for s in scripted if s not in present]
    links = dict(zip(found, free, strict=False))
    if not links:
        return view

    def swap(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return links.get(value, value) if isinstance(value, str) else value

    return {**view, "steps": swap(view.get("steps", []))}


def _semantic_step(step: dict[str, Any]) -> dict[str, Any]:
    exact = step.get("updates", [])
    for request in step.get("agent_requests", []):
        if isinstance(request.get("after_updates"), int):
            # The same place, counted in semantic entries.
            request["after_updates"] = len(semantic_updates(exact[: request["after_updates"]]))
    for request in step.get("agent_requests", []):
        _link_permission_options(request)
    if "updates" in step:
        step["updates"] = semantic_updates(step["updates"])
        if not step["updates"]:
            del step["updates"]
    if isinstance(step.get("result"), dict):
        step["result"].pop("usage", None)
    if "late" in step:
        step["late"] = _semantic_loose(step["late"])
    return step


def _link_permission_options(request: dict[str, Any]) -> None:
    """A permission request's option ids (each agent's own: `approved`, `proceed_once`,
    `allow-once`, ...) become `<option:KIND>` after the option's standard ACP `kind`, in
    the options offered and in the client's answer, so "the client allowed once" reads
    the same for every agent. An id whose kind is unknown or shared stays as it is."""
    params = request.get("params")
    options = params.get("options") if isinstance(params, dict) else None
    if request.get("method") != "session/request_permission" or not isinstance(options, list):
        return
    kinds: dict[Any, list[Any]] = {}
    for option in options:
        if isinstance(option, dict) and isinstance(option.get("kind"), str):
            kinds.setdefault(option["kind"], []).append(option.get("optionId"))
    tokens = {ids[0]: f"<option:{kind}>" for kind, ids in kinds.items() if len(ids) == 1}
    for option in options:
        if isinstance(option, dict) and hashable(option.get("optionId")):
            option["optionId"] = tokens.get(option["optionId"], option["optionId"])
    answer = request.get("answer")
    result = answer.get("result") if isinstance(answer, dict) else None
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if isinstance(outcome, dict) and hashable(outcome.get("optionId")):
        outcome["optionId"] = tokens.get(outcome["optionId"], outcome["optionId"])


def _semantic_loose(entries: list[Any]) -> list[Any]:
    """Apply `semantic_updates` to the runs of `{update: ...}` entries in a loose list."""
    out: list[Any] = []
    run: list[Any] = []
    for entry in [*entries, None]:
        if isinstance(entry, dict) and set(entry) == {"update"}:
            run.append(entry["update"])
            continue
        out.extend({"update": u} for u in semantic_updates(run))
        run = []
        if entry is not None:
            out.append(entry)
    return out


def semantic_updates(updates: list[Any]) -> list[Any]:
    """Fold tool calls into their final state, then merge adjacent chunks of a message.

    Usage numbers are dropped and empty text chunks vanish: unlike agents meter tokens
    differently and some send an empty chunk just to carry metadata. Once chunks are
    merged, `messageId` has done its job (separate messages stay separate entries) and
    goes too: some agents send one, some do not.
    """
    merged = merge_chunks(_fold_tools([_drop_usage(u) for u in updates]))
    return [_without(u, "messageId") if _text_chunk(u) else u for u in merged]


def _without(entry: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != key}


def _drop_usage(update: Any) -> Any:
    if isinstance(update, dict) and update.get("sessionUpdate") == "usage_update":
        return {k: v for k, v in update.items() if k not in ("used", "size", "cost")}
    return update


def _fold_tools(updates: list[Any]) -> list[Any]:
    out: list[Any] = []
    state: dict[tuple[Any, Any], dict[str, Any]] = {}
    for u in updates:
        kind = u.get("sessionUpdate") if isinstance(u, dict) else None
        if kind not in ("tool_call", "tool_call_update") or not hashable(u.get("toolCallId")):
            out.append(u)
            continue
        # The session is a token, or (an agent's junk sessionId) any JSON value; ids of
        # two JSON types (`1`, `true`) are two calls.
        key = (_value_key(u.get("session")), exact_key(u.get("toolCallId")))
        if key not in state:
            state[key] = {**u, "sessionUpdate": "tool_call"}
            out.append(state[key])
        else:
            # ACP: fields absent (or null) in an update are unchanged; present ones replace.
            state[key].update(
                {k: v for k, v in u.items() if k != "sessionUpdate" and v is not None}
            )
    folded = {id(entry) for entry in state.values()}
    return [_update_order(u) if id(u) in folded else u for u in out]


def _value_key(value: Any) -> Any:
    """A hashable key for any JSON value, telling JSON types apart."""
    if hashable(value):
        return exact_key(value)
    return json.dumps(value, sort_keys=True)


def _update_order(update: dict[str, Any]) -> dict[str, Any]:
    """`sessionUpdate` (and `session`) first, the rest sorted, as `_update` builds them."""
    head = [k for k in ("sessionUpdate", "session") if k in update]
    return {k: update[k] for k in [*head, *sorted(k for k in update if k not in head)]}


TRANSPARENT = frozenset({"usage_update", "session_info_update"})
"""Updates that do not end a message: agents interleave them with its text chunks
(a usage reading mid-stream, a title), so the text still merges across them."""


def merge_chunks(updates: list[Any]) -> list[Any]:
    """Text chunks of the same kind, message and session merged into one, when nothing
    but `TRANSPARENT` updates stands between them (those keep their order, after it)."""
    out: list[Any] = []
    texts: dict[int, list[str]] = {}
    """Output position -> the texts merged into it, joined at the end: adding each chunk
    to a growing string copied it every time (a flood of 200,000 chunks took 8 s)."""
    last_text: int | None = None
    for u in updates:
        text = _text_chunk(u)
        if text and u["content"]["text"] == "":
            continue
        if text and last_text is not None:
            prev = out[last_text]  # a text chunk: `last_text` marks nothing else
            if (
                prev["sessionUpdate"] == u["sessionUpdate"]
                and _same(prev, u, "messageId")
                and _same(prev, u, "session")
            ):
                texts.setdefault(last_text, [prev["content"]["text"]]).append(u["content"]["text"])
                continue
        out.append(u)
        if text:
            last_text = len(out) - 1
        elif not (isinstance(u, dict) and _kind(u) in TRANSPARENT):
            last_text = None
    for at, parts in texts.items():
        first = out[at]
        out[at] = {**first, "content": {**first["content"], "text": "".join(parts)}}
    return out


def _text_chunk(u: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(u, dict)
        and _kind(u) in CHUNK_KINDS
        and isinstance(u.get("content"), dict)
        and u["content"].get("type") == "text"
        and isinstance(u["content"].get("text"), str)
    )


_EMPTIED: Any = object()
"""A container that held only `_meta` (at any depth): it goes with it."""


def _drop_meta(value: Any) -> Any:
    """`value` without `_meta`, and without the objects that held nothing else (a
    notification whose params were only `_meta` leaves no `{}` to differ on)."""
    out = _without_meta(value)
    return {} if out is _EMPTIED else out


def _without_meta(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            if key == "_meta" or (item := _without_meta(item)) is _EMPTIED:
                continue
            kept[key] = item
        return _EMPTIED if value and not kept else kept
    if isinstance(value, list):
        return [x for x in map(_without_meta, value) if x is not _EMPTIED]
    return value


def _same(a: dict[str, Any], b: dict[str, Any], key: str) -> bool:
    """Both have `key` with the same JSON value, or neither has it (`null` is no absence)."""
    return (key in a) == (key in b) and json_equal(a.get(key), b.get(key))


def _kind(u: dict[str, Any]) -> str | None:
    """An update's `sessionUpdate` when it is a string (an agent can send anything there:
    a list would not even hash)."""
    kind = u.get("sessionUpdate")
    return kind if isinstance(kind, str) else None

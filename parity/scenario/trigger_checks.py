"""Cross-checks of triggers: a prompt's `cancel.after` and a held answer's `after`
(docs/scenarios.md, "Triggers" and "Validation").

A trigger naming a prompt that no step names is an error. Warnings: a trigger known to
race (a cancel on the `tool_call` update, a cancel on a fixture tool call whose tool
answers at once, a short time trigger) and a trigger that can never fire (more model
requests than the script has entries, a fixture tool the scenario does not declare or
its script never calls, a cancel waiting for its own prompt to end).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from parity.scenario.errors import KeyPath, did_you_mean
from parity.scenario.yaml_positions import Sink, mappings

TABLE_KEYS = frozenset({"by_prompt", "by_tool", "default"})
"""The keys of a `permission` value in its table form."""

SHORT_MS = 1000
"""A time trigger below this many milliseconds is warned about: it drifts under load."""

SURELY_RUNNING_MS = 1000
"""A fixture tool answering sooner than this may finish before a cancel sent on its call
reaches the agent (a tool that is to be cancelled should `hang`)."""


@dataclass
class TriggerContext:
    """What the triggers of one file may refer to."""

    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Declared fixture tools by name."""
    called: set[str] = field(default_factory=set)
    """Tool names the script's `tool_calls` name."""
    prompts: set[str] = field(default_factory=set)
    """Every prompt name (`as`) in the file."""
    script_entries: int | None = 0
    """Consumable llm entries; None when side entries make the count open-ended."""


def trigger_context(data: dict[str, Any]) -> TriggerContext:
    llm = [e for _, e in mappings(data.get("llm"))]
    ctx = TriggerContext(script_entries=None if any("match" in e for e in llm) else len(llm))
    tools = mappings(data.get("tools"))
    ctx.tools = {t["name"]: t for _, t in tools if isinstance(t.get("name"), str)}
    ctx.called = {str(call.get("name")) for e in llm for _, call in mappings(e.get("tool_calls"))}
    ctx.prompts = set(_prompt_names(data.get("steps")))
    return ctx


def _prompt_names(steps: Any) -> Iterator[str]:
    for _, step in mappings(steps):
        for kind, params in step.items():
            if kind == "parallel":
                yield from _prompt_names(params)
            elif (
                kind == "prompt" and isinstance(params, dict) and isinstance(params.get("as"), str)
            ):
                yield params["as"]


def check_trigger(
    after: Any, here: KeyPath, ctx: TriggerContext, sink: Sink, *, cancels: str | None = None
) -> None:
    """One trigger at `here` (a cancel's when `cancels` is set: the prompt's name, or "")."""
    if not isinstance(after, dict):
        return
    cancel = cancels is not None
    ms = after.get("ms")
    if isinstance(ms, int) and not isinstance(ms, bool) and ms < SHORT_MS:
        sink.add(
            (*here, "ms"),
            f"a time trigger of {ms} ms drifts under load",
            "trigger on what the agent does: update, agent_request, tool_call",
            "warning",
        )
    wanted = after.get("llm_request")
    entries = ctx.script_entries
    if isinstance(wanted, int) and entries is not None and wanted > entries:
        sink.add(
            (*here, "llm_request"),
            f"the llm script has only {entries} entr{'y' if entries == 1 else 'ies'}",
            "the trigger would never fire: an exhausted script fails the request instead",
            "warning",
        )
    if cancel and after.get("update") == "tool_call":
        sink.add(
            (*here, "update"),
            "the tool_call update comes before the tool request: the cancel races the tool",
            "use `{tool_call: NAME}`: it fires once the fake has received the call",
            "warning",
        )
    name = after.get("tool_call")
    if isinstance(name, str):
        _check_tool_trigger(name, (*here, "tool_call"), ctx, sink, cancel)
    prompt = after.get("prompt")
    if isinstance(prompt, str):
        if prompt not in ctx.prompts:
            hint = did_you_mean(prompt, sorted(ctx.prompts)) or "name a prompt with `as:`"
            sink.add((*here, "prompt"), f"no prompt is named {prompt!r}", hint)
        elif prompt == cancels:
            sink.add(
                (*here, "prompt"),
                "a prompt cannot be cancelled after it has ended",
                "the trigger would never fire",
                "warning",
            )


def _check_tool_trigger(
    name: str, here: KeyPath, ctx: TriggerContext, sink: Sink, cancel: bool
) -> None:
    tool = ctx.tools.get(name)
    if tool is None:
        hint = did_you_mean(name, sorted(ctx.tools)) or "only declared fixture tools reach the fake"
        sink.add(
            here, f"{name!r} is not a declared tool; the trigger would never fire", hint, "warning"
        )
        return
    if name not in ctx.called and ctx.script_entries is not None:
        sink.add(
            here, f"the llm script never calls {name!r}", "the trigger would never fire", "warning"
        )
    delay = tool.get("delay_ms", 0)
    quick = not tool.get("hang") and isinstance(delay, int) and delay < SURELY_RUNNING_MS
    if cancel and quick:
        sink.add(
            here,
            f"{name!r} answers after {delay} ms: the cancel races its result",
            "declare the tool `hang: true` (or a `delay_ms` of a second or more)",
            "warning",
        )


def check_client_triggers(data: dict[str, Any], ctx: TriggerContext, sink: Sink) -> None:
    """The `after` of every held answer in `client`, and the prompts `by_prompt` names."""
    client = data.get("client")
    if not isinstance(client, dict):
        return
    permission = client.get("permission")
    by_prompt = permission.get("by_prompt") if isinstance(permission, dict) else None
    for name in by_prompt if isinstance(by_prompt, dict) else {}:
        if name not in ctx.prompts:
            hint = did_you_mean(str(name), sorted(ctx.prompts)) or "name a prompt with `as:`"
            here = ("client", "permission", "by_prompt", name)
            sink.add(here, f"no prompt is named {name!r}: its answers would never apply", hint)
    for key in ("permission", "elicitation"):
        for path, item in _answer_items(client.get(key), ("client", key)):
            if isinstance(item, dict) and "after" in item:
                check_trigger(item["after"], (*path, "after"), ctx, sink)
    for key in ("fs", "terminal"):
        section = client.get(key)
        if isinstance(section, dict) and "after" in section:
            check_trigger(section["after"], ("client", key, "after"), ctx, sink)


def _answer_items(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, Any]]:
    """Every answer item of a `permission` / `elicitation` value (lists, `by_prompt`,
    `by_tool`)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield (*path, i), item
    elif isinstance(value, dict) and not value.keys().isdisjoint(TABLE_KEYS):
        for key in ("by_prompt", "by_tool"):
            table = value.get(key)
            for name, answers in table.items() if isinstance(table, dict) else []:
                yield from _answer_items(answers, (*path, key, name))
        if "default" in value:
            yield from _answer_items(value["default"], (*path, "default"))
    else:
        yield path, value

"""Cross-checks of a scenario file that its JSON Schema cannot express.

Session names used before they are defined, tool calls naming undeclared tools, `llm`
entries whose keys contradict each other, paths escaping the workdir, and more (see
docs/scenarios.md, "Validation"). Each check reads the data defensively: the schema
may already have found the shape wrong, and both kinds of finding are reported at once.
The checks of the `steps` list are in `parity.scenario.step_checks`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from pathlib import PurePosixPath
from typing import Any

from yaml.nodes import Node

from parity.scenario.errors import RULE_REASON_HINT, KeyPath, ScenarioError, did_you_mean
from parity.scenario.families import ALL, TOOL_FAMILY
from parity.scenario.pins import OTHERS, side_problem
from parity.scenario.selectors import parse_selector
from parity.scenario.step_checks import check_steps
from parity.scenario.trigger_checks import trigger_context
from parity.scenario.yaml_positions import Sink, mappings


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
    sink = Sink(root, file)
    if known_targets is not None:
        _check_targets(data, sorted(known_targets), sink)
    _check_rules(data, default_targets, sink)
    _check_expect_problems(data, default_targets, sink)
    _check_tools(data, sink)
    _check_llm(data, sink)
    _check_families(data, sink)
    _check_captured(data, default_targets, sink)
    _check_files(data, sink)
    check_steps(data, sink)
    return sink.found


def _targets(data: dict[str, Any], default: Sequence[str]) -> list[str]:
    targets = data.get("targets", list(default))
    return [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []


def _selector_problem(selector: str) -> str | None:
    """Why `selector` does not parse, per the grammar in `parity.scenario.selectors`;
    None if it does."""
    try:
        parse_selector(selector)
    except ValueError as exc:
        return str(exc)
    return None


def _check_targets(data: dict[str, Any], known: list[str], sink: Sink) -> None:
    targets = data.get("targets")
    for i, target in enumerate(targets if isinstance(targets, list) else []):
        if isinstance(target, str) and target not in known:
            hint = did_you_mean(target, known) or f"known targets: {', '.join(known)}"
            sink.add(("targets", i), f"unknown target {target!r}", hint)


def _check_rules(data: dict[str, Any], default_targets: Sequence[str], sink: Sink) -> None:
    targets = _targets(data, default_targets)
    for section in ("diverge", "masks"):
        for i, rule in mappings(data.get(section)):
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
            if section == "diverge":
                _check_sides(rule.get("sides"), (section, i, "sides"), targets, sink)
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


def _check_sides(sides: Any, at: KeyPath, targets: Sequence[str], sink: Sink) -> None:
    """A declared difference's sides: each names a target compared (or `others`), and
    each pin is well formed (`parity.scenario.pins`)."""
    for name, side in sides.items() if isinstance(sides, dict) else ():
        if name != OTHERS and name not in targets:
            listed = ", ".join(targets)
            hint = did_you_mean(str(name), [*targets, OTHERS]) or f"this scenario runs {listed}"
            sink.add((*at, name), f"side {name!r} is not a target of this scenario", hint)
        problem = side_problem(side)
        if problem:
            sink.add((*at, name), problem, "see docs/scenarios.md, `diverge` sides")


def _check_expect_problems(
    data: dict[str, Any], default_targets: Sequence[str], sink: Sink
) -> None:
    targets = _targets(data, default_targets)
    seen: dict[tuple[Any, ...], int] = {}
    for i, entry in mappings(data.get("expect_problems")):
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


def _check_tools(data: dict[str, Any], sink: Sink) -> None:
    first: dict[str, int] = {}
    for i, tool in mappings(data.get("tools")):
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


def _check_llm(data: dict[str, Any], sink: Sink) -> None:
    # Only string names: a malformed name is the schema's finding, never a crash here.
    declared = {t["name"] for _, t in mappings(data.get("tools")) if isinstance(t.get("name"), str)}
    call_ids: dict[str, int] = {}
    prompts = sorted(trigger_context(data).prompts)
    for i, entry in mappings(data.get("llm")):
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
        for j, call in mappings(entry.get("tool_calls")):
            _check_tool_call(call, (*here, "tool_calls", j), declared, call_ids, sink)
        _check_entry_prompt(entry, here, prompts, sink)
    _check_entry_agents(data, sink)


def _check_entry_agents(data: dict[str, Any], sink: Sink) -> None:
    """`agent` (a child agent's entries) belongs to consumable entries, and children are
    numbered by their first request: an `agent: 3` with no entry for child 2 can only
    answer a third child whose second sibling never asks the model."""
    given: dict[int, KeyPath] = {}
    for i, entry in mappings(data.get("llm")):
        agent = entry.get("agent")
        if not isinstance(agent, int) or isinstance(agent, bool) or agent < 1:
            continue  # the schema's finding
        if "match" in entry:
            sink.add(
                ("llm", i, "agent"),
                "a side entry (`match`) answers every agent's matching requests",
                "drop `agent`, or `match` to make it the child agent's own entry",
            )
            continue
        given.setdefault(agent, ("llm", i, "agent"))
    for agent, at in sorted(given.items()):
        missing = [n for n in range(1, agent) if n not in given]
        if missing:
            sink.add(
                at,
                f"no entry is for child agent {missing[0]}, yet this one is for child {agent}",
                "children are numbered from 1 in the order of their first model request",
                "warning",
            )


def _check_families(data: dict[str, Any], sink: Sink) -> None:
    """A built-in call whose family the scenario's `builtin_tools` leaves off reaches an
    agent that does not offer the tool: legal (it tests that answer), but worth a word."""
    chosen = data.get("builtin_tools")
    if not isinstance(chosen, list) or ALL in chosen:
        return
    for i, entry in mappings(data.get("llm")):
        for j, call in mappings(entry.get("tool_calls")):
            family = TOOL_FAMILY.get(str(call.get("name")))
            if call.get("builtin") is True and family is not None and family not in chosen:
                sink.add(
                    ("llm", i, "tool_calls", j, "name"),
                    f"{call['name']!r} belongs to family {family!r}, which `builtin_tools` "
                    "leaves off",
                    f"add {family!r} to `builtin_tools`, unless the call tests an unknown tool",
                    "warning",
                )


def _check_entry_prompt(
    entry: dict[str, Any], here: KeyPath, prompts: Sequence[str], sink: Sink
) -> None:
    """An entry's `prompt` names a prompt step, and a side entry belongs to no turn."""
    prompt = entry.get("prompt")
    if not isinstance(prompt, str):
        return
    if "match" in entry:
        sink.add(
            (*here, "prompt"),
            "a side entry (`match`) answers any turn and is never used up",
            "drop `prompt`, or `match` to make it the prompt's own entry",
        )
    elif prompt not in prompts:
        hint = did_you_mean(prompt, prompts) or "name the prompt step with `as:`"
        sink.add(
            (*here, "prompt"),
            f"no prompt step is named {prompt!r}: the entry would never answer",
            hint,
        )


def _check_captured(data: dict[str, Any], default: Sequence[str], sink: Sink) -> None:
    captured = data.get("captured")
    target = captured.get("target") if isinstance(captured, dict) else None
    if isinstance(target, str) and target not in _targets(data, default):
        sink.add(
            ("captured", "target"),
            f"the captured target {target!r} is not among the scenario's targets",
            "its replays are the ones that check the recorded requests: add it to `targets`",
            "warning",
        )


def _check_tool_call(
    call: dict[str, Any], here: KeyPath, declared: set[Any], call_ids: dict[str, int], sink: Sink
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
    if call.get("malformed") is True:
        return  # wrong on purpose: the scenario checks how the agent answers it
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


def _check_files(data: dict[str, Any], sink: Sink) -> None:
    for key, where in (("files", "the workdir"), ("home_files", "the home")):
        files = data.get(key)
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
                    (key, rel),
                    f"{rel!r} must be a relative path inside {where}",
                    "use forward slashes, no `..`",
                )

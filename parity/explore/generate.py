"""Whole scenarios, drawn: a Hypothesis strategy of scenario dicts that `check_text`
accepts, and their YAML text.

A scenario is a handful of actions on one or two sessions: turns (each a prompt with the
script entries it consumes, possibly cancelled at one of the trigger kinds), two prompts
at once (a `parallel` block whose second prompt waits, by its step `after`, until the
first is asking, in a hanging tool or on a hanging stream), session methods, and raw
requests or notifications from the ACP schema. The script (`llm`) and
the permission answers (`client.permission.by_prompt`) are built alongside the steps,
so every cancel's trigger names what its turn really does (counted from its own prompt),
every script entry and permission answer applies only to its own prompt, and every held
answer belongs to a prompt that is cancelled while the request is pending (an answer
held for a prompt that cannot end would only time out). By prompt, not in request
order: a turn one agent refuses or leaves stuck would shift every later answer; and not
`by_tool`: native 0.1.0-rc.8 asks before its `tool_call` update and names only the call
id, so no answer by tool matches it. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml
from hypothesis import strategies as st

from parity.explore import acp_params, builtin_side, client_side, model_side
from parity.explore.vocabulary import (
    acp_schema,
    agent_notifications,
    agent_requests,
    cancel_routes,
)

TURNS = ("plain", "plain", "ask", "cancel-stream", "cancel-tool", "cancel-permission")
CONCURRENT = ("while-asking", "while-tool", "while-stream")
"""Two prompts in a `parallel` block, the second held by its step `after` until the
first is asking (its permission request pending), running a hanging tool, or waiting
on a hanging stream; the first is answered, or cancelled, once the second has ended."""
ACTIONS = (*TURNS, "concurrent", "session", "raw", "notify")
ASKING_TURNS = ("ask", "cancel-permission")
TIMEOUTS = {"response": 6, "run": 60}
"""Below the defaults: a generated run that hangs (a cancel whose trigger counted model
requests an agent did not make) costs six seconds, not fifteen."""
MCP_RESPONSE_TIMEOUT = 20
"""The response timeout of a generated scenario whose sessions start the MCP bridge."""
HEADER = "# yaml-language-server: $schema=../../parity/schema/scenario.schema.json\n"


@dataclass
class Draft:
    """The scenario being built, action by action."""

    sessions: tuple[str, ...]
    ignored: frozenset[str] = frozenset()
    """ACP methods a target of the pair ignores (`TargetSpec.ignores`): never sent."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    llm: list[dict[str, Any]] = field(default_factory=list)
    permissions: dict[str, Any] = field(default_factory=dict)
    """The permission answer of each asking turn, by its prompt's name."""
    objects_only: bool = False
    """Tool-call arguments that read as an object only (`model_side.arguments_text`)."""
    builtin: bool = False
    """Plain turns may call the agents' own tools too (`builtin_side`)."""
    lacking: frozenset[str] = frozenset()
    """Built-in tools a target of the pair lacks (`TargetSpec.lacks_tools`): never called."""
    prompts: int = 0
    calls: int = 0

    def call_id(self) -> int:
        self.calls += 1
        return self.calls


def _entry(draft: Draft, entry: dict[str, Any]) -> None:
    """A script entry of the turn being drawn: it answers only that prompt (`prompt`),
    so a turn one agent refuses or leaves stuck does not shift the others' answers."""
    draft.llm.append({**entry, "prompt": f"p{draft.prompts + 1}"})


def _prompt_step(
    draft: Draft, draw: st.DrawFn, cancel: dict[str, Any] | None = None, text_only: bool = False
) -> dict[str, Any]:
    """The next prompt step (`p<n>`), not yet placed in the steps."""
    draft.prompts += 1
    name = f"p{draft.prompts}"
    step: dict[str, Any] = {"session": draw(st.sampled_from(draft.sessions)), "as": name}
    if text_only:
        step["text"] = draw(model_side.sentence())
    else:
        step.update(draw(client_side.prompt_body()))
    if cancel is not None:
        route = draw(st.sampled_from(cancel_routes(draft.ignored)))
        step["cancel"] = (
            {"after": cancel} if route == "session_cancel" else {"after": cancel, "via": route}
        )
    return {"prompt": step}


def _prompt(draft: Draft, draw: st.DrawFn, cancel: dict[str, Any] | None = None) -> str:
    step = _prompt_step(draft, draw, cancel)
    draft.steps.append(step)
    return str(step["prompt"]["as"])


def _asking_call(draft: Draft, draw: st.DrawFn, tool: str, answer: Any) -> dict[str, Any]:
    text = draw(model_side.sentence())
    call = {"id": f"call-{draft.call_id()}", "name": tool, "arguments": {"text": text}}
    draft.permissions[f"p{draft.prompts + 1}"] = answer  # the prompt made next
    return {"tool_calls": [call]}


def _turn(draft: Draft, draw: st.DrawFn, kind: str) -> None:
    # Triggers count from their own prompt (`since: origin`): counted over the run, one
    # model request an agent skipped would shift every later cancel.
    if kind == "plain":
        # Mostly one call round: most of what differs between agents is in tool calls.
        for _ in range(draw(st.sampled_from((1, 0, 2)))):
            entry = draw(model_side.calling_entry(draft.calls + 1, draft.objects_only))
            if draft.builtin and draw(st.booleans()):
                calls = entry["tool_calls"]
                ids = [str(c["id"]) for c in calls]
                entry["tool_calls"] = [
                    draw(builtin_side.builtin_call(i, draft.lacking)) for i in ids
                ]
            draft.calls += len(entry["tool_calls"])
            _entry(draft, entry)
        _entry(draft, draw(model_side.closing_entry()))
        _prompt(draft, draw)
    elif kind == "ask":
        answer = draw(client_side.immediate_answer())
        _entry(draft, _asking_call(draft, draw, model_side.ASKING, answer))
        _entry(draft, draw(model_side.closing_entry()))
        _prompt(draft, draw)
    elif kind == "cancel-stream":
        _entry(draft, model_side.hanging_entry())
        _prompt(draft, draw, cancel={"llm_request": 1, "since": "origin"})
    elif kind == "cancel-tool":
        call = {"id": f"call-{draft.call_id()}", "name": model_side.HANGING, "arguments": {}}
        _entry(draft, {"tool_calls": [call]})
        trigger = {"tool_call": model_side.HANGING, "since": "origin"}
        _prompt(draft, draw, cancel=trigger)
    else:  # cancel-permission: cancelled while the permission request is pending
        name = f"p{draft.prompts + 1}"  # the prompt made next
        answer = draw(client_side.held_answer(name))
        _entry(draft, _asking_call(draft, draw, model_side.CONFIRMING, answer))
        _prompt(draft, draw, cancel={"agent_request": "session/request_permission"})


def _concurrent(draft: Draft, draw: st.DrawFn, kinds: tuple[str, ...]) -> None:
    """Two prompts at once (`CONCURRENT`): the first is under way (asking, in a hanging
    tool, on a hanging stream) when the second is sent, by its step's `after`; the first
    is answered (held until the second ended) or cancelled once the second has ended.
    So the order of the script is fixed by the triggers: the first's call, the second's
    turn, then the first's last answer; the first prompt's text is plain, so the agent
    surely gets as far as the trigger."""
    kind = draw(st.sampled_from(kinds))
    first, second = f"p{draft.prompts + 1}", f"p{draft.prompts + 2}"
    ended = {"prompt": second}
    if kind == "while-asking":
        answer = draw(client_side.immediate_answer())
        call: dict[str, Any] = {"id": f"call-{draft.call_id()}", "name": model_side.ASKING}
        draft.llm.append({"tool_calls": [{**call, "arguments": {"text": "hi"}}], "prompt": first})
        draft.permissions[first] = {"answer": answer, "after": ended}
        head = _prompt_step(draft, draw, text_only=True)
        trigger: dict[str, Any] = {"agent_request": "session/request_permission"}
    elif kind == "while-tool":
        call = {"id": f"call-{draft.call_id()}", "name": model_side.HANGING, "arguments": {}}
        draft.llm.append({"tool_calls": [call], "prompt": first})
        head = _prompt_step(draft, draw, cancel=ended, text_only=True)
        trigger = {"tool_call": model_side.HANGING, "since": "origin"}
    else:  # while-stream
        draft.llm.append({**model_side.hanging_entry(), "prompt": first})
        head = _prompt_step(draft, draw, cancel=ended, text_only=True)
        trigger = {"llm_request": 1, "since": "origin"}
    draft.llm.append({**draw(model_side.closing_entry()), "prompt": second})
    tail = {**_prompt_step(draft, draw), "after": trigger}
    if kind == "while-asking":  # the asking turn goes on once its answer came
        draft.llm.append({**draw(model_side.closing_entry()), "prompt": first})
    draft.steps.append({"parallel": [head, tail]})


def _raw(draft: Draft, draw: st.DrawFn, kind: str) -> None:
    schema = acp_schema()
    defs: dict[str, Any] = schema["$defs"] if schema else {}
    requests, notes = agent_requests(draft.ignored), agent_notifications(draft.ignored)
    if kind == "raw" and requests:
        method, _, params = draw(acp_params.raw_request(requests, defs, draft.sessions))
        draft.steps.append({"request": {"method": method, "params": params}})
    elif kind == "notify" and notes:
        method = draw(st.sampled_from(sorted(notes)))
        params = draw(acp_params.params(notes[method], defs, draft.sessions))
        draft.steps.append({"notify": {"method": method, "params": params}})
    else:
        draft.steps.append(draw(client_side.session_step(draft.sessions, draft.ignored)))


@st.composite
def scenarios(
    draw: st.DrawFn,
    targets: tuple[str, str],
    approvals: bool = True,
    ignored: frozenset[str] = frozenset(),
    builtin: bool = False,
    lacking: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One scenario for `targets` (reference first), in the file's shape. `approvals`
    false (the targets get the fixture tools by different transports): no tool asks
    first, no turn waits on a permission request, and every tool call's arguments read
    as an object. No `ignored` method is sent (a cancel takes another route). `builtin`:
    a call round may call the agents' own tools instead, in a workspace of a few files
    (`builtin_side`), none of the `lacking` ones (a declared gap of a target of the
    pair); the scenario's families follow from those calls."""
    sessions = ("s1", "s2") if draw(st.integers(0, 3)) == 0 else ("s1",)
    draft = Draft(sessions, ignored, objects_only=not approvals, builtin=builtin)
    draft.lacking = lacking
    draft.steps = [{"initialize": {}}] + [{"new_session": {"as": s}} for s in sessions]
    actions = ACTIONS if approvals else tuple(a for a in ACTIONS if a not in ASKING_TURNS)
    concurrent: tuple[str, ...] = CONCURRENT if approvals else CONCURRENT[1:]
    if not cancel_routes(ignored):
        actions = tuple(a for a in actions if not a.startswith("cancel-"))
        concurrent = tuple(c for c in concurrent if c == "while-asking")
    if ignored.issuperset(client_side.SESSION_METHODS):
        actions = tuple(a for a in actions if a != "session")
    if not concurrent:
        actions = tuple(a for a in actions if a != "concurrent")
    for action in draw(st.lists(st.sampled_from(actions), min_size=1, max_size=4)):
        if action in TURNS:
            _turn(draft, draw, action)
        elif action == "concurrent":
            _concurrent(draft, draw, concurrent)
        else:
            _raw(draft, draw, action)
    out: dict[str, Any] = {
        "description": "generated by parity explore",
        "targets": list(targets),
        "tools": model_side.tools(approvals),
        "files": dict(builtin_side.WORKSPACE) if builtin else {"notes.txt": "hello\n"},
    }
    if builtin_side.calls_resources(draft.llm):
        out["mcp_resources"] = dict(builtin_side.RESOURCES)
        for step in draft.steps:
            if "new_session" in step:
                step["new_session"]["fixture_tools"] = "mcp"
    if draft.llm:
        out["llm"] = draft.llm
    if draft.permissions:
        out["client"] = {"permission": {"by_prompt": draft.permissions}}
    out["steps"] = draft.steps
    out["timeouts"] = dict(TIMEOUTS)
    if "mcp_resources" in out:
        # session/new waits for the bridge, a Python process importing the MCP SDK:
        # seconds on a loaded machine (as `plus-openai`'s table allows it).
        out["timeouts"]["response"] = MCP_RESPONSE_TIMEOUT
    return out


class _Dumper(yaml.SafeDumper):
    """Shared values written out each time: `&id001` anchors would only puzzle a reader."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(scenario: dict[str, Any]) -> str:
    """The scenario file's text: the schema line, then the keys in the order drawn.
    Unicode is written as itself; a long description is folded by YAML."""
    body = yaml.dump(scenario, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return HEADER + body

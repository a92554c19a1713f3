"""M5 slash commands (docs/contract.md §6.4): the grammar, the registry, the texts. Pure.

A prompt whose blocks are all text and whose joined text, leading whitespace trimmed,
is `/<name>` or `/<name><whitespace><args>` for a registered name runs that command:
no model turn, two durable events (`command/run`, `command/done`) that the projection
(`acp_plus/protocol/updates.py`) shows as a `user_message_chunk` echo and an
`agent_message_chunk` answer. Any other slash line (`/etc/hosts looks wrong`, an
unknown name) is an ordinary prompt for the model.

The commands: `/help`, `/status` (model, effort, mode, sandbox, roots, context use) and
`/mode [default|plan]`. Their list depends on the session's mode (`/mode` names the
current one), so a switch is a registry change and sends `available_commands_update`
again (`acp_plus/features/wiring.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acp_plus.core.events import COMMAND_DONE, COMMAND_RUN
from acp_plus.core.js_json import JS_WHITESPACE
from acp_plus.features import modes
from acp_plus.protocol.content import text_only

_NAME = re.compile(r"/([A-Za-z][A-Za-z0-9_-]*)")


@dataclass(frozen=True)
class Command:
    """One registered command as `available_commands_update` lists it."""

    name: str
    description: str
    hint: str | None = None
    """The `input.hint` clients show for the arguments; None: the command takes none."""


@dataclass(frozen=True)
class CommandLine:
    """A parsed slash line: `args` keeps its leading whitespace (§6.4 echo)."""

    name: str
    args: str

    @property
    def text(self) -> str:
        """The line as the client sees it echoed: `/` + name + args."""
        return f"/{self.name}{self.args}"


def registry(mode: str, extra: Sequence[Command] = ()) -> tuple[Command, ...]:
    """The commands of a session in `mode`, in the order clients list them; `extra` (the
    approval features' commands, `features/approvals.py`) come last."""
    choices = " or ".join(m.id for m in modes.MODES)
    return (
        Command("help", "List the commands and what they do."),
        Command(
            "status",
            "Show the session's model, reasoning effort, mode, sandbox, roots and context use.",
        ),
        Command(
            "mode",
            f"Switch the session mode: {choices} (now {mode}).",
            hint=" | ".join(m.id for m in modes.MODES),
        ),
        *extra,
    )


def parse(blocks: Any, commands: Sequence[Command]) -> CommandLine | None:
    """The command a prompt names, or None when it is an ordinary prompt.

    Every block must be `{type: text, text: <string>}`; the texts are joined, leading
    JavaScript whitespace is trimmed, and the line must start with `/<name>` followed by
    whitespace or nothing, for a name in `commands`.
    """
    joined = text_only(blocks)
    if joined is None:
        return None
    line = joined.lstrip(JS_WHITESPACE)
    match = _NAME.match(line)
    if match is None:
        return None
    args = line[match.end() :]
    if args and args[0] not in JS_WHITESPACE:
        return None  # `/etc/hosts`: a path, not a command
    name = match.group(1)
    if all(c.name != name for c in commands):
        return None
    return CommandLine(name, args)


def available_commands(commands: Sequence[Command]) -> list[dict[str, Any]]:
    """The `availableCommands` list (§6.4), in registry order."""
    listed: list[dict[str, Any]] = []
    for command in commands:
        entry: dict[str, Any] = {"name": command.name, "description": command.description}
        if command.hint is not None:
            entry["input"] = {"hint": command.hint}
        listed.append(entry)
    return listed


def available_commands_update(commands: Sequence[Command]) -> dict[str, Any]:
    """The update that tells a client which commands the session has."""
    return {
        "sessionUpdate": "available_commands_update",
        "availableCommands": available_commands(commands),
    }


def run_event(line: CommandLine) -> dict[str, Any]:
    """The event committed when a command starts (uncommitted form)."""
    return {"type": COMMAND_RUN, "name": line.name, "args": line.args}


def done_event(line: CommandLine, text: str) -> dict[str, Any]:
    """The event committed when a command has answered."""
    return {"type": COMMAND_DONE, "name": line.name, "text": text}


# -- what the commands say ------------------------------------------------------------


def help_text(commands: Sequence[Command]) -> str:
    """`/help`: one line per command, then how other slash lines are treated."""
    lines = ["Commands:"]
    for command in commands:
        usage = f"/{command.name}" + (f" <{command.hint}>" if command.hint else "")
        lines.append(f"  {usage}: {command.description}")
    lines.append("Any other line starting with / is sent to the model as it is.")
    return "\n".join(lines)


@dataclass(frozen=True)
class Status:
    """What `/status` reports about one session."""

    model: str | None
    """`<name> (<provider>/<model>)`, or None when the session has no route."""
    effort: str | None
    """The effort requests are sent with; "" is the provider's default; None: the model
    offers no reasoning effort."""
    mode: str
    sandbox: str
    roots: tuple[str, ...]
    used_tokens: int
    context_window: int | None


def status_text(status: Status) -> str:
    """`/status`: one fact per line."""
    if status.effort is None:
        effort = "not offered by this model"
    else:
        effort = status.effort or "provider default"
    if status.context_window:
        share = round(100 * status.used_tokens / status.context_window)
        context = f"{status.used_tokens} of {status.context_window} tokens ({share}%)"
    else:
        context = f"{status.used_tokens} tokens (context window unknown)"
    return "\n".join(
        [
            f"Model: {status.model or 'none configured'}",
            f"Reasoning effort: {effort}",
            f"Mode: {status.mode}",
            f"Sandbox: {status.sandbox}",
            f"Roots: {', '.join(status.roots)}",
            f"Context: {context}",
        ]
    )


@dataclass(frozen=True)
class ModeChoice:
    """What `/mode <args>` asks for: the mode to switch to (None: none) and the answer."""

    target: str | None
    text: str


def mode_choice(args: str, current: str) -> ModeChoice:
    """`/mode` without arguments names the current mode; with a mode id it switches."""
    wanted = args.strip(JS_WHITESPACE)
    ids = ", ".join(m.id for m in modes.MODES)
    if not wanted:
        return ModeChoice(None, f"Mode: {current} (available: {ids}).")
    if all(m.id != wanted for m in modes.MODES):
        return ModeChoice(None, f"Unknown mode: {wanted}. Available: {ids}.")
    if wanted == current:
        return ModeChoice(None, f"Mode: {current} (unchanged).")
    mode = next(m for m in modes.MODES if m.id == wanted)
    return ModeChoice(wanted, f"Mode: {wanted}. {mode.description}")

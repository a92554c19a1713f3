"""What the model reads of `bash`: native 0.2.1-rc.2's definition (description and
parameter schema, word for word) and its result layout.

A finished command: stdout, then a `[stderr]` section, or `(no output)`; then the
markers, one a line: the sandbox denial (and its escalation hint), `[killed by signal:
S]` or `[exit code: N]` (only when not 0). A stream cut to its tail ends with
`[output truncated; full output: <file>]`. A command still running when its timeout
passes moved to the background (`render_promoted`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_plus.core.confine import ESCALATION_TARGETS

DESCRIPTION = (
    "Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a "
    "fresh shell; pass `workdir` instead of using `cd`. Managed `$DSH_*` variables expose "
    "current harness environment facts. Long output is truncated to its tail; the full "
    "output is saved to a file whose path is reported when available. Provide `description` "
    "before `command` in the arguments. Before any delete or move, verify that the resolved "
    "absolute target path is the intended one; never run it against a computed path you have "
    "not checked. An unset variable expands to an empty string, so guard variables in such "
    "paths with `${VAR:?}`. Commands may run under a file sandbox; a blocked file operation is "
    "reported as `[sandbox: file access denied under <mode> mode]`, a policy denial: do not "
    "retry another way."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {
            "type": "string",
            "description": "Clear, concise description of what this command does in active "
            'voice, 5-10 words (shown in the UI). Examples: "ls" \u2192 "List files in current '
            'directory"; "git status" \u2192 "Show working tree status"; "npm install" \u2192 '
            '"Install package dependencies".',
        },
        "command": {"type": "string", "description": "The bash command to execute."},
        "timeoutMs": {
            "type": "number",
            "description": "Timeout in milliseconds. The executor applies its configured "
            "default and cap; on expiry the command moves to the background as a job instead "
            "of being killed.",
        },
        "workdir": {
            "type": "string",
            "description": "Working directory for this command. Defaults to the session "
            "workspace; a relative path is resolved against it.",
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Run in the background and return a job id immediately (collect "
            "with job_output, stop with job_kill). No timeout applies.",
        },
        "sandbox_permissions": {
            "type": "string",
            "enum": list(ESCALATION_TARGETS),
            "description": "The narrowest wider sandbox mode for a one-shot retry of the exact "
            "command the sandbox just denied; the retry asks the user for approval.",
        },
        "justification": {
            "type": "string",
            "description": "Required with sandbox_permissions: one sentence for the user "
            "explaining why this exact command needs the wider access. Use the language of the "
            "user\u2019s current request.",
        },
    },
    "required": ["description", "command"],
}

DEFAULT_TIMEOUT_MS = 60_000
"""The `acp` profile's `bash-sandbox` timeoutMs."""
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_BYTES = 64_000
"""Bytes of each stream the model sees at most (its tail)."""


@dataclass(frozen=True)
class Stream:
    """One collected stream: the text kept, and the file with all of it when cut."""

    text: str
    truncated: bool = False
    spill_path: str | None = None


def stream_text(stream: Stream) -> str:
    """The stream as the model reads it."""
    if not stream.truncated:
        return stream.text
    return f"{stream.text}\n[output truncated; full output: {stream.spill_path or '(unavailable)'}]"


def join_streams(out: str, err: str) -> str:
    """stdout, then stderr under a `[stderr]` line (empty when both are)."""
    if not err:
        return out
    return out + ("\n" if out and not out.endswith("\n") else "") + f"[stderr]\n{err}"


def render_result(
    stdout: Stream,
    stderr: Stream,
    code: int | None,
    signal: str | None = None,
    notes: tuple[str, ...] = (),
) -> str:
    """A finished command's result; `notes` are the sandbox markers, before the exit."""
    body = join_streams(stream_text(stdout), stream_text(stderr)) or "(no output)"
    markers = list(notes)
    if signal is not None:
        markers.append(f"[killed by signal: {signal}]")
    elif code != 0:
        markers.append(f"[exit code: {code}]")
    if not markers:
        return body
    return body + ("" if body.endswith("\n") else "\n") + "\n".join(markers)


NO_JOB_CONTROLLER = (
    "background jobs unavailable: no job controller serves this agent (load "
    "@deepseek-ai/dsh-tool-jobs in its composition)"
)
"""Native's refusal of `run_in_background` when the jobs family is not mounted."""


def render_promoted(output: str, timeout_ms: float, job_id: str) -> str:
    """A command still running when its timeout passed, now background job `job_id`."""
    head = output if not output or output.endswith("\n") else output + "\n"
    return (
        f"{head}[still running after {js_number(timeout_ms)}ms; moved to background job "
        f"{job_id}]\nThe command keeps running in the background. You will be notified when it "
        "finishes; read newer output with job_output, stop it with job_kill."
    )


def js_number(value: float) -> str:
    """A number as JavaScript prints it (`500`, not `500.0`)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def validate(args: dict[str, Any]) -> str | None:
    """Native's value checks after the schema's: blank command or description, a timeout
    that is not a positive number."""
    if not str(args["command"]).strip():
        return "invalid command: expected a non-empty string"
    if not str(args["description"]).strip():
        return "invalid description: expected a non-empty string"
    timeout = args.get("timeoutMs")
    if timeout is not None and not (timeout > 0 and timeout != float("inf")):
        return f"invalid timeoutMs: expected a positive number, got {js_number(timeout)}"
    return None


__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "DESCRIPTION",
    "MAX_OUTPUT_BYTES",
    "MAX_TIMEOUT_MS",
    "PARAMETERS",
    "Stream",
    "join_streams",
    "js_number",
    "render_promoted",
    "render_result",
    "stream_text",
    "validate",
]

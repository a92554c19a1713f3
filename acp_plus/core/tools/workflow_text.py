"""The `workflow` tool's model-facing words as native 0.2.1-rc.2 has them: its definition,
its system-prompt paragraph, the checks on a call before anything runs, and the text of
a run's outcome. Pure data and functions; `workflow_family.py` runs the call.

The texts were read from native's model view in the recorded scenarios (tools/workflow-*)
and the messages its engine gives; docs/acp-plus.md, "Built-in tools", lists the tool.
"""

from __future__ import annotations

import re
from typing import Any

from acp_plus.core.tools.bash_text import NO_JOB_CONTROLLER

DASH = "\u2014"
ELLIPSIS = "\u2026"

GUIDANCE: tuple[str, ...] = (
    "Use the workflow tool ONLY when the user explicitly asks for a workflow or for large "
    "multi-agent orchestration: you write a JavaScript script (the tool description "
    "documents the exact format) that fans work out across many subagents with phases and "
    "structured results. For one or two delegations, prefer plain subagent calls.",
)
"""The paragraph native's system prompt gains with the tool."""

DESCRIPTION = (
    "Run a JavaScript workflow script that orchestrates subagents at scale. Use this for "
    f"work that fans out across many independent pieces {DASH} an audit over many files, a "
    "migration, multi-angle research, adversarial verification of findings "
    f"{DASH} where you write the orchestration as a script instead of delegating turn by "
    "turn.\n\nScript-body hooks:\n"
    f"- `agent(prompt, opts?): Promise<any>` {DASH} run one subagent to completion. Without "
    "`opts.schema` it resolves to the child's final text; with `opts.schema` (an "
    "object-rooted JSON Schema using ONLY "
    "type/properties/required/additionalProperties/items/enum/const/oneOf) it resolves to "
    "the validated object. Resolves `null` when the child fails (filter with "
    "`.filter(Boolean)`). Other opts: `label` (display), `phase` (progress group), and "
    "independent `provider`/`model` LLM target overrides.\n"
    f"- `pipeline(items, ...stages): Promise<any[]>` {DASH} run each item through the stages "
    "independently with NO barrier between stages (prefer this for multi-stage work). Each "
    "stage receives `(prev, item, index)`. A stage throw drops that ITEM to `null` and "
    "skips its remaining stages.\n"
    f"- `parallel(thunks): Promise<any[]>` {DASH} run zero-argument functions concurrently "
    "and await ALL of them (a barrier; use only when a stage genuinely needs every prior "
    "result together). A throwing thunk resolves to `null`.\n"
    f"- `phase(title)` {DASH} start a progress phase; `log(message)` {DASH} narrate progress; "
    f"`args` {DASH} the tool call's `args` input, verbatim.\n\n"
    "Misused hooks (bad arguments, unknown options, unsupported schemas, tripped caps) end "
    "the whole script instead of producing `null`. The script has no filesystem, network, "
    "timer, or Node.js APIs; the agents do the work."
)


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "script": _text(
            "The plain JavaScript body, not TypeScript and without an `export const meta` "
            "statement; top-level await is allowed. End with `return <value>`; the "
            "JSON-serializable value is this tool's result."
        ),
        "meta": {
            "type": "object",
            "additionalProperties": True,
            "description": "The workflow identity as plain JSON, not code.",
            "properties": {
                "name": _text("Short kebab-case workflow name."),
                "description": _text("One-line description of what the workflow does."),
                "whenToUse": _text("Optional guidance on when this workflow applies."),
                "phases": {
                    "type": "array",
                    "description": "Optional phase declarations matched by phase() calls.",
                    "items": {
                        "type": "object",
                        "additionalProperties": True,
                        "properties": {
                            "title": _text("The phase title phase() calls match by exact string."),
                            "detail": _text("Optional one-line description of the phase."),
                            "provider": _text(
                                "Optional provider override this phase is expected to use."
                            ),
                            "model": _text(
                                "Optional model override this phase is expected to use."
                            ),
                        },
                        "required": ["title"],
                    },
                },
            },
            "required": ["name", "description"],
        },
        "args": {
            "type": "object",
            "additionalProperties": True,
            "description": "Optional JSON input exposed to the script as the `args` global "
            '(wrap a bare list as a field, e.g. {"files": [...]}).',
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Run as a background job: return a job id immediately instead of "
            "waiting; the return value arrives with the completion notice.",
        },
    },
    "required": ["script", "meta"],
}

MAX_RESULT_CHARS = 50_000
"""Native's cap on the rendered return value, in UTF-16 units (JavaScript's length)."""

NO_JOBS = NO_JOB_CONTROLLER
"""What a background run is told where the job tools are not mounted: `bash`'s words."""

META_STATEMENT = re.compile(r"^\s*export\s+const\s+meta\b")
META_IN_BODY = (
    "workflow meta rides the `meta` request field, not the script: remove the "
    "`export const meta = {...}` statement from the body"
)

_META_FIELDS = ("name", "description", "whenToUse", "phases")
_PHASE_FIELDS = ("title", "detail", "provider", "model")


def meta_violations(meta: Any) -> list[str]:
    """Every way `meta` breaks the workflow identity block, in native's order and words
    (the argument schema lets unknown fields and empty strings through; this does not)."""
    if not isinstance(meta, dict):
        return ["meta must be an object"]
    found = [
        f"meta.{key} is not a recognized field (name/description/whenToUse/phases)"
        for key in meta
        if key not in _META_FIELDS
    ]
    for key in ("name", "description"):
        if not isinstance(meta.get(key), str) or meta[key] == "":
            found.append(f"meta.{key} must be a non-empty string")
    if "whenToUse" in meta and not isinstance(meta["whenToUse"], str):
        found.append("meta.whenToUse must be a string")
    if "phases" in meta:
        if not isinstance(meta["phases"], list):
            found.append("meta.phases must be an array")
        else:
            for index, phase in enumerate(meta["phases"]):
                found += _phase_violations(index, phase)
    return found


def _phase_violations(index: int, phase: Any) -> list[str]:
    where = f"meta.phases[{index}]"
    if not isinstance(phase, dict):
        return [f"{where} must be an object"]
    found = [
        f"{where}.{key} is not a recognized field" for key in phase if key not in _PHASE_FIELDS
    ]
    if not isinstance(phase.get("title"), str) or phase["title"] == "":
        found.append(f"{where}.title must be a non-empty string")
    for key in ("detail", "provider", "model"):
        if key in phase and not isinstance(phase[key], str):
            found.append(f"{where}.{key} must be a string")
    return found


def call_problem(args: dict[str, Any]) -> str | None:
    """Why the engine refuses the call before running anything (native's order: the
    meta block, then a meta statement left in the body); None when it may run."""
    violations = meta_violations(args["meta"])
    if violations:
        return f"invalid meta: {'; '.join(violations)}"
    if META_STATEMENT.match(str(args["script"])):
        return META_IN_BODY
    return None


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf16_head(text: str, units: int) -> str:
    return text.encode("utf-16-le", "surrogatepass")[: units * 2].decode(
        "utf-16-le", "surrogatepass"
    )


def render_completed(name: str, agents: int, rendered: str, cap: int = MAX_RESULT_CHARS) -> str:
    """A completed run as the model reads it: its value as `JSON.stringify(value, null, 2)`
    spells it (`rendered`, by the guest's own V8), cut past `cap` UTF-16 units with a count
    of what was cut."""
    size = _utf16_length(rendered)
    if size > cap:
        rendered = (
            f"{_utf16_head(rendered, cap)}\n{ELLIPSIS} [truncated: {size - cap} more characters]"
        )
    plural = "" if agents == 1 else "s"
    return f'workflow "{name}" completed ({agents} agent{plural}).\nReturn value:\n{rendered}'


def render_failure(stop_reason: str, error: str | None) -> str:
    """The error a run that did not complete gives the model (after native's `Error: `)."""
    if stop_reason == "cancelled":
        return "workflow run was cancelled" + ("" if error is None else f" ({error})")
    return f"workflow run failed: {error or 'unknown error'}"


__all__ = [
    "DESCRIPTION",
    "GUIDANCE",
    "NO_JOBS",
    "PARAMETERS",
    "call_problem",
    "meta_violations",
    "render_completed",
    "render_failure",
]

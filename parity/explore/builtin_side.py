"""Hypothesis strategies for calls to the agents' own tools (`builtin: true`), and the
workspace they work on (`parity explore --builtin-tools`, docs/explore.md).

The tools are those of every family `builtin_tools` accepts (docs/scenarios.md), with
the parameters their schemas show the model (`parity.explore.builtin_tools`): each call
names its required parameters and some of the optional ones, with values that mean
something in the run's workspace (its files, a missing file, a directory, a path
outside it, a job it started) or sit at a boundary (zero, negative, huge, empty text,
the wrong type). A tool a target of the pair lacks (a declared gap) is never called.
A generated scenario's families follow from its calls, so both targets show the model
exactly those tools. Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from parity.explore.builtin_tools import MCP_RESOURCE_TOOLS, TOOLS

WORKSPACE: Mapping[str, str] = {
    "notes.txt": "hello\n",
    "lines.txt": "".join(f"line {n}\n" for n in range(1, 41)),
    "crlf.txt": "one\r\ntwo\r\n",
    "empty.txt": "",
    "sub/nested.txt": "nested hello\nnested bye\n",
    "unicode.txt": "café 日本 🙂\n",
}
"""The files every scenario with built-in calls starts with: a short file, a longer
one, CRLF line ends, an empty file, a nested one, non-ASCII text."""

PATHS = (
    *WORKSPACE,
    "missing.txt",
    "sub",
    "sub/new.txt",
    "../outside.txt",
    "/etc/hostname",
    "",
)
"""Paths a call names: the workspace's files, a file that is not there, a directory, a
new file, paths outside the workspace, and none."""

COMMANDS = (
    "cat notes.txt",
    "echo out; echo err >&2",
    "exit 3",
    "pwd",
    "ls sub",
    "printf 'no newline'",
    "cat missing.txt",
    "seq 1 3000",
    "echo written > made.txt && cat made.txt",
    "sleep 0.2; echo late",
    "",
)
"""Commands that finish by themselves, quickly, with output that does not depend on
the machine: stdout and stderr, an exit code, the working directory (masked), long
output, a write in the workspace, an empty command."""

TEXTS = ("hello", "nested hello", "line 7\n", "", "café", "two\r\n", "x" * 300)
INTS: tuple[Any, ...] = (0, 1, 2, 5, 40, 41, -1, 2**31, 1.5, "3")
"""Numbers at the edges a line window meets (first, last, past the end, negative,
huge), and two of the wrong type."""

VALUES: Mapping[str, tuple[Any, ...]] = {
    "command": COMMANDS,
    "path": PATHS,
    "text": TEXTS,
    "int": INTS,
    "bool": (True, False),
    "sandbox": ("workspace-write", "danger-full-access", "nonsense"),
    "glob": ("*.txt", "**/*", "sub/*", "*", "[", ""),
    "regex": ("hello", "^line 4", "nested|two", "(", "café", ""),
    "job": ("<job:1>", "bash-0000000000000000", ""),
    "todos": (
        [],
        [{"content": "read notes", "status": "pending"}],
        [
            {"content": "read notes", "status": "completed"},
            {"content": "edit notes", "status": "in_progress"},
        ],
        [{"content": "read notes", "status": "bogus"}],
        [{"status": "pending"}],
        "read notes",
    ),
    "dir": ("sub", "missing", "..", "/", "notes.txt", ""),
    "plan": ("# Plan\n\n1. Read notes.txt.", "no heading", ""),
    "skill": ("no-such-skill", "notes", ""),
    "queries": (["notes"], [], ["a", "b", "c", "d", "e"], "notes"),
    "url": ("http://127.0.0.1:9/", "ftp://127.0.0.1/", "not a url", ""),
    "goal": ("goal-1", ""),
    "goal_action": ("edit", "pause", "resume", "complete", "blocked", "nonsense"),
    "script": (
        "return 1",
        "return args",
        "phase('one'); log('hi'); return {ok: true}",
        "throw new Error('boom')",
        "return (",
        "",
    ),
    "meta": (
        {"name": "w", "description": "d"},
        {"name": "w", "description": "d", "phases": [{"title": "one"}]},
        {},
        "meta",
    ),
    "args": ({}, {"files": ["notes.txt"]}, [1]),
    "scope": ("children", "descendants", "nonsense"),
    "agent": ("agent-1", ""),
    "mcp_server": ("parity", "Parity", "nope", ""),
    "cursor": ("0", "2", "x", ""),
    "uri": ("file:///notes.txt", "file:///logo.png", "mem://empty", "file:///missing", ""),
}
"""Kind of value -> what a call may pass: values that mean something in the workspace
or to the tool (its files, a job the scenario started as `<job:1>`, a goal action),
values nothing answers to (a missing file, an unknown job, goal, agent or skill), and
values at a boundary or of the wrong type. A `workflow` script calls no `agent()` and
a web call reaches nothing beyond this machine: a child's model request would eat the
turn's script, and the network is no part of a scenario."""


RESOURCES: Mapping[str, Any] = {
    "page_size": 2,
    "resources": [
        {"uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain", "size": 6},
        {"uri": "file:///logo.png", "name": "logo", "title": "Logo", "mimeType": "image/png"},
        {"uri": "mem://empty", "name": "empty"},
    ],
    "templates": [{"uriTemplate": "file:///{path}", "name": "files", "mimeType": "text/plain"}],
    "contents": {
        "file:///notes.txt": [
            {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello\n"}
        ],
        "file:///logo.png": [
            {"uri": "file:///logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
        ],
        "mem://empty": [],
    },
}
"""What the harness's MCP bridge serves (`mcp_resources`) in a scenario that calls an MCP
resource tool: three resources over two pages, a template, text and blob contents, one
listed URI with nothing to read; the URIs `VALUES["uri"]` names and one it does not."""


def calls_resources(llm: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a script calls one of the MCP resource tools: its sessions then get the
    harness's MCP bridge serving `RESOURCES`, as native offers those tools only with an
    MCP server."""
    return any(
        call.get("name") in MCP_RESOURCE_TOOLS
        for entry in llm
        for call in entry.get("tool_calls") or []
        if isinstance(call, Mapping)
    )


@st.composite
def arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    """Arguments for `tool`: every required parameter (now and then one left out, which
    the agent must refuse), and a random few of the optional ones."""
    out: dict[str, Any] = {}
    params = TOOLS[tool]
    dropped = draw(st.sampled_from([None, None, None, None, *params]))
    for name, (kind, required) in params.items():
        if name == dropped or not (required or draw(st.booleans())):
            continue
        out[name] = draw(st.sampled_from(VALUES[kind]))
    return out


def callable_tools(lacking: Collection[str] = ()) -> tuple[str, ...]:
    """The tools a call may name: every built-in tool but those a target of the pair
    lacks (its table's `lacks_tools`, a declared gap: docs/explore.md)."""
    return tuple(sorted(set(TOOLS) - set(lacking)))


def builtin_call(call_id: str, lacking: Collection[str] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """One scripted call to an agent's own tool, with a fixed id; none to a `lacking`
    tool (at least one tool must be left)."""
    return st.sampled_from(callable_tools(lacking)).flatmap(
        lambda tool: arguments(tool).map(
            lambda args: {"id": call_id, "name": tool, "builtin": True, "arguments": args}
        )
    )

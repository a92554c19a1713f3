"""Hypothesis strategies for calls to the agents' own tools (`builtin: true`), and the
workspace they work on (`parity explore --builtin-tools`, docs/explore.md).

The tools are those of the `bash` and `fs` families (docs/scenarios.md, `builtin_tools`),
with the parameters their schemas show the model (native 0.2.1-rc.2's, as its recordings
show them: `parity show SCENARIO native --model`): each call names its required
parameters and some of the optional ones, with values that mean something in the run's
workspace (its files, a missing file, a directory, a path outside it) or sit at a
boundary (zero, negative, huge, empty text, the wrong type). A generated scenario's
families follow from its calls, so both targets show the model exactly those tools. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

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

TOOLS: Mapping[str, Mapping[str, tuple[str, bool]]] = {
    "bash": {
        "command": ("command", True),
        "description": ("text", False),
        "workdir": ("path", False),
        "timeoutMs": ("int", False),
    },
    "read": {"file_path": ("path", True), "offset": ("int", False), "limit": ("int", False)},
    "write": {"file_path": ("path", True), "content": ("text", True)},
    "edit": {
        "file_path": ("path", True),
        "old_string": ("text", True),
        "new_string": ("text", True),
        "replace_all": ("bool", False),
    },
}
"""Tool -> parameter -> (kind of value, required)."""

_VALUES: Mapping[str, st.SearchStrategy[Any]] = {
    "command": st.sampled_from(COMMANDS),
    "path": st.sampled_from(PATHS),
    "text": st.sampled_from(TEXTS),
    "int": st.sampled_from(INTS),
    "bool": st.booleans(),
}


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
        out[name] = draw(_VALUES[kind])
    return out


def builtin_call(call_id: str) -> st.SearchStrategy[dict[str, Any]]:
    """One scripted call to an agent's own tool, with a fixed id."""
    return st.sampled_from(sorted(TOOLS)).flatmap(
        lambda tool: arguments(tool).map(
            lambda args: {"id": call_id, "name": tool, "builtin": True, "arguments": args}
        )
    )

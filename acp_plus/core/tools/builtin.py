"""Every built-in tool acp-plus offers by default, as one list: what `builtin_tools = true`
offers (the families are in `families.py`, each tool in its family's module).

The file tools are native 0.2.1-rc.2's (their definitions, results, the
fs-observation-policy and the file sandbox); `bash` runs in an OS sandbox and asks only
when the model requests an escalation. The agent's own files are the exception native
lacks: its /proc entries and its home are refused in every mode with a tool error,
nobody asked (`sandbox.agent_private`).
"""

from __future__ import annotations

from pathlib import Path

from acp_plus.core.tools.base import Tool
from acp_plus.core.tools.families import DEFAULT_FAMILIES, ToolSetup, offered, select
from acp_plus.core.tools.job_table import JobTable


def builtin_tools(home: Path | None = None, jobs: JobTable | None = None) -> list[Tool]:
    """The built-in tools of every default family (not `ralph`), in the families' order, `bash`
    and the job tools sharing `jobs` (a table of their own when none is given); the file
    tools refuse everything under `home` (the agent's state directory), and `bash`
    cannot see it."""
    setup = ToolSetup(home=home, jobs=JobTable() if jobs is None else jobs)
    return list(offered(select(DEFAULT_FAMILIES), setup).tools)


__all__ = ["builtin_tools"]

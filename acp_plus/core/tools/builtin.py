"""Built-in tools: native's fs family (`read`, `write`, `edit`, in `fs_family.py`), its
fs-search family (`glob`, `grep`, in `fs_search.py`) and `bash` (`bash.py`), working in
the session cwd.

The file tools are native 0.2.1-rc.2's (their definitions, results, the
fs-observation-policy and the file sandbox); `bash` runs in an OS sandbox and asks only
when the model requests an escalation. The agent's own files are the exception native
lacks: its /proc entries and its home are refused in every mode with a tool error,
nobody asked (`sandbox.agent_private`).
"""

from __future__ import annotations

from pathlib import Path

from acp_plus.core.tools.base import Tool
from acp_plus.core.tools.bash import BashTool
from acp_plus.core.tools.fs_family import fs_tools
from acp_plus.core.tools.fs_search import fs_search_tools


def builtin_tools(home: Path | None = None) -> list[Tool]:
    """The built-in tools, in the order the model sees them; the file tools refuse
    everything under `home` (the agent's state directory), and `bash` cannot see it."""
    homes = () if home is None else (home,)
    return [*fs_tools(home), *fs_search_tools(), BashTool(homes)]


__all__ = ["builtin_tools"]

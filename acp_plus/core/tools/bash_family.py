"""The `bash` family as native mounts it: the tool (`bash.py`) and the paragraph the
system prompt carries for it.

`bash` and the job tools (`jobs_family.py`) share one `JobTable`: every `bash` call is a
job of it, so the factory takes the table the job tools read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp_plus.core.tools.base import Tool
from acp_plus.core.tools.bash import BashTool
from acp_plus.core.tools.job_table import JobTable

BASH_GUIDANCE: tuple[str, ...] = (
    "Check the [exit code: N] marker on every bash result; investigate failures before moving on.",
)
"""The system-prompt paragraphs native adds with `bash` (its `tool:bash` section)."""


def bash_tools(
    jobs: JobTable, homes: Sequence[Path] = (), *, background: bool = True
) -> list[Tool]:
    """The family's tools: `bash`, running its commands as jobs of `jobs`; it cannot see
    `homes` (the agent's state directories). `background` False: the jobs family is not
    mounted, so no command runs in the background (`BashTool`)."""
    return [BashTool(jobs, homes, background=background)]


__all__ = ["BASH_GUIDANCE", "bash_tools"]

"""The built-in tool families: which of acp-plus's own tools a session's model is shown,
and the system-prompt guidance that comes with them.

Native mounts its built-in tools as groups of composition rows, each with its own
guidance paragraphs in the system prompt; acp-plus's `builtin_tools` setting names the
same groups (docs/acp-plus.md, "Built-in tools"). `FAMILIES` is native's vocabulary in
native 0.2.1-rc.2's guidance order (its prompt sections: bash, read, write, edit, glob,
grep, jobs, web, goal, workflow, ralph, subagent; the other families add no guidance).
A family acp-plus does not implement yet has no factory: asking for it offers nothing
(`offered` reports it, the caller says so), so a comparison with native shows the gap.

Adding a family's implementation is one row: its factory (tools from a `ToolSetup`)
and its guidance (paragraphs, or a function of every built-in tool name offered, for
native's paragraphs that depend on another family's tool).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_plus.core.subagents import Subagents
    from acp_plus.core.tools.base import Tool
    from acp_plus.core.tools.goal_family import GoalBook
    from acp_plus.core.tools.job_table import JobTable


@dataclass(frozen=True)
class ToolSetup:
    """What a family's factory may build its tools from (the process's, not a session's)."""

    home: Path | None = None
    """acp-plus's state directory: the file tools refuse it, `bash` cannot see it."""
    jobs: JobTable | None = None
    """The background jobs `bash` starts and the job tools read (one table a process)."""
    goals: GoalBook | None = None
    """The live sessions' goals the goal tools read and change (one book a process)."""
    subagents: Subagents | None = None
    """The child agents the `subagent` tools, workflow runs and ralph's rounds start
    (one service a process)."""
    families: frozenset[str] = frozenset()
    """The families offered with this one (`offered` sets it): `bash` runs in the
    background only beside `jobs`, as native's job controller comes with the job tools."""


Guidance = Sequence[str] | Callable[[Collection[str]], Sequence[str]]
"""A family's system-prompt paragraphs, or a function of the offered built-in tool names
to them (native words a paragraph by what else is mounted)."""


@dataclass(frozen=True)
class Family:
    """One family: its name (native's), its tools' factory (None: not implemented), and
    the guidance paragraphs its tools bring into the system prompt."""

    name: str
    tools: Callable[[ToolSetup], Sequence[Tool]] | None = None
    guidance: Guidance = ()
    default: bool = True
    """Offered by `builtin_tools = true`: False for a family the reference native
    (0.2.1-rc.2) does not mount, offered only when named."""

    def paragraphs(self, offered: Collection[str]) -> Sequence[str]:
        """This family's guidance, given every built-in tool name offered."""
        return self.guidance(offered) if callable(self.guidance) else self.guidance


def _homes(setup: ToolSetup) -> tuple[Path, ...]:
    return () if setup.home is None else (setup.home,)


def _jobs(setup: ToolSetup) -> JobTable:
    assert setup.jobs is not None  # `offered` gives every selection one table
    return setup.jobs


def _bash(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.bash_family import bash_tools

    return bash_tools(_jobs(setup), _homes(setup), background="jobs" in setup.families)


def _bash_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.bash_family import BASH_GUIDANCE

    return BASH_GUIDANCE


def _job_tools(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.jobs_family import job_tools

    return job_tools(_jobs(setup))


def _jobs_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.jobs_family import JOBS_GUIDANCE

    return JOBS_GUIDANCE


def _todo(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.todo_family import todo_tools

    return todo_tools()


def _skill(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.skill_family import skill_tools

    return skill_tools(setup.home)


def _goal(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.goal_family import goal_tools

    assert setup.goals is not None  # `offered` gives every selection one book
    return goal_tools(setup.goals)


def _goal_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.goal_family import GOAL_GUIDANCE

    return GOAL_GUIDANCE


def _fs(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.fs_family import fs_tools
    from acp_plus.core.tools.read_image import read_image_tools

    tools = fs_tools(setup.home)
    return [*tools, *read_image_tools(tools[0])]


def _fs_search(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.fs_search import fs_search_tools

    return fs_search_tools()


def _fs_search_guidance(offered: Collection[str]) -> Sequence[str]:
    """Native's grep paragraph points to `read` only when `read` is offered."""
    from acp_plus.core.tools.fs_search import FS_SEARCH_GUIDANCE

    if "read" in offered:
        return FS_SEARCH_GUIDANCE
    glob, grep = FS_SEARCH_GUIDANCE
    return (glob, grep.split(" Use read ")[0])


def _fs_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.fs_family import FS_GUIDANCE

    return FS_GUIDANCE


def _workflow(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.tools.workflow_family import workflow_tools

    jobs = _jobs(setup) if "jobs" in setup.families else None
    return workflow_tools(_homes(setup), jobs, setup.subagents)


def _workflow_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.workflow_text import GUIDANCE

    return GUIDANCE


def _ralph(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.subagents import Subagents
    from acp_plus.core.tools.ralph_family import ralph_tools

    return ralph_tools(setup.subagents or Subagents())


def _ralph_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.ralph_family import RALPH_GUIDANCE

    return RALPH_GUIDANCE


def _subagent(setup: ToolSetup) -> Sequence[Tool]:
    from acp_plus.core.subagents import Subagents
    from acp_plus.core.tools.subagent_family import subagent_tools

    return subagent_tools(setup.subagents or Subagents())


def _subagent_guidance(offered: Collection[str]) -> Sequence[str]:
    from acp_plus.core.tools.subagent_family import subagent_guidance

    return subagent_guidance(offered)


FAMILIES: tuple[Family, ...] = (
    Family("bash", _bash, _bash_guidance),
    Family("fs", _fs, _fs_guidance),
    Family("fs-search", _fs_search, _fs_search_guidance),
    Family("jobs", _job_tools, _jobs_guidance),
    Family("todo", _todo),
    Family("working-directory"),
    Family("plan-mode"),
    Family("skill", _skill),
    Family("web"),
    Family("goal", _goal, _goal_guidance),
    Family("workflow", _workflow, _workflow_guidance),
    Family("ralph", _ralph, _ralph_guidance, default=False),  # 0.1.0-rc.8's alone
    Family("subagent", _subagent, _subagent_guidance),
    Family("hooks"),
)
"""Every family native has, in its guidance order; those with a factory are acp-plus's."""

FAMILY_NAMES: tuple[str, ...] = tuple(family.name for family in FAMILIES)
IMPLEMENTED: tuple[str, ...] = tuple(f.name for f in FAMILIES if f.tools is not None)
"""The families acp-plus implements, each offered when `builtin_tools` names it."""
DEFAULT_FAMILIES: tuple[str, ...] = tuple(
    f.name for f in FAMILIES if f.tools is not None and f.default
)
"""The families `builtin_tools = true` offers: native 0.2.1-rc.2's (the reference's)."""


def select(names: Collection[str]) -> tuple[Family, ...]:
    """The named families in `FAMILIES` order (names are checked by the config)."""
    return tuple(family for family in FAMILIES if family.name in names)


@dataclass(frozen=True)
class Offer:
    """What a selection of families gives the model: the tools, the guidance paragraphs
    (in native's order), and the families asked for that acp-plus does not implement."""

    tools: tuple[Tool, ...]
    guidance: tuple[str, ...]
    missing: tuple[str, ...]


def offered(families: Sequence[Family], setup: ToolSetup) -> Offer:
    """Build the tools of `families` and their guidance. A family without a factory
    offers nothing and no guidance (native's guidance speaks of tools it would not
    have); it is listed in `missing`."""
    if setup.jobs is None:  # `bash` and the job tools must share one table
        from acp_plus.core.tools.job_table import JobTable

        setup = replace(setup, jobs=JobTable())
    if setup.goals is None:
        from acp_plus.core.tools.goal_family import GoalBook

        setup = replace(setup, goals=GoalBook())
    setup = replace(setup, families=frozenset(family.name for family in families))
    tools: list[Tool] = []
    for family in families:
        if family.tools is not None:
            tools.extend(family.tools(setup))
    names = frozenset(tool.name for tool in tools)
    guidance = [
        paragraph
        for family in families
        if family.tools is not None
        for paragraph in family.paragraphs(names)
        if paragraph
    ]
    missing = tuple(f.name for f in families if f.tools is None)
    return Offer(tuple(tools), tuple(guidance), missing)

"""A throwaway project driven by the real `parity`, for the suite, CLI and report tests.

A `Project` is a temp directory with its own `parity.toml` (targets running the stdlib
mini agent, `tests/fixtures/agents/mini_agent.py`), `scenarios/` and `snapshots/`. Tests
run the real plugin through a child pytest or the real CLI, as a user would.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

from tests.support.forked_cli import run_cli

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "mini_agent.py"

TEXT_SCENARIO = """\
description: a text turn through the mini agent
targets: [mini, mini-b]
llm:
  - text: hello there
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: say hello}
"""


def mini_target(name: str, agent: Path = AGENT, extra_env: str = "") -> str:
    """A `[targets.<name>]` table running `agent` against the run's parity-stream base."""
    env = '{ PARITY_BASE = "{llm_base}"' + (f", {extra_env}" if extra_env else "") + " }"
    return textwrap.dedent(
        f"""\
        [targets.{name}]
        family = "peer"
        dialect = "parity-stream"
        fixture_tools = "stream"
        command = ["{{python}}", "{agent}"]
        env = {env}
        """
    )


GHOST = """\
[targets.ghost]
family = "dsh"
dialect = "parity-stream"
fixture_tools = "stream"
command = ["ghost-agent"]
requires = [{ command = "ghost-agent", reason = "ghost-agent is not installed here" }]
"""


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child pytest/CLI: no inherited CI or xdist worker state, and
    no native at all (PARITY_DSH=off: not a developer's DSH, nor the wheel in the venv, which
    only some platforms have), so a test project is the same on every machine; a test that
    wants a native passes it in `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "CI"))
        and k not in ("COV_CORE_SOURCE", "PARITY_DSH", "PARITY_DSH_RC8", "PARITY_NODE")
    }
    env["PARITY_DSH"] = "off"
    env.update(extra)
    return env


@dataclass
class Project:
    root: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def parity(
        self,
        *args: str,
        ci: bool = False,
        timeout: float = 120,
        verbose: bool = True,
        **env: str,
    ) -> subprocess.CompletedProcess[str]:
        """Run the `parity` CLI in the project (`ci`: with CI=true; `env`: extra or
        replaced variables, e.g. PATH). `run` and `record` get `-v` unless `verbose` is
        False or `-q` is given: most tests read the per-item lines (`::mini PASSED`),
        which the default output leaves out."""
        if verbose and args and args[0] in ("run", "record") and "-q" not in args:
            args = (args[0], "-v", *args[1:])
        # Forked from a process that has imported the harness (tests/support/forked_cli.py):
        # the same command, without paying its interpreter's start-up on every call.
        return run_cli(args, self.root, child_env(**env, **({"CI": "true"} if ci else {})), timeout)

    def snapshot(self, scenario: str, target: str) -> Path:
        return self.root / "snapshots" / scenario / f"{target}.yaml"

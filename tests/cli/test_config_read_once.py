"""Every command reads the project's `parity.toml` once: `parity run` hands the
configuration it read to the pytest plugin (`GivenConfig`), `parity validate` to its
per-file project lookup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.config import load_config
from parity.suite.options import GivenConfig, given_config
from tests.support.project import Project, child_env

COUNTED = """
import sys
import parity.config
from parity.cli.main import main

reads = []
original = parity.config.project_table


def counted(root):
    reads.append(root)
    return original(root)


parity.config.project_table = counted
status = main(sys.argv[1:])
print("reads", len(reads), "status", status, file=sys.stderr)
"""


def test_the_plugin_takes_a_given_configuration(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert given_config([object(), GivenConfig(config)]) is config
    assert given_config([object()]) is None


@pytest.mark.parametrize("command", [("record", "demo/text"), ("validate",)], ids=lambda c: c[0])
def test_a_command_reads_parity_toml_once(project: Project, command: tuple[str, ...]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", COUNTED, *command],
        cwd=project.root,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stderr.splitlines()[-1:] == ["reads 1 status 0"], done.stdout + done.stderr

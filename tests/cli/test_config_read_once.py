"""Every command reads the project's `parity.toml` once: `parity run` hands the
configuration it read to the pytest plugin (`GivenConfig`), the plugin to its xdist
workers (`Config.to_dict` in their `workerinput`), `parity validate` to its per-file
project lookup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.config.project import Config, load_config
from parity.suite.options import GivenConfig, given_config
from tests.support.project import Project, child_env

COUNTED = """
import sys
import parity.config.project
from parity.cli.main import main

reads = []
original = parity.config.project.project_table


def counted(root):
    reads.append(root)
    return original(root)


parity.config.project.project_table = counted
status = main(sys.argv[1:])
print("reads", len(reads), "status", status, file=sys.stderr)
"""


def test_the_plugin_takes_a_given_configuration(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert given_config([object(), GivenConfig(config)]) is config
    assert given_config([object()]) is None


WORKER_READS = """
import os
import parity.config.project

original = parity.config.project.project_table


def counted(root):
    with open(os.environ["PARITY_READS"], "a") as out:
        out.write(f"read {os.getpid()}\\n")
    return original(root)


parity.config.project.project_table = counted


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        with open(os.environ["PARITY_READS"], "a") as out:
            out.write(f"worker {os.getpid()}\\n")
"""
"""A pytest plugin (`-p`) counting the reads of every process it loads in: xdist
workers load the controller's `-p` plugins before the parity plugin configures them."""


def test_a_configuration_survives_plain_data(project: Project) -> None:
    config = load_config(project.root)
    again = Config.from_dict(config.to_dict())
    assert again == config
    assert again.targets["mini"] == config.targets["mini"]


def test_xdist_workers_take_the_controllers_configuration(project: Project) -> None:
    """`parity record -n 2`: the controller reads parity.toml once, its workers never."""
    project.write("count_reads.py", WORKER_READS)
    reads = project.root / "reads.txt"
    env = child_env(PARITY_READS=str(reads), PYTHONPATH=str(project.root))
    command = ["record", "demo/text", "-n", "2", "--", "-p", "count_reads"]
    done = subprocess.run(
        [sys.executable, "-c", COUNTED, *command],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.stderr.splitlines()[-1:] == ["reads 1 status 0"], done.stdout + done.stderr
    lines = reads.read_text().splitlines()
    assert sorted(line.split()[0] for line in lines) == ["worker", "worker"], lines


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

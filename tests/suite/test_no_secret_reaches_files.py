"""A real `parity record` and `parity run` with twenty credentials exported: none of
them reaches a snapshot, report, JUnit/JSON file, the session cache or a run directory,
though the agent prints its whole environment to stderr, a tool result and a file."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from tests.support.project import Project, mini_target
from tests.support.secrets import files_under, markers_in, secret_env

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "prints_environment.py"

SCENARIO = """\
description: an agent that prints its environment
targets: [envy]
expect_files: [env.txt]
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: show me your environment}
"""


def test_exported_credentials_reach_no_file_the_harness_wrote(project: Project) -> None:
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("envy", AGENT, extra_env='OWN_MARKER = "own-var-9c2e"'))
    project.write("scenarios/demo/env.yaml", SCENARIO)
    tmp = project.root / "tmp"  # run directories are made here (tempfile honours TMPDIR)
    tmp.mkdir()
    secrets = secret_env()
    record = project.parity("record", "demo/env", TMPDIR=str(tmp), **secrets)
    assert record.returncode == 0, record.stdout + record.stderr
    done = project.parity(
        "run",
        "demo/env",
        "--report",
        "report",
        "--junit",
        "junit.xml",
        "--json",
        "summary.json",
        TMPDIR=str(tmp),
        **secrets,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    files = files_under(project.root)
    snapshot = project.snapshot("demo/env", "envy")
    assert snapshot in files and (project.root / "summary.json") in files
    assert "own-var-9c2e" in snapshot.read_text()  # the agent did print what it got
    assert markers_in(files, secrets.values()) == []
    assert not any(v in done.stdout + done.stderr for v in secrets.values())


HOSTILE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "reads_harness_environment.py"
)


def test_a_canary_in_the_harness_environment_reaches_no_file_of_a_hostile_run(
    project: Project,
) -> None:
    """The agent reads the harness's own `/proc/<pid>/environ` (blanked at start,
    `parity.driver.guard`; not even readable unless the agent runs as root) and prints
    its own environment (an explicit allow-list: a variable named like a locale
    category, `LC_*`, is not one). Neither canary reaches a snapshot, report or output
    (issue 33)."""
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("nosy", HOSTILE))
    project.write("scenarios/demo/nosy.yaml", SCENARIO.replace("envy", "nosy"))
    canaries = {
        "PARITY_CANARY_TOKEN": f"canary-{uuid.uuid4().hex}",
        "LC_PARITY_CANARY": f"canary-lc-{uuid.uuid4().hex}",
    }
    record = project.parity("record", "demo/nosy", **canaries)
    assert record.returncode == 0, record.stdout + record.stderr
    done = project.parity("run", "demo/nosy", "--report", "report", "--json", "s.json", **canaries)
    assert done.returncode == 0, done.stdout + done.stderr
    snapshot = project.snapshot("demo/nosy", "nosy").read_text()
    # It did try: as root it reads the blanked block, as anyone else it may not read it.
    assert re.search(r"harness environ: (blank|unreadable: PermissionError)", snapshot)
    files = files_under(project.root)
    assert markers_in(files, canaries.values()) == []
    for out in (record, done):
        assert not any(v in out.stdout + out.stderr for v in canaries.values())

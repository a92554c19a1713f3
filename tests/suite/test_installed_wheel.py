"""A wheel of this project is a complete harness: docs/own-agent.md, followed in a
temporary directory outside the repository with a freshly built wheel.

The wheel is installed in a fresh venv (`tests.support.wheel`: no download, this venv's
packages as its dependencies, never this checkout). There: `parity init NAME -- CMD`,
`parity validate`, `parity record --suite acp --targets +NAME`, `parity run` of the same
on two xdist workers, then a snapshot broken by hand fails a run with `--report`, and
`parity review --from` the report directory accepts the new one. The agent is
tests/fixtures/agents/chat_agent.py, copied as the user's own `my_agent.py`.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from parity.config.suites import SUITES
from tests.support.project import child_env
from tests.support.wheel import ROOT, Installed, build_wheel, install_wheel

DOC = ROOT / "docs" / "own-agent.md"
AGENT = ROOT / "tests" / "fixtures" / "agents" / "chat_agent.py"
SUITE = ("--suite", "acp", "--targets", "+my-agent")
JOINS = ["cancel-stream", "fixture-tool", "permission-reject", "text-turn"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel")
    return install_wheel(build_wheel(tmp), tmp / "venv")


def parity(inst: Installed, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = child_env()
    env.pop("ACP_PARITY_SCHEMA", None)
    env["PATH"] = f"{inst.bin}:{env['PATH']}"
    return subprocess.run(
        [str(inst.bin / "parity"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_wheel_carries_what_the_engine_reads(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert "parity/schema/acp/schema.json" in names
    assert "parity/targets/targets.toml" in names
    for folder in SUITES["acp"]:
        for scenario in (ROOT / "scenarios" / folder).glob("*.yaml"):
            assert f"parity/suites/acp/scenarios/{folder}/{scenario.name}" in names
        for recording in (ROOT / "snapshots" / folder).rglob("*.yaml"):
            assert f"parity/suites/acp/{recording.relative_to(ROOT)}" in names
    assert "parity/suites/acp/known-differences.yaml" in names
    # An editor finds the scenario schema from a shipped scenario's `$schema` comment.
    shipped = installed.site_packages / "parity/suites/acp/scenarios/peers"
    for scenario in shipped.glob("*.yaml"):
        schema = re.search(r"\$schema=(\S+)", scenario.read_text())
        assert schema and (scenario.parent / schema[1]).resolve().is_file(), scenario
    metadata = zipfile.ZipFile(installed.wheel).read("acp_parity-0.1.0.dist-info/METADATA")
    runtime = re.findall(r"^Requires-Dist: ([\w-]+)[^;\n]*$", metadata.decode(), flags=re.M)
    assert {"pytest-xdist", "hypothesis", "pytest-split"} <= set(runtime)
    # setup.py copies the suites parity.config.suites names.
    tree = ast.parse((ROOT / "setup.py").read_text())
    (copied,) = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "SUITES"
    ]
    assert copied == SUITES


def test_the_documented_walkthrough_outside_the_repository(
    installed: Installed, tmp_path: Path
) -> None:
    doc = DOC.read_text()
    home = tmp_path / "my-agent-repo"
    home.mkdir()
    shutil.copy(AGENT, home / "my_agent.py")

    init = parity(installed, home, "init", "my-agent", "--", "python3", "my_agent.py")
    assert "parity init my-agent -- python3 my_agent.py" in doc
    assert init.returncode == 0, init.stdout + init.stderr
    assert parity(installed, home, "validate").returncode == 0

    # The package's own files, not this checkout's: the schema and the suite.
    where = subprocess.run(
        [str(installed.bin / "python"), "-c", "import parity; print(parity.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
        cwd=home,
    ).stdout
    assert where.startswith(str(installed.site_packages)), where

    assert "parity record --suite acp --targets +my-agent" in doc
    record = parity(installed, home, "record", *SUITE, "-v")
    assert record.returncode == 0, record.stdout + record.stderr
    for name in JOINS:
        assert (home / "parity-suites/acp/peers" / name / "my-agent.yaml").is_file()
    assert not (home / "parity-suites/acp/peers/text-turn/codex-acp.yaml").exists()
    assert "ACP schema not found" not in record.stdout

    assert "parity run --suite acp --targets +my-agent" in doc
    run = parity(installed, home, "run", *SUITE, "-n", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "parity[my-agent~codex-acp]" not in run.stdout  # -q: no item lines
    assert re.search(r"my-agent +4 +- +4 pass +4 same vs codex-acp", run.stdout), run.stdout

    # A snapshot that no longer matches: the run fails and leaves the new one pending in
    # its report; `review --from` the report directory accepts it.
    snap = home / "parity-suites/acp/peers/text-turn/my-agent.yaml"
    good = snap.read_text()
    snap.write_text(good.replace("stopReason: end_turn", "stopReason: max_tokens", 1))
    assert snap.read_text() != good
    broken = parity(installed, home, "run", *SUITE, "peers/text-turn", "--report", "report")
    assert broken.returncode == 1, broken.stdout
    assert (home / "report/pending/peers/text-turn/my-agent.yaml").is_file()
    assert "--from report" in doc
    review = parity(installed, home, "review", *SUITE, "--from", "report", "--accept-all")
    assert review.returncode == 0, review.stdout + review.stderr
    # The run's own snapshot, accepted: the recording as `record` wrote it.
    assert snap.read_text() == good


def test_a_scenario_outside_the_project_is_refused_with_the_reason(
    installed: Installed, tmp_path: Path
) -> None:
    home = tmp_path / "proj"
    home.mkdir()
    assert parity(installed, home, "init").returncode == 0
    elsewhere = tmp_path / "elsewhere" / "peers"
    shutil.copytree(ROOT / "scenarios" / "peers", elsewhere)
    for args in ([str(elsewhere)], [str(elsewhere / "text-turn.yaml")]):
        done = parity(installed, home, "run", *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "is outside the project's scenarios directory" in done.stderr
        assert "no tests ran" not in done.stdout

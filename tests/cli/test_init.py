"""`parity init` in an empty directory: parity.toml, a first scenario, a CI workflow; with
`NAME -- CMD ARGS...` the agent's target table too. What it writes validates, the agent
it declares runs the first scenario, and the workflow passes actionlint."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import yaml

from tests.cli.test_ci_workflows import actionlint
from tests.support.project import Project

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "tests" / "fixtures" / "agents" / "chat_agent.py"


def test_init_without_an_agent_writes_a_project_that_validates(tmp_path: Path) -> None:
    proj = Project(tmp_path / "empty")
    proj.root.mkdir()
    done = proj.parity("init")
    assert done.returncode == 0, done.stderr
    for rel in ("parity.toml", "scenarios/first/hello.yaml", ".github/workflows/parity.yml"):
        assert f"wrote {rel}" in done.stdout and (proj.root / rel).is_file()
    assert yaml.safe_load((proj.root / "scenarios/first/hello.yaml").read_text())["targets"] == [
        "plus"
    ]
    valid = proj.parity("validate")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "0 error(s)" in valid.stdout
    # The workflow is one GitHub accepts; without an agent it runs the project's scenarios.
    lint = actionlint(proj.root / ".github/workflows/parity.yml")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "--suite acp" not in (proj.root / ".github/workflows/parity.yml").read_text()
    # A second init keeps what is there.
    (proj.root / "parity.toml").write_text("# mine\n")
    again = proj.parity("init")
    assert "parity.toml exists, left as it is" in again.stdout
    assert (proj.root / "parity.toml").read_text() == "# mine\n"


def test_init_with_an_agent_declares_it_and_its_first_scenario_runs(tmp_path: Path) -> None:
    proj = Project(tmp_path / "agent")
    proj.root.mkdir()
    shutil.copy(AGENT, proj.root / "chat_agent.py")
    done = proj.parity("init", "chat-agent", "--", "python3", "chat_agent.py", "--flag")
    assert done.returncode == 0, done.stderr
    table = tomllib.loads((proj.root / "parity.toml").read_text())["targets"]["chat-agent"]
    # A file of the project is found from any run's fresh working directory.
    assert table["command"] == ["python3", "{repo}/chat_agent.py", "--flag"]
    assert table["family"] == "peer" and table["dialect"] == "openai-chat"
    scenario = yaml.safe_load((proj.root / "scenarios/first/hello.yaml").read_text())
    assert scenario["targets"] == ["chat-agent"]
    assert proj.parity("validate").returncode == 0
    workflow = (proj.root / ".github/workflows/parity.yml").read_text()
    assert "parity run -n auto --suite acp --targets +chat-agent" in workflow
    assert actionlint(proj.root / ".github/workflows/parity.yml").returncode == 0
    record = proj.parity("record", "-q")
    assert record.returncode == 0, record.stdout + record.stderr
    assert (proj.root / "snapshots/first/hello/chat-agent.yaml").is_file()


def test_init_refuses_a_name_without_a_command_and_a_bad_name(tmp_path: Path) -> None:
    proj = Project(tmp_path / "bad")
    proj.root.mkdir()
    alone = proj.parity("init", "my-agent")
    assert alone.returncode == 2 and "parity init NAME -- CMD ARGS" in alone.stderr
    bad = proj.parity("init", "My Agent", "--", "x")
    assert bad.returncode == 2
    assert not any(proj.root.iterdir())
    # An unknown suite is a usage error that names the shipped ones.
    nope = proj.parity("run", "--suite", "nope")
    assert nope.returncode == 2 and "no suite 'nope': the package ships acp" in nope.stderr

"""docs/targets.md's own-agent walkthrough, run as written.

The `[targets.chat-agent]` table is parsed out of the page itself (so the page and this
test cannot drift apart) and is the whole `parity.toml` of a throwaway copy of the
project: the peers scenarios and snapshots, the known differences and the example agent
at its documented path. The peers cannot run there (no `.cache/peers`), so their
recordings stand in, as on a user's machine without them. Then, through the real CLI:
`parity run scenarios/peers --targets +chat-agent`, `parity record` with the same
targets, and `parity run` again.

Asserted: the agent starts, it joins every peers scenario but the one that scripts
opencode's own tool, each runs without run problems, `record` writes its snapshots (and
leaves the peers' recordings alone), a second run matches them, and every parity check
passes: what ACP leaves to each agent is declared once for the peer family
(`known-differences.yaml`), and the example agent needs nothing but its table.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from tests.support.project import Project

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "targets.md"
AGENT = Path("tests/fixtures/agents/chat_agent.py")
JOINS = ["peers/cancel-stream", "peers/fixture-tool", "peers/permission-reject", "peers/text-turn"]
"""Every peers scenario but `opencode-write`, which calls opencode's own `write` tool."""


def documented_table() -> str:
    """The one ```toml block of docs/targets.md that declares `chat-agent`."""
    blocks = re.findall(r"^```toml\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)
    (table,) = [b for b in blocks if "[targets.chat-agent]" in b]
    return str(table)


def _status(out: str, item: str) -> str | None:
    found = re.search(rf"^scenarios/{re.escape(item)} (PASSED|FAILED|SKIPPED)", out, flags=re.M)
    return found.group(1) if found else None


def _joined(out: str) -> list[str]:
    """The scenarios chat-agent was added to, as the verbose lines name them."""
    return sorted(set(re.findall(r"^scenarios/(\S+)\.yaml::chat-agent ", out, flags=re.M)))


def _section(out: str, scenario: str) -> str:
    """The failure section of `scenario`'s chat-agent item ('' when there is none)."""
    parts = re.split(r"^_{3,} (\S+) _{3,}$", out, flags=re.M)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    return sections.get(f"{scenario}::chat-agent", "")


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, str, str]:
    proj = Project(tmp_path_factory.mktemp("walkthrough") / "proj")
    for part in ("scenarios/peers", "snapshots/peers"):
        shutil.copytree(ROOT / part, proj.root / part)
    shutil.copy(ROOT / "known-differences.yaml", proj.root / "known-differences.yaml")
    (proj.root / AGENT).parent.mkdir(parents=True)
    shutil.copy(ROOT / AGENT, proj.root / AGENT)
    proj.write("parity.toml", documented_table())
    args = ("scenarios/peers", "--targets", "+chat-agent")
    first = proj.parity("run", *args, timeout=600)
    record = proj.parity("record", *args, timeout=600)
    again = proj.parity("run", *args, timeout=600)
    return proj, first.stdout, record.stdout, again.stdout


def test_the_documented_table_is_a_plain_target_table() -> None:
    table = tomllib.loads(documented_table())["targets"]["chat-agent"]
    assert table["command"] == ["{python}", f"{{repo}}/{AGENT}"]
    assert (ROOT / AGENT).is_file()


def test_the_agent_starts_and_each_scenario_runs_without_run_problems(
    walked: tuple[Project, str, str, str],
) -> None:
    _, first, _, _ = walked
    joined = _joined(first)
    assert joined == JOINS, first
    for scenario in joined:
        status = _status(first, f"{scenario}.yaml::chat-agent")
        section = _section(first, scenario)
        # Not recorded yet, so the item skips, unless the run had problems.
        assert status == "SKIPPED", section or first
    assert "agent exited during initialize" not in first


def test_record_writes_its_snapshots_and_leaves_the_peers_recordings(
    walked: tuple[Project, str, str, str],
) -> None:
    proj, first, record, _ = walked
    for scenario in _joined(first):
        assert _status(record, f"{scenario}.yaml::chat-agent") == "PASSED", record
        view = proj.snapshot(scenario, "chat-agent").read_text()
        assert "do: initialize" in view and "stopReason" in view
    for recorded in (ROOT / "snapshots" / "peers").rglob("*.yaml"):
        copy = proj.root / recorded.relative_to(ROOT)
        assert copy.read_text() == recorded.read_text(), copy


def test_a_second_run_matches_the_recording_and_every_parity_check_compares(
    walked: tuple[Project, str, str, str],
) -> None:
    _, first, _, again = walked
    for scenario in _joined(first):
        assert _status(again, f"{scenario}.yaml::chat-agent") == "PASSED", again
        compared = re.findall(
            rf"^scenarios/{re.escape(scenario)}\.yaml::parity\[chat-agent~\S+\] (\w+)",
            again,
            flags=re.M,
        )
        assert compared and set(compared) == {"PASSED"}, again
    assert " 0 did not run" in again


@pytest.mark.parametrize("variant", ["CHAT_AGENT_NO_COMMANDS", "CHAT_AGENT_CHATTY"])
def test_what_acp_leaves_to_the_agent_passes_too(tmp_path: Path, variant: str) -> None:
    """ACP leaves `available_commands_update`, a welcome message, a plan and a session
    title to the agent: an agent without commands (the peers scenarios' wait for them is
    optional) or with all the rest passes what the example agent passes."""
    proj = Project(tmp_path / "proj")
    for part in ("scenarios/peers", "snapshots/peers"):
        shutil.copytree(ROOT / part, proj.root / part)
    shutil.copy(ROOT / "known-differences.yaml", proj.root / "known-differences.yaml")
    (proj.root / AGENT).parent.mkdir(parents=True)
    shutil.copy(ROOT / AGENT, proj.root / AGENT)
    table = documented_table().replace(
        'OPENAI_API_KEY = "sk-fake"', f'OPENAI_API_KEY = "sk-fake", {variant} = "1"'
    )
    assert variant in table
    proj.write("parity.toml", table)
    done = proj.parity("run", "scenarios/peers", "--targets", "+chat-agent", timeout=600)
    compared = re.findall(r"::parity\[chat-agent~\S+\] (\w+)", done.stdout)
    assert len(compared) == len(JOINS) and set(compared) == {"PASSED"}, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr

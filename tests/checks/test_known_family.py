"""Family-wide known differences: what ACP leaves to each agent, declared once.

An entry with `family: peer` applies to every comparison between two peers (a user's
own `--targets +NAME` included, by its family, never by its name), pins one side,
`each`, often as an ACP schema definition (`{acp: ToolKind}`), and never applies across
families.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parity.checks.acp_schema import def_names
from parity.checks.diff import compare
from parity.checks.differences import DRIFT
from parity.checks.known_ledger import Use, judge, ledger_lines
from parity.config.project import load_config
from parity.scenario.known import check_known_text, load_known
from parity.scenario.model import Rule
from parity.view.dump import load_view

REPO = Path(__file__).resolve().parents[2]
FAMILIES = {"codex-acp": "peer", "my-agent": "peer", "native": "dsh", "plus": "dsh"}
KIND = """\
differences:
  - id: kind
    family: peer
    path: steps[*].updates[*].tool_call.kind
    sides: {each: {acp: ToolKind}}
    reason: ToolCall.kind is the agent's own (ACP schema ToolKind)
"""


def view(kind: str | None) -> dict[str, Any]:
    call: dict[str, Any] = {"sessionUpdate": "tool_call", "toolCallId": "call-1"}
    if kind is not None:
        call["kind"] = kind
    return {"steps": [{"updates": [{"tool_call": call}]}]}


def diff(
    ref: Any, other: Any, names: tuple[str, str], known: list[Rule], scenario: str = "peers/x"
) -> Any:
    return compare(
        ref,
        other,
        profile="semantic",
        diverge=[],
        ref_name=names[0],
        other_name=names[1],
        scenario=scenario,
        known=known,
    )


def test_a_family_entry_holds_for_any_two_targets_of_the_family() -> None:
    findings, known = check_known_text(KIND, "k.yaml", FAMILIES, def_names())
    assert findings == []
    report = diff(view("read"), view("other"), ("codex-acp", "my-agent"), known)
    assert report.ok and report.known_used == ["kind"]
    assert diff(view(None), view("execute"), ("codex-acp", "my-agent"), known).ok


def test_a_side_outside_the_acp_definition_is_drift() -> None:
    _, known = check_known_text(KIND, "k.yaml", FAMILIES, def_names())
    report = diff(view("read"), view("reading"), ("codex-acp", "my-agent"), known)
    assert [d.category for d in report.differences] == [DRIFT]
    assert "known difference 'kind', my-agent side" in report.differences[0].detail


def test_it_never_applies_across_families() -> None:
    _, known = check_known_text(KIND, "k.yaml", FAMILIES, def_names())
    report = diff(view("read"), view("other"), ("native", "my-agent"), known)
    assert not report.ok and report.known_applied == []


def test_a_family_entry_is_checked_for_its_shape() -> None:
    text = KIND.replace("{each: {acp: ToolKind}}", "{codex-acp: absent, each: {acp: ToolKnd}}")
    text += "    versions: '==1'\n"
    findings, _ = check_known_text(text, "k.yaml", FAMILIES, def_names())
    messages = [f.message for f in findings]
    assert any("codex-acp" in m and "one side" in m for m in messages), messages
    assert any("defines no 'ToolKnd'" in m for m in messages), messages
    assert "a family entry holds for every version: no `versions`" in messages
    assert [f.hint for f in findings if "ToolKnd" in f.message] == ["did you mean 'ToolKind'?"]
    both = KIND.replace("family: peer", "family: peer\n    target: codex-acp")
    assert any("one `target`, or one `family`" in f.message for f in check_known_text(both, "k")[0])


def test_the_shipped_peer_entries_explain_the_recorded_peers() -> None:
    """Each recorded peer of the shipped suite differs from codex-acp only where ACP
    leaves it to the agent: the peers scenarios declare nothing of their own."""
    families = load_config(REPO).families
    known = load_known(REPO / "known-differences.yaml", families, def_names())
    assert all(r.family == "peer" for r in known if "codex-acp" in (r.targets or ()))
    for scenario in ("text-turn", "fixture-tool", "permission-reject", "cancel-stream"):
        folder = REPO / "snapshots" / "peers" / scenario
        ref = load_view((folder / "codex-acp.yaml").read_text())
        for other in sorted(folder.glob("*.yaml")):
            if other.stem == "codex-acp":
                continue
            names = ("codex-acp", other.stem)
            report = diff(ref, load_view(other.read_text()), names, known, f"peers/{scenario}")
            assert report.ok, report.render()


def test_an_unused_family_entry_is_an_allowance_never_stale() -> None:
    _, known = check_known_text(KIND, "k.yaml", FAMILIES, def_names())
    ledger = judge(known, [Use(("kind",), ())], None)
    assert ledger.ok and ledger.stale == [] and [r.id for r in ledger.allowances] == ["kind"]
    assert ledger_lines(ledger, 1)[-1] == "  what ACP allows and no agent here did: kind"

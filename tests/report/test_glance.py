"""The summary at a glance (`parity.report.glance`) and the matrix's recorded cells:
pure functions over outcomes."""

from __future__ import annotations

from parity.report.glance import collapsed, failing_table, skip_lines, target_lines
from parity.report.matrix import cell, summary_table
from parity.report.outcome import Outcome

REC = "native unavailable, compared with its recorded snapshot"


def _outcomes() -> list[Outcome]:
    out = []
    for s in ("a/one", "a/two"):
        out.append(Outcome(s, "target", "native", "skip", reason="DSH not found: no dsh"))
        out.append(Outcome(s, "target", "plus", "pass"))
        out.append(Outcome(s, "parity", "plus", "pass", reference="native", reason=REC))
    out.append(Outcome("p/peer", "target", "codex", "pass"))
    out.append(Outcome("p/peer", "target", "qwen", "skip", reason="qwen not installed"))
    qwen_rec = REC.replace("native", "qwen")  # qwen did not run: its recording stood in
    out.append(Outcome("p/peer", "parity", "qwen", "pass", reference="codex", reason=qwen_rec))
    return out


def test_one_line_per_target_with_its_counts() -> None:
    lines = target_lines(_outcomes())
    assert lines[0].split() == [
        "target", "scenarios", "ref", "snapshots", "compared", "with", "the", "reference"
    ]  # fmt: skip
    by_target = {line.split()[0]: " ".join(line.split()[1:]) for line in lines[1:]}
    assert by_target == {
        "native": "2 2 2 skip",
        "codex": "1 1 1 pass",
        "plus": "2 - 2 pass 2 same vs native (2 recorded)",
        "qwen": "1 - 1 skip 1 same vs codex (1 recorded)",
    }
    assert all(len(line) <= 80 for line in lines)


def test_skip_reasons_are_grouped_in_full_most_common_first() -> None:
    reason = "DSH not found: no dsh on PATH and PARITY_DSH is not set " * 3
    outcomes = [Outcome(f"s{i}", "target", "native", "skip", reason=reason) for i in range(5)]
    outcomes.append(Outcome("x", "target", "qwen", "skip", reason="qwen not installed"))
    lines = skip_lines(outcomes, width=80)
    assert lines[0] == "skipped: 6 item(s), 2 reason(s)"
    assert lines[1].startswith("  5 native: DSH not found")
    assert " ".join(" ".join(lines).split()).count(" ".join(reason.split())) == 1
    assert lines[-1] == "  1 qwen: qwen not installed"
    assert all(len(line) <= 80 for line in lines)
    assert skip_lines([Outcome("x", "target", "plus", "pass")]) == []


def test_only_failing_scenarios_get_table_rows() -> None:
    outcomes = [*_outcomes(), Outcome("b/bad", "target", "plus", "fail", reason="no snapshot")]
    lines = failing_table(outcomes, {})
    assert "failing scenarios: 1" in lines
    assert any(line.startswith("b/bad") for line in lines)
    assert not any(line.startswith("a/one") for line in lines)
    assert failing_table(_outcomes(), {}) == []


def test_a_skipped_target_whose_recording_compared_reads_recorded() -> None:
    own = Outcome("p/peer", "target", "qwen", "skip", reason="qwen not installed")
    both = f"{REC.replace('native', 'codex')}; {REC.replace('native', 'qwen')}"
    parity = Outcome("p/peer", "parity", "qwen", "pass", reference="codex", reason=both)
    assert cell(own, parity, {}) == "recorded; same as codex (recorded)"
    assert cell(own, parity, {}, short=True) == "rec =*"
    table = summary_table(_outcomes(), width=40)
    assert any("rec =*" in line for line in table)
    assert any("rec: not run here" in line or "rec:recording" in line for line in table)


def test_an_added_target_that_ran_unrecorded_is_not_called_recorded() -> None:
    # `--targets +mine`, not recorded yet: its own item skips, but it ran, and its parity
    # check compared that run with the reference's recording. Only the reference stood in.
    own = Outcome("p/peer", "target", "mine", "skip", reason="added with --targets +mine")
    ref = REC.replace("native", "codex")
    parity = Outcome("p/peer", "parity", "mine", "differs", reference="codex", reason=ref)
    assert cell(own, parity, {}, short=True) == "skip ~*"
    assert cell(own, parity, {}).startswith("skip; differs from codex")


def test_long_sections_are_counted() -> None:
    assert collapsed(["a", "b"], 2, "-v") == ["a", "b"]
    assert collapsed(["a", "b", "c"], 1, "-v lists them") == [
        "a",
        "  ... 2 more line(s): -v lists them",
    ]

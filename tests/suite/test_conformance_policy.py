"""Conformance findings on every run, and each target's policy for them.

A real `parity run` over a throwaway project whose agent slips once per prompt (a
`tool_call_update` for a tool call nobody announced). Under `conformance = "fail"` (the
default for family dsh) that fails the target's item, findings first; under `warn` (the
default for peers) the item passes and the summary lists the finding. Findings never
reach the snapshot.
"""

from __future__ import annotations

import re

from tests.support.project import TEXT_SCENARIO, Project, mini_target

SLIP_ENV = 'MINI_SLIP = "1"'
SLIP_SCENARIO = TEXT_SCENARIO.replace(
    "targets: [mini, mini-b]", "targets: [slip, slip-strict, slip-dsh]"
)
FINDING = re.compile(
    r"\[unknown_tool_call\] step 3, frame \d+: tool_call_update for 'ghost', "
    r"which no tool_call announced"
)


def status(out: str, node: str) -> str:
    """PASSED/FAILED of a node id in `-v` output, serial (`id PASSED`) or under xdist
    (`[gw0] [ 33%] PASSED id`)."""
    for line in out.splitlines():
        words = line.split()
        found = [w for w in words if w in ("PASSED", "FAILED", "SKIPPED", "ERROR")]
        if node in words and found:
            return found[0]
    return "absent"


def slip_project(project: Project) -> None:
    dsh = mini_target("slip-dsh", extra_env=SLIP_ENV).replace('family = "peer"', 'family = "dsh"')
    project.write(
        "parity.toml",
        mini_target("mini")
        + mini_target("slip", extra_env=SLIP_ENV)
        + mini_target("slip-strict", extra_env=SLIP_ENV)
        + 'conformance = "fail"\n'
        + dsh,
    )
    project.write("scenarios/demo/slip.yaml", SLIP_SCENARIO)


def test_a_slip_fails_under_fail_and_only_warns_under_warn(project: Project) -> None:
    slip_project(project)
    # Under xdist: findings travel from the workers to the controller's summary.
    done = project.parity("record", "scenarios/demo/slip.yaml", "-n", "2")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert status(out, "scenarios/demo/slip.yaml::slip") == "PASSED"
    assert status(out, "scenarios/demo/slip.yaml::slip-strict") == "FAILED"
    # Family dsh: `fail` by default.
    assert status(out, "scenarios/demo/slip.yaml::slip-dsh") == "FAILED"
    # The failure opens with the findings, before the transcript tail.
    failure = out[out.index("broke the ACP protocol") :]
    assert failure.index("conformance (fail): 1 finding(s)") < failure.index("transcript tail")
    assert FINDING.search(failure)
    # The summary lists every run's findings, counted, the warned one included.
    summary = out[out.index("parity summary") :]
    assert "conformance findings: 3 in 3 run(s)" in summary
    assert "demo/slip slip (warn: warning only): 1 unknown_tool_call" in summary
    assert "demo/slip slip-strict (fail: failed its item): 1 unknown_tool_call" in summary
    assert FINDING.search(summary)
    # Findings are not part of the view: the snapshot holds the update, not the verdict.
    snap = project.snapshot("demo/slip", "slip").read_text()
    assert (
        "tool_call_update" in snap and "unknown_tool_call" not in snap and "conformance" not in snap
    )


def test_a_conforming_agent_has_no_findings(project: Project) -> None:
    done = project.parity("record", "--targets", "mini")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "parity summary" in done.stdout
    assert "conformance" not in done.stdout


def test_show_lists_the_findings_under_the_view(project: Project) -> None:
    slip_project(project)
    done = project.parity("show", "demo/slip", "slip")
    assert done.returncode == 0, done.stderr
    head, _, tail = done.stdout.partition("# conformance (warn): 1 finding(s)")
    assert "tool_call_update" in head
    assert FINDING.search(tail)
    clean = project.parity("show", "demo/text", "mini")
    assert clean.stdout.rstrip().endswith("# conformance: no findings")


def test_without_the_schema_the_run_says_how_to_get_it(project: Project) -> None:
    slip_project(project)
    missing = str(project.root / "no-schema.json")
    slip = "scenarios/demo/slip.yaml"
    done = project.parity("record", slip, "--targets", "slip,slip-dsh", ACP_PARITY_SCHEMA=missing)
    assert done.returncode == 1
    assert "demo/slip.yaml::slip-dsh FAILED" in done.stdout
    assert "[unchecked] conformance not checked: ACP schema not found" in done.stdout
    assert "where $ACP_PARITY_SCHEMA points" in done.stdout
    # Under `warn` the item passes, and the summary still says nothing was checked.
    assert "demo/slip.yaml::slip PASSED" in done.stdout
    assert "demo/slip slip (warn: warning only): 1 unchecked" in done.stdout

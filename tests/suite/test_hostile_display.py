"""A real `parity record`, `show`, `run --report/--json/--junit` and a failing `run`
against an agent that sends a lone surrogate, invalid UTF-8 and terminal escapes (clear
screen, window title, OSC 52 clipboard): nothing crashes, the snapshot keeps the exact
values, and no output or report carries a control character or surrogate (issue 33)."""

from __future__ import annotations

import re
from pathlib import Path

from parity.view.dump import load_view
from tests.support.project import Project, mini_target

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "hostile_text.py"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

SCENARIO = """\
description: an agent that sends what terminals act on
targets: [hostile]
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: go}
"""
EXPECTED = "expect_problems:\n  - {kind: garbage, reason: it prints a debug line}\n"


def test_hostile_bytes_are_recorded_exactly_and_shown_escaped(project: Project) -> None:
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("hostile", AGENT))
    project.write("scenarios/h/text.yaml", SCENARIO + EXPECTED)
    record = project.parity("record", "h/text")
    assert record.returncode == 0, record.stdout + record.stderr
    snapshot = project.snapshot("h/text", "hostile").read_text()
    assert "\\uD83D" in snapshot and "\\e]52;c;aGk=\\a" in snapshot
    updates = load_view(snapshot)["steps"][2]["updates"]
    assert updates[0]["content"]["text"] == "lone \ud83d surrogate"

    show = project.parity("show", "h/text", "hostile")
    assert show.returncode == 0, show.stderr
    reports = ("--report", "report", "--json", "r.json", "--junit", "j.xml")
    done = project.parity("run", "h/text", *reports)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("report/index.html", "r.json", "j.xml"):
        text = (project.root / name).read_text(encoding="utf-8")
        assert not UNSAFE.search(text), name

    project.write("scenarios/h/text.yaml", SCENARIO)  # the debug line now fails the run
    failed = project.parity("run", "h/text")
    assert failed.returncode == 1
    assert "stderr \\x1b[2J\\x1b[?1049h\\x1b]0;pwned\\x07" in failed.stdout
    for out in (record, show, done, failed):
        assert not UNSAFE.search(out.stdout + out.stderr), out.args


CUT_SCENARIO = """\
description: the agent cuts its text inside a surrogate pair before the model sees it
targets: [cutter]
llm:
  - text: ok
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: "smile \\U0001F600 please"}
"""


def test_a_lone_surrogate_the_agent_sends_the_model_is_recorded_exactly(project: Project) -> None:
    # Native slices strings in UTF-16 units, so a cut can fall inside a surrogate pair:
    # the model request then carries `"\\ud83d"`, which the fake LLM reads into the run's
    # model view. Recording it, showing it and reporting it must keep it exactly.
    with open(project.root / "parity.toml", "a") as toml:
        toml.write(mini_target("cutter", extra_env='MINI_CUT = "7"'))
    project.write("scenarios/h/cut.yaml", CUT_SCENARIO)
    record = project.parity("record", "h/cut")
    assert record.returncode == 0, record.stdout + record.stderr
    snapshot = project.snapshot("h/cut", "cutter").read_text()
    body = load_view(snapshot)["model"][0]["body"]
    assert body["messages"][0]["content"][0]["text"] == "smile \ud83d"
    show = project.parity("show", "h/cut", "cutter")
    done = project.parity("run", "h/cut", "--report", "report", "--json", "r.json")
    assert show.returncode == 0 and done.returncode == 0, show.stderr + done.stdout
    for out in (record, show, done):
        assert not UNSAFE.search(out.stdout + out.stderr), out.args
    for name in ("report/index.html", "r.json"):
        assert not UNSAFE.search((project.root / name).read_text(encoding="utf-8")), name

"""`parity calibrate` never proposes masking how a run ended: exits, teardown, problems."""

from __future__ import annotations

from typing import Any

import yaml

from parity.scenario.selectors import format_path
from parity.view.calibrate import differing_paths, mask_proposal, shows_run_health


def view(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "steps": [
            {"step": 1, "result": {"_meta": {"nonce": "a"}}},
            {"step": 2, "result": {"stopReason": "cancelled"}, "notes": []},
        ],
        "after": [],
        "model": [{"path": "/stream", "body": {}}],
        "process": {"exit": [{"by": "eof", "code": 0}]},
    }
    for key, value in changes.items():
        base[key] = value
    return base


def test_exit_teardown_and_run_problems_are_never_proposed() -> None:
    a = view()
    b = view(
        steps=[
            {"step": 1, "result": {"_meta": {"nonce": "b"}}},
            {
                "step": 2,
                "result": {"stopReason": "cancelled"},
                "notes": [{"problem": "no response to prompt s1 within 15 s"}],
            },
        ],
        model=[{"path": "/stream", "body": {}, "status": 409, "problem": "script exhausted"}],
        process={
            "exit": [{"by": "sigterm", "signal": 15}],
            "problems": ["agent exited by itself before teardown"],
        },
    )
    paths = differing_paths(a, b)
    health = [p for p in paths if shows_run_health(p, a, b)]
    noise = [p for p in paths if not shows_run_health(p, a, b)]
    assert noise == [("steps", 0, "result", "_meta", "nonce")]
    assert sorted(map(format_path, health)) == [
        "model[0].problem",
        "model[0].status",
        "process.exit[0].by",
        "process.exit[0].code",
        "process.exit[0].signal",
        "process.problems",
        "steps[1].notes[0]",
    ]
    text = mask_proposal(noise, "plus", 2, health)
    masks = yaml.safe_load(text)["masks"]
    assert [m["path"] for m in masks] == ["steps[0].result._meta.nonce"]
    assert "# not proposed: 7 field(s) showing an exit, teardown or run problem" in text
    assert "#   process.exit[0].by" in text
    # Only the teardown differs: no masks block at all.
    only = mask_proposal([], "plus", 2, [("process", "exit", 0, "by")])
    assert "masks" not in (yaml.safe_load(only) or {})
    assert "#   process.exit[0].by" in only


def test_a_whole_missing_section_with_a_problem_is_withheld() -> None:
    a = view()
    b = view()
    b["steps"][1] = {"step": 2, "notes": [{"problem": "agent exited during prompt"}]}
    assert shows_run_health(("steps", 1, "notes"), a, b)
    assert not shows_run_health(("steps", 1, "result"), a, b)

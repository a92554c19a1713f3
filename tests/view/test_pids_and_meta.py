"""Normalization touches ids only: a process id where text names a process, never a
number that happens to equal one; `_meta` goes without leaving empty containers."""

from __future__ import annotations

import datetime as dt

import pytest

from parity.view.normalize import view
from parity.view.tokens import Tokens
from tests.support.wire import Wire, chunk

S1 = "0f6c1d9e-2b8a-4c51-9a77-3f0e5d1c2b4a"


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("(node:999) ExperimentalWarning: x", "(node:<pid>) ExperimentalWarning: x"),
        ("pid 999 exited", "pid <pid> exited"),
        ("PID=999", "PID=<pid>"),
        ("process 999 died", "process <pid> died"),
        ("read /proc/999/environ", "read /proc/<pid>/environ"),
        ("agent[999]: started", "agent[<pid>]: started"),
        ("999 bottles", "999 bottles"),
        ("version 999.1", "version 999.1"),
        ("in the year 999, or 1999", "in the year 999, or 1999"),
    ],
)
def test_a_pid_is_replaced_only_where_text_names_a_process(text: str, scrubbed: str) -> None:
    assert Tokens({}, pids=[999]).scrub_text(text) == scrubbed


def test_a_number_in_the_agents_text_equal_to_its_pid_stays() -> None:
    # The run's process id is 999 (`Wire.process`); the agent says 999, and a date.
    w = Wire()
    w.step("prompt", 'prompt s1 "go"').send(3, "session/prompt", {"sessionId": S1})
    w.update(S1, chunk("m1", "999 files, counted 2026-12-02 (node:999)"))
    w.reply(3, {"stopReason": "end_turn"}).end()
    w.process(exit_code=0)
    # The run's dates are given, so the test holds on any day it runs.
    dates = [dt.date(2026, 12, 2)]
    text = view(w.t, "exact", [], dates=dates)["steps"][0]["updates"][0]["content"]["text"]
    assert text == "999 files, counted <date> (node:<pid>)"


def test_semantic_meta_leaves_no_empty_container() -> None:
    w = Wire()
    w.step("prompt", 'prompt s1 "go"').send(3, "session/prompt", {"sessionId": S1})
    w.notify("_vendor/notice", {"_meta": {"trace": "x"}})
    w.notify("_vendor/other", {"kept": {}, "_meta": {"trace": "x"}})
    w.reply(3, {"stopReason": "end_turn"}).end()
    steps = view(w.t, "semantic", [])["steps"][0]
    flat = repr(steps)
    assert "_meta" not in flat and "'trace'" not in flat
    # An object that held only `_meta` is gone; one that held more keeps the rest, and an
    # object that was empty on the wire stays as the agent sent it.
    assert "'params': {}" not in flat
    assert "'kept': {}" in flat

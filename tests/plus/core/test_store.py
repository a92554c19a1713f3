"""SessionStore / SessionLog: creation, ids, appends, torn lines, kill -9 durability."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from plus_agent import REPO

from acp_plus.core.store import (
    InvalidSessionId,
    SessionStore,
    StoreError,
    UnknownSession,
    parse_log,
    validate_session_id,
)


def test_create_writes_a_durable_header(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create("/work/x")
    assert uuid.UUID(log.id).version == 4
    lines = log.path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "header"
    assert header["id"] == log.id
    assert header["cwd"] == "/work/x"
    assert header["origin"] == "acp"
    assert isinstance(header["createdAt"], int)
    assert store.exists(log.id)
    assert not list(store.directory.glob("*.tmp"))


def test_append_adds_seq_and_time_and_reopens(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create("/w")
    first = log.append({"type": "turn/start", "turn": 1})
    second = log.append({"type": "turn/end", "turn": 1, "reason": {"kind": "completed"}})
    assert (first["seq"], second["seq"]) == (1, 2)
    assert first["at"].endswith("Z")
    again = store.open(log.id)
    assert again.events() == [first, second]
    third = again.append({"type": "turn/start", "turn": 2})
    assert third["seq"] == 3


def test_headers_lists_every_session_and_skips_damaged_ones(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a = store.create("/a")
    b = store.create("/b", origin="subagent")
    (store.directory / f"{uuid.uuid4()}.jsonl").write_text("{not json")
    (store.directory / "notes.jsonl").write_text('{"type":"header"}\n')
    headers = {h["id"]: h for h in store.headers()}
    assert set(headers) == {a.id, b.id}
    assert headers[b.id]["origin"] == "subagent"


def test_headers_of_a_missing_home_is_empty(tmp_path: Path) -> None:
    assert SessionStore(tmp_path / "nope").headers() == []


FIXED_ID = "0b3f8a52-6c1e-4d7a-9f0e-2a4b6c8d0e1f"


@pytest.mark.parametrize("bad", ["../../x", "", "a" * 36, "../" + FIXED_ID, FIXED_ID + "/..", 7])
def test_ids_are_validated_before_touching_a_path(tmp_path: Path, bad: object) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(InvalidSessionId, match="invalid session id"):
        validate_session_id(bad)
    with pytest.raises(InvalidSessionId):
        store.open(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidSessionId):
        store.exists(bad)  # type: ignore[arg-type]


def test_open_unknown_session(tmp_path: Path) -> None:
    missing = str(uuid.uuid4())
    with pytest.raises(UnknownSession, match=f"unknown session: {missing}"):
        SessionStore(tmp_path).open(missing)


def test_torn_last_line_is_ignored_and_cut_before_the_next_append(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    log = store.create("/w")
    log.append({"type": "turn/start", "turn": 1})
    with open(log.path, "ab") as fh:
        fh.write(b'{"type":"user/message","id":"m","tu')
    reopened = store.open(log.id)
    assert [e["type"] for e in reopened.events()] == ["turn/start"]
    reopened.append({"type": "turn/end", "turn": 1, "reason": {"kind": "completed"}})
    lines = log.path.read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["header", "turn/start", "turn/end"]


def test_a_complete_json_line_without_newline_counts_as_torn() -> None:
    objects, valid = parse_log(b'{"type":"header"}\n{"a":1}')
    assert objects == [{"type": "header"}]
    assert valid == len(b'{"type":"header"}\n')


def test_damage_before_the_last_line_is_an_error() -> None:
    with pytest.raises(StoreError, match="line 2"):
        parse_log(b'{"type":"header"}\nnope\n{"a":1}\n')


def test_kill_9_mid_append_loses_at_most_the_event_being_written(tmp_path: Path) -> None:
    """A child appends as fast as it can; SIGKILL lands mid-stream; every line that the
    child reported committed must be readable, in order, with contiguous seq."""
    store = SessionStore(tmp_path)
    log = store.create("/w")
    child = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from acp_plus.core.store import SessionStore
        log = SessionStore(Path({str(tmp_path)!r})).open({log.id!r})
        i = 0
        while True:
            i += 1
            log.append({{"type": "tool/result", "turn": 1, "callId": str(i),
                         "content": [{{"type": "text", "text": "x" * 5000}}], "isError": False}})
            sys.stdout.write(f"{{i}}\\n")
            sys.stdout.flush()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", child],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acknowledged = 0
    deadline = time.monotonic() + 20
    while acknowledged < 30 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acknowledged = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert acknowledged >= 30, "child never got going"
    events = store.open(log.id).events()
    assert len(events) >= acknowledged
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["callId"] for e in events] == [str(i) for i in range(1, len(events) + 1)]
    # The log stays appendable after the crash.
    store.open(log.id).append({"type": "turn/end", "turn": 1, "reason": {"kind": "interrupted"}})
    assert store.open(log.id).events()[-1]["seq"] == len(events) + 1

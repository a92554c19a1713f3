"""A bounded, seeded fuzz of acp-plus's JSON-RPC surface against ONE real process.

Hypothesis generates batches of frames: the real method names and random ones, params of
the right and wrong shapes (real session ids among random ones), ids of odd types
(negative, fractional, unicode and lone-surrogate strings, numeric strings beside equal
numbers), invalid ids, missing `jsonrpc`, notifications, stray responses and garbage
lines. Every frame's expected answer follows from how it was built (not from the code
under test), and after the run:

- every request with a valid id got exactly one answer with that id, and no answer
  carries an id nobody sent;
- every frame without a usable id that must be answered got exactly one id-null answer;
- everything on stdout is a valid JSON-RPC 2.0 message;
- the process never died, and a normal initialize + session/new + prompt still works.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plus_agent import PYTHON, World, make_world

from parity.fakellm.thread import FakeLLMThread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX pipes")

EXAMPLES = 300
METHODS = [
    "initialize",
    "authenticate",
    "session/new",
    "session/list",
    "session/resume",
    "session/close",
    "session/set_config_option",
    "session/prompt",
    "session/load",
    "session/set_mode",
    "session/cancel",
    "$/cancel_request",
    "_session/steering",
]


# -- the process, spoken to over plain pipes ----------------------------------------------


@dataclass
class Peer:
    """acp-plus on pipes; a thread collects every stdout line as it arrives."""

    process: subprocess.Popen[bytes]
    workdir: Path
    frames: list[Any] = field(default_factory=list)
    bad_lines: list[bytes] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def start_reading(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.arrived:
                try:
                    self.frames.append(json.loads(line))
                except ValueError:
                    self.bad_lines.append(line)
                self.arrived.notify_all()

    def send(self, lines: list[bytes]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(line + b"\n" for line in lines))
        self.process.stdin.flush()

    def answers(self, msg_id: Any) -> list[dict[str, Any]]:
        return [f for f in self.frames if _is_response(f) and _same_id(f["id"], msg_id)]

    def wait(self, done: Any, timeout: float) -> bool:
        """Wait until `done()` holds (checked under the lock); False on timeout."""
        with self.arrived:
            return self.arrived.wait_for(done, timeout)

    def call(self, msg_id: str, method: str, params: Any, timeout: float = 30) -> dict[str, Any]:
        frame = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.send([json.dumps(frame).encode()])
        assert self.wait(lambda: self.answers(msg_id), timeout), f"no answer to {method}"
        (answer,) = self.answers(msg_id)
        return answer


def _is_response(frame: Any) -> bool:
    return isinstance(frame, dict) and "id" in frame and "method" not in frame


def _same_id(a: Any, b: Any) -> bool:
    # 1 and "1" are different ids, and so are 1 and True.
    return type(a) is type(b) and a == b


@pytest.fixture(scope="module")
def peer(fake_thread: FakeLLMThread, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    tmp = tmp_path_factory.mktemp("fuzz")
    # Plenty of one-word replies: fuzzed prompts consume them, the final check needs one.
    w: World = make_world(fake_thread, tmp)(
        llm=[{"text": "ok"}] * (EXAMPLES * 4), extra_config="mcp_startup_timeout = 1\n"
    )
    with open(w.stderr, "ab") as err:
        process = subprocess.Popen(
            [PYTHON, *w.argv()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=w.workdir,
            env={**os.environ, **w.env()},
            start_new_session=True,  # its own group: no signal meant for pytest's reaches it
        )
    agent = Peer(process, w.workdir)
    agent.start_reading()
    try:
        yield agent
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- what to send, and what each frame must get back ---------------------------------------


@dataclass(frozen=True)
class Frame:
    """One generated line and the answer it must get: `answer_id` (exactly one answer
    with that id), `null_answer` (exactly one answer with id null), or neither."""

    line: bytes
    answer_id: Any = None
    has_answer_id: bool = False
    null_answer: bool = False


_json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x"])},
    optional={
        "text": st.text(max_size=16) | _json,
        "mimeType": st.sampled_from(["image/png", "text/plain"]) | _json,
        "data": st.sampled_from(["", "iVBORw0KGgo=", "!!"]) | _json,
        "name": st.text(max_size=8),
        "uri": st.text(max_size=8),
    },
)


def _params(session_ids: list[str], workdir: str) -> st.SearchStrategy[Any]:
    session_id = st.sampled_from(session_ids) | st.text(max_size=36) | _json
    cwd = st.sampled_from([workdir, "/", "relative/dir", "/no/such/dir", ""]) | st.text(max_size=12)
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "protocolVersion": st.sampled_from([1, 0, 65535, 65536, -1]) | _json,
            "sessionId": session_id,
            "cwd": cwd | _json,
            "mcpServers": st.just([]) | st.lists(_json, max_size=2) | _json,
            "prompt": st.lists(_block | _json, max_size=3) | _json,
            "configId": st.sampled_from(["model", "reasoning_effort", "mode"]) | _json,
            "value": st.sampled_from(["mock/mock", "high", "low", ""]) | _json,
            "cursor": st.text(max_size=12) | _json,
            "requestId": st.integers(min_value=-2, max_value=5) | st.text(max_size=4),
            "methodId": _json,
            "_meta": _json,
        },
    )
    return st.none() | shaped | _json


_ID_KINDS = ("int", "negative", "fraction", "string", "numeric-string", "unicode", "surrogate")


def _make_id(kind: str, n: int) -> Any:
    return {
        "int": n,
        "negative": -n,
        "fraction": n + 0.5,
        "string": f"id-{n}",
        "numeric-string": str(n),  # beside the int n: a different id
        "unicode": f"ü{n}\u2028",
        "surrogate": f"\ud800{n}",
    }[kind]


@st.composite
def _frame(draw: st.DrawFn, session_ids: list[str], workdir: str, counter: Iterator[int]) -> Frame:
    kind = draw(
        st.sampled_from(
            ["request"] * 6 + ["no-jsonrpc", "bad-id", "notification", "garbage", "response"]
        )
    )
    method = draw(st.sampled_from(METHODS) | st.text(max_size=16))
    params = draw(_params(session_ids, workdir))
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if draw(st.booleans()) or params is not None:
        message["params"] = params
    if kind == "request":
        msg_id = _make_id(draw(st.sampled_from(_ID_KINDS)), next(counter))
        message["id"] = msg_id
        return Frame(_dump(message), msg_id, has_answer_id=True)
    if kind == "no-jsonrpc":
        msg_id = _make_id(draw(st.sampled_from(_ID_KINDS)), next(counter))
        message["id"] = msg_id
        message["jsonrpc"] = draw(st.sampled_from([None, "1.0", 2, "2.0 "]))
        if message["jsonrpc"] is None:
            del message["jsonrpc"]
        # Not a call without the envelope: -32600 with id null, as native 0.2.1-rc.2's SDK.
        return Frame(_dump(message), null_answer=True)
    if kind == "bad-id":
        message["id"] = draw(st.sampled_from([True, False, [1], {"id": 1}, [], {}]))
        return Frame(_dump(message), null_answer=True)
    if kind == "notification":
        return Frame(_dump(message))
    if kind == "response":
        stray = {"jsonrpc": "2.0", "id": 10_000 + next(counter), "result": params}
        return Frame(_dump(stray))
    # Garbage: anything that is not a JSON object, so it can never be a valid message.
    text = draw(st.text(min_size=1, max_size=30).filter(lambda t: t.strip() != ""))
    raw = text.replace("\n", " ").encode("utf-8", "surrogatepass")
    if raw.lstrip().startswith(b"{"):
        raw = b"x" + raw
    junk = draw(st.sampled_from([b"", b"\xff\xfe", b"[1,2]", b'"str"', b"NaN"]))
    return Frame(junk + raw, null_answer=True)


def _dump(message: dict[str, Any]) -> bytes:
    # ensure_ascii keeps lone surrogates as \\udxxx escapes: valid JSON, odd Unicode.
    return json.dumps(message).encode()


# -- the checks ------------------------------------------------------------------------------


def _valid_jsonrpc(frame: Any) -> bool:
    if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
        return False
    if "method" in frame:
        return isinstance(frame["method"], str)
    if "id" not in frame or (("result" in frame) == ("error" in frame)):
        return False
    error = frame.get("error")
    if error is not None:
        return (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        )
    return True


def test_fuzzed_frames_each_get_their_one_answer_and_the_process_survives(peer: Peer) -> None:
    started = time.monotonic()
    workdir = str(peer.workdir)
    peer.call("init", "initialize", {"protocolVersion": 1})
    session_ids = [
        peer.call(f"new-{i}", "session/new", {"cwd": workdir, "mcpServers": []})["result"][
            "sessionId"
        ]
        for i in range(3)
    ]
    counter = itertools.count(1)
    sent: list[Frame] = []
    syncs = itertools.count()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(_frame(session_ids, workdir, counter), min_size=1, max_size=4))
    def example(batch: list[Frame]) -> None:
        sync = f"sync-{next(syncs)}"
        sync_line = _dump({"jsonrpc": "2.0", "id": sync, "method": "fuzz/sync"})
        exit_status = peer.process.poll()
        assert exit_status is None, f"acp-plus exited {exit_status}; last frames: {sent[-6:]}"
        peer.send([frame.line for frame in batch] + [sync_line])
        sent.extend(batch)
        # Requests run concurrently, so this is no ordering claim: it only paces the
        # run and notices a dead process within the example that killed it.
        answered = peer.wait(lambda: bool(peer.answers(sync)), 15)
        assert answered, f"no answer to {sync}; exit {peer.process.poll()}; batch: {batch}"

    example()
    assert peer.process.poll() is None, "acp-plus died"

    expected = [f.answer_id for f in sent if f.has_answer_id]
    # Prompts may still be settling: every id gets its answer eventually (bounded).
    peer.wait(lambda: all(peer.answers(i) for i in expected), 20)
    with peer.arrived:
        frames = list(peer.frames)
        bad_lines = list(peer.bad_lines)
    assert bad_lines == []
    invalid = [f for f in frames if not _valid_jsonrpc(f)]
    assert invalid == []
    responses = [f for f in frames if _is_response(f)]
    by_id = Counter(json.dumps([type(f["id"]).__name__, f["id"]]) for f in responses)
    for msg_id in expected:
        key = json.dumps([type(msg_id).__name__, msg_id])
        assert by_id[key] == 1, f"id {msg_id!r} answered {by_id[key]} times"
    known = {json.dumps([type(i).__name__, i]) for i in expected}
    known |= {json.dumps(["str", i]) for i in ("init", "new-0", "new-1", "new-2")}
    known |= {json.dumps(["str", f"sync-{n}"]) for n in range(next(syncs))}
    strays = [k for k in by_id if k not in known and k != json.dumps(["NoneType", None])]
    assert strays == []
    assert by_id[json.dumps(["NoneType", None])] == sum(f.null_answer for f in sent)

    # Still a working agent.
    assert "result" in peer.call("final-init", "initialize", {"protocolVersion": 1})
    new = peer.call("final-new", "session/new", {"cwd": workdir, "mcpServers": []})
    prompt = peer.call(
        "final-prompt",
        "session/prompt",
        {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "hi"}]},
    )
    assert prompt["result"] == {"stopReason": "end_turn"}
    assert peer.process.poll() is None
    kinds = Counter(
        "id" if f.has_answer_id else "null" if f.null_answer else "silent" for f in sent
    )
    print(f"fuzz: {len(sent)} frames {dict(kinds)} in {time.monotonic() - started:.1f} s")

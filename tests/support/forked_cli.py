"""The `parity` CLI for tests, each call in a process forked from one that has already
imported the harness.

`make test` runs the CLI some two hundred times (`Project.parity`), and each start paid
for the interpreter and its imports (parity, pytest and its plugins): about 0.3 s of CPU
of a 0.6 s call, on a machine whose two cores the suite keeps busy. Here one process per
test worker (the zygote) imports all of it once; each call is a fork of it, given the
call's own arguments, working directory, environment and standard streams, which then
runs `python -m parity.cli` as the interpreter would (`runpy`), exits with its status and
is reaped by the zygote, which reports the status back. The command's own code, its
plugins and every process it starts are the real ones; what a fork cannot show is an
import-time fact (a module that reads the environment when imported: parity has none,
`tests/test_structure.py` and the installed-wheel tests start fresh interpreters).

`PARITY_TEST_FORK=0` runs every call in a fresh interpreter instead, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRELOAD = (
    "parity.cli.main",
    "parity.cli.run",
    "parity.suite.options",
    "parity.suite.items",
    "parity.engine.runner",
    "parity.fakellm.thread",
    "parity.view.dump",
    "parity.checks.diff",
    "parity.report.collected",
    "parity.explore",
    "pytest",
)
"""What the CLI's commands import, and pytest, whose own plugins `_preload` adds. Nothing
of a plugin distribution (syrupy, xdist, hypothesis, ...): pytest rewrites their asserts
as it loads them, and warns about one imported before (`parity.suite.collect` imports
syrupy, so it is not here either)."""


def enabled() -> bool:
    return os.environ.get("PARITY_TEST_FORK", "1") != "0"


# --- the zygote (its own process) -------------------------------------------------------


def _child(request: Mapping[str, object], fds: Sequence[int]) -> None:
    """In the forked process: become the call, run the CLI, exit with its status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    cwd, env, args = str(request["cwd"]), request["env"], request["args"]
    assert isinstance(env, dict) and isinstance(args, list)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    import tempfile

    tempfile.tempdir = None  # TMPDIR is the call's
    sys.path[0] = cwd  # as `python -m` puts the working directory first
    code = 0
    try:
        import runpy

        sys.argv = [str(ROOT / "parity" / "cli" / "__main__.py"), *map(str, args)]
        runpy.run_module("parity.cli", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    # As the interpreter's own exit: wait for non-daemon threads, run the exit handlers.
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    os._exit(code & 0xFF)


def _preload() -> None:
    for name in PRELOAD:
        __import__(name)
    from _pytest.config import default_plugins

    for name in default_plugins:
        __import__(f"_pytest.{name}")


def serve(sock: socket.socket) -> None:
    """The zygote's loop: one call at a time, until the test worker closes the socket."""
    _preload()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        except OSError:
            return
        if not message:
            return
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            sock.close()
            _child(request, fds)
        for fd in fds:
            os.close(fd)
        sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        sock.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


# --- the test worker's side -------------------------------------------------------------


class Zygote:
    """One zygote process and the socket to it; started on first use."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._lines = b""
        self._lock = threading.Lock()
        atexit.register(self.close)

    def _start(self) -> socket.socket:
        if self._sock is not None and self._proc is not None and self._proc.poll() is None:
            return self._sock
        # Datagram-like: each request and answer is one message, its file descriptors with it.
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forked_cli", str(theirs.fileno())],
            cwd=ROOT,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self._sock, self._lines = mine, b""
        return mine

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def _answer(self, sock: socket.socket, deadline: float | None) -> dict[str, int]:
        while b"\n" not in self._lines:
            sock.settimeout(None if deadline is None else max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(4096)
            if not chunk:
                raise RuntimeError("the CLI zygote ended")
            self._lines += chunk
        line, _, self._lines = self._lines.partition(b"\n")
        answer: dict[str, int] = json.loads(line)
        return answer

    def run(
        self,
        args: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        timeout: float | None,
    ) -> subprocess.CompletedProcess[str]:
        """`subprocess.run([python, -m, parity.cli, *args], capture_output=True,
        text=True)`, forked: the same result, and `TimeoutExpired` past `timeout` (the
        call is killed first)."""
        with self._lock:  # one call at a time: the zygote serves them in turn
            sock = self._start()
            deadline = None if timeout is None else time.monotonic() + timeout
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            null = os.open(os.devnull, os.O_RDONLY)
            request = {"args": list(args), "cwd": str(cwd), "env": dict(env)}
            try:
                socket.send_fds(sock, [json.dumps(request).encode()], [null, out_w, err_w])
            finally:
                for fd in (null, out_w, err_w):
                    os.close(fd)
            pid = self._answer(sock, deadline)["pid"]
            out, err, timed_out = _collect(out_r, err_r, deadline)
            if timed_out:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            try:
                status = self._answer(sock, None if timed_out else deadline)["status"]
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                self._answer(sock, None)
                timed_out = True
            argv = [sys.executable, "-m", "parity.cli", *args]
            stdout, stderr = _text(out), _text(err)
            if timed_out:
                raise subprocess.TimeoutExpired(argv, timeout or 0, stdout, stderr)
            return subprocess.CompletedProcess(argv, status, stdout, stderr)


def _collect(out_r: int, err_r: int, deadline: float | None) -> tuple[bytes, bytes, bool]:
    """Both pipes read to their ends (or to the deadline: then True)."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        try:
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), True
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        sel.unregister(key.fd)
        finally:
            os.close(out_r)
            os.close(err_r)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), False


def _text(data: bytes) -> str:
    """Bytes as `subprocess.run(text=True)` decodes them: the locale's encoding, strict,
    universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


_ZYGOTE = Zygote()


def run_cli(
    args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float | None
) -> subprocess.CompletedProcess[str]:
    """The `parity` CLI with `args` in `cwd` with exactly `env`: forked from this worker's
    zygote, or (PARITY_TEST_FORK=0) a fresh interpreter."""
    if not enabled():
        return subprocess.run(
            [sys.executable, "-m", "parity.cli", *args],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    return _ZYGOTE.run(args, cwd, env, timeout)


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))

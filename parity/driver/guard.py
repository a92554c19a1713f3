"""The harness keeps its own secrets out of an agent's reach.

An agent runs as the harness's user, and a process can read the environment another
process of its user started with: `/proc/<pid>/environ` is the block of `NAME=value`
strings the kernel put on its stack at `exec`, whatever the process changed since. The
harness's environment holds what its own callers gave it (a CI token, a provider key
for `parity capture`); agents get an allow-list (`parity.driver.process`), but a hostile
one simply read the harness's `/proc/<pid>/environ`.

`guard_harness` closes that, once per process, before the first agent starts (and at
the start of every pytest session, so an xdist controller that starts no agent itself
is guarded too):

- every variable is handed to libc again (`os.putenv`, which copies it to the heap and
  points libc's `environ` there), then the original block is blanked: the harness's
  own `os.environ`, `getenv` and the children it starts keep every variable, and its
  `/proc/<pid>/environ` reads as zero bytes;
- the process is made non-dumpable (`PR_SET_DUMPABLE` 0): a process of the same user
  (root aside) can no longer read its memory, where the values still are, or attach a
  debugger.

The cost: no core dump of the harness; `ps e` shows it no environment; a debugger or a
profiler (py-spy) needs root to attach. What this cannot do: keep the values from an
agent running as root (it can read any memory), or from the processes that started the
harness (a shell, a CI runner), whose environments are as readable as the harness's
was. docs/threat-model.md says what a CI job adds (a user of its own, a container).
"""

from __future__ import annotations

import ctypes
import os
import sys

from parity.driver.orphans import prctl

_PR_SET_DUMPABLE = 4

_guarded = False


def environ_block(stat: bytes) -> tuple[int, int] | None:
    """`(env_start, env_end)` from `/proc/<pid>/stat` (fields 50 and 51, Linux 3.5+)."""
    fields = stat[stat.rfind(b")") + 2 :].split()
    # Field 3 (state) is the first after the command name: field n is fields[n - 3].
    if len(fields) < 49:
        return None
    start, end = int(fields[47]), int(fields[48])
    return (start, end) if 0 < start < end else None


def _blank_environ_block() -> bool:
    for name, value in list(os.environb.items()):
        os.putenv(name, value)  # a heap copy: libc's environ no longer points at the block
    with open("/proc/self/stat", "rb") as fh:
        block = environ_block(fh.read())
    if block is None:
        return False
    start, end = block
    ctypes.memset(start, 0, end - start)
    return True


def guard_harness() -> bool:
    """Blank this process's initial environment block and make it non-dumpable (see the
    module doc); once per process. False where that is not possible (not Linux)."""
    global _guarded
    if _guarded or not sys.platform.startswith("linux"):
        return _guarded
    _guarded = True
    prctl(_PR_SET_DUMPABLE, 0)
    return _blank_environ_block()

"""The ACP stdio driver: plays a scenario's client script against one agent process and
records everything as a `parity.transcript.Transcript`.

`run` is the entry point (`run_scenario`); `state` holds the `Run` its parts share:
`recording`, `answers`, `agent`, `requests`, `dispatch` (the step table) with `prompt`
and `waits`; `steps` (pure params), `connection`, `jsonrpc`, `process` and `terminals`
are the wire. The public surface below loads on first use (`parity.lazy`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.driver.run import run_scenario, wait_for_cleanup
    from parity.driver.state import LlmRun, RunPaths

__all__ = [
    "LlmRun",
    "RunPaths",
    "run_scenario",
    "wait_for_cleanup",
]

__getattr__ = surface(
    __name__,
    {
        "run_scenario": "parity.driver.run",
        "wait_for_cleanup": "parity.driver.run",
        "LlmRun": "parity.driver.state",
        "RunPaths": "parity.driver.state",
    },
)

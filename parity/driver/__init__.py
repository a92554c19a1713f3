"""The ACP stdio driver: plays a scenario's client script against one agent process and
records everything as a `parity.transcript.Transcript`.

`run` is the entry point (`run_scenario`); `state` holds the `Run` its parts share:
`recording`, `answers`, `agent`, `requests`, `dispatch` (the step table) with `prompt`
and `waits`; `steps` (pure params), `connection`, `jsonrpc`, `process` and `terminals`
are the wire. The package's public surface is below; harness code imports each name
from the module that defines it.
"""

from parity.driver.run import run_scenario, wait_for_cleanup
from parity.driver.state import LlmRun, RunPaths

__all__ = ["LlmRun", "RunPaths", "run_scenario", "wait_for_cleanup"]

"""The ACP stdio driver: plays a scenario's client script against one agent process and
records everything as a `parity.core.transcript.Transcript`.

`run` is the entry point (`run_scenario`); `state` holds the `Run` its parts share:
`recording`, `answers`, `agent`, `requests`, `dispatch` (the step table) with `prompt`
and `waits`; `steps` (pure params), `connection`, `jsonrpc`, `process` and `terminals`
are the wire.
"""

"""`parity capture`: record a live session with a real model into a keyless scenario.

`compose` (pure: recorded model calls -> the scenario's text) and `session` (the run,
the checks, the write and the keyless replay). The recording itself is a mode of the
fake LLM (`parity.fakellm.upstream`, `parity.fakellm.recorded`,
`parity.fakellm.identity`). See docs/capture.md.
"""

"""How a step goes wrong: the exceptions the step handlers raise and `run_step` records.

None of them escapes `run_scenario`: a `StepProblem` becomes the step's `problem` and
stops the run, a `ScriptError` is one with the step's file:line:col in front.
"""

from __future__ import annotations

INTERRUPTED = "interrupted: the run was cancelled during this step"
"""The problem of a step the run timeout cancelled (`_play` then says which timeout)."""


class ScriptError(Exception):
    """A step the driver cannot carry out as written (unknown session name, ...).

    Schema validation catches most mistakes before a run; these are the ones only the
    run can see, such as a session name whose `new_session` failed."""


class StepProblem(Exception):
    """A step went wrong; the run stops after recording it."""


class NoResponse(StepProblem):
    """A request got no response within its timeout (`seconds`)."""

    def __init__(self, text: str, seconds: float) -> None:
        super().__init__(text)
        self.seconds = seconds

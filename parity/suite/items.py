"""What scenario items share: the base item, its failure, and how it records outcomes.

A scenario item's work is `check` (`parity.suite.target_item.TargetItem`,
`parity.suite.parity_item.ParityItem`); it records its `Outcome` on the pytest report
(`user_properties`, which travel from xdist workers to the controller) and fails with
a `ScenarioFailure` whose text is the whole report.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ReprFileLocation, TerminalRepr
from _pytest._io import TerminalWriter

from parity.core.printable import printable
from parity.report.ledger import update
from parity.report.outcome import Kind, Outcome, Status
from parity.scenario.model import Scenario
from parity.suite.state import STATE, SessionState

PARITY_MARK = "parity"
"""The marker of every parity item (each target's items carry its own name too)."""


class ScenarioFailure(Exception):
    """A scenario item's failure; its text is the whole report (no traceback)."""


class Terminated(KeyboardInterrupt):
    """The session got SIGTERM. A KeyboardInterrupt because pytest ends the whole session
    on one (running teardown, sessionfinish and unconfigure, then exiting, so the driver's
    atexit hook kills every agent group); a SystemExit raised inside a test would only
    fail that test, and the session would start the next agent."""


def signal_name(exc: BaseException) -> str:
    """Which signal a KeyboardInterrupt stands for: SIGTERM (`Terminated`) or SIGINT."""
    return "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"


class FailureText(TerminalRepr):
    """A scenario item's failure text: whole in the failures section, only its first line
    (the headline) in the short summary, which would otherwise repeat all of it under CI
    or -vv. Plain text travels from xdist workers; the controller wraps it again."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.reprcrash = ReprFileLocation(path, 0, text.splitlines()[0] if text else "")

    def toterminal(self, tw: TerminalWriter) -> None:
        for line in self.text.splitlines():
            tw.line(line)


class _Origin:
    """Stands in for `item.obj`: syrupy names snapshots from `__module__`/`__name__`,
    also when rebuilding items that xdist workers report to the controller."""

    def __init__(self, module: str, name: str) -> None:
        self.__module__ = module
        self.__name__ = name


class ScenarioItem(pytest.Item):
    """Common part of target and parity items."""

    def __init__(self, *, scenario: Scenario, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.target = target
        self.obj = _Origin(f"scenarios.{scenario.name}", self.name)

    @property
    def state(self) -> SessionState:
        return self.config.stash[STATE]

    reference = ""
    """Parity items: the scenario's first target."""
    outcome_kind: Kind = "target"
    """What the summary counts this item as (parity items: `parity`)."""

    def record(self, status: Status, reason: str = "") -> None:
        """Attach this item's outcome for the summary (once; the first one counts)."""
        record = update(self.user_properties)
        if record.outcome is not None:
            return
        record.outcome = Outcome(
            self.scenario.name, self.outcome_kind, self.target, status, self.reference, reason
        )
        record.attach(self.user_properties)

    def runtest(self) -> None:
        try:
            self.check()
        except pytest.skip.Exception:
            raise
        except ScenarioFailure as exc:
            self.record("fail", str(exc).splitlines()[0])
            raise
        except KeyboardInterrupt as exc:
            # SIGTERM or Ctrl-C while the item ran (its agent, a check after the run):
            # its run was torn down on the way here. The item ends with a clear failure
            # instead of a traceback, and the session stops after it (no next agent).
            name = signal_name(exc)
            self.state.interrupted = f"interrupted by {name} during {self.nodeid}"
            self.record("fail", f"interrupted by {name}")
            self.session.shouldstop = self.state.interrupted
            raise ScenarioFailure(
                f"{self.nodeid}: interrupted by {name}; no verdict (its agent was stopped)"
            ) from None
        except Exception as exc:
            self.record("fail", f"harness error: {type(exc).__name__}: {exc}")
            raise

    @abc.abstractmethod
    def check(self) -> None:
        """The item's work; records its outcome, raises ScenarioFailure or skips."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        # Every failure text may quote the agent (its stderr, its frames, an exception's
        # message): shown escaped, so it cannot drive the terminal (`printable`).
        if isinstance(excinfo.value, ScenarioFailure):
            return printable(str(excinfo.value))
        return printable(str(super().repr_failure(excinfo, style=style)))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.scenario.name}::{self.name}"

    def unavailable(self, target: str) -> str | None:
        """Why `target` cannot run here, or None. Fails at once when the scenario names a
        target nobody declared (a typo is not a skip); what a requirement makes of an
        unavailable target is the item's to say (`TargetItem`, `ParityItem`)."""
        if target not in self.state.config.targets:
            known = ", ".join(sorted(self.state.config.targets))
            raise ScenarioFailure(
                f"{self.scenario.path}: target {target!r} is not declared "
                f"(known: {known}; declare it in {self.state.config.source})"
            )
        return self.state.runner.unavailable(target)

    def require_live(self, target: str, why: str) -> None:
        """Fail when `target`, which cannot run here (`why`), is one of `--require-live`."""
        if target in self.state.require_live:
            raise ScenarioFailure(
                f"required live target {target} cannot run: {why} "
                "(--require-live: its recorded snapshot does not stand in)"
            )

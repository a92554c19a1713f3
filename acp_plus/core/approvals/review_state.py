"""The reviewer's per-turn budgets and its circuit breaker (pure state, no I/O).

A turn may spend `max_reviews_per_turn` reviews and `max_failures_per_turn` failures;
past either, questions follow `on_budget`. The breaker trips after
`breaker_consecutive` denials in a row, or `breaker_window_denials` denials among the
last `breaker_window` verdicts; a tripped breaker sends questions to `on_breaker`
until the next turn, when the consecutive count starts again (the window does not).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from acp_plus.core.approvals.settings import ReviewerSettings


@dataclass
class ReviewState:
    """One session's counters."""

    settings: ReviewerSettings
    turn: int = 0
    reviews: int = 0
    failures: int = 0
    consecutive_denials: int = 0
    recent: deque[bool] = field(default_factory=deque)
    """The last verdicts, True for a deny (at most `breaker_window`)."""

    def start(self, turn: int) -> None:
        """Reset the per-turn budgets when `turn` is a new turn."""
        if turn != self.turn:
            self.turn, self.reviews, self.failures = turn, 0, 0
            self.consecutive_denials = 0

    def over_budget(self) -> str | None:
        """Why no review may run this turn, or None."""
        s = self.settings
        if self.reviews >= s.max_reviews_per_turn:
            return f"the reviewer's budget of {s.max_reviews_per_turn} reviews this turn is spent"
        if self.failures >= s.max_failures_per_turn:
            return f"the reviewer failed {self.failures} times this turn"
        return None

    def tripped(self) -> str | None:
        """Why the breaker is open, or None."""
        s = self.settings
        if self.consecutive_denials >= s.breaker_consecutive:
            return f"the reviewer denied {self.consecutive_denials} calls in a row"
        denials = sum(self.recent)
        if denials >= s.breaker_window_denials:
            return f"the reviewer denied {denials} of the last {len(self.recent)} calls"
        return None

    def record(self, denied: bool | None) -> None:
        """Count one review: a verdict (`denied`) or a failure (None)."""
        self.reviews += 1
        if denied is None:
            self.failures += 1
            return
        self.consecutive_denials = self.consecutive_denials + 1 if denied else 0
        self.recent.append(denied)
        while len(self.recent) > self.settings.breaker_window:
            self.recent.popleft()

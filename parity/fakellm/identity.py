"""Machine identity in recorded model traffic: real values <-> the harness's tokens (pure).

A captured scenario must replay on any machine and never carry who recorded it. What a
run puts into model text and tool output that belongs to the machine is the run's
directories (`<workdir>`, `<home>`, `<tmp>`, and whatever else the run names in its
paths), the recorder's own home (also `<home>`: on replay there is only the run's home
to put back) and user name (`<user>`). `Identity.scrub` turns the real values into
tokens before anything is written; `Identity.expand` turns tokens into the new run's
values when a scripted answer is sent, so a recorded `read <workdir>/notes.md` reaches
the replayed agent as its own workdir's path. Secrets are scrubbed to `<redacted>` and
never expanded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

REDACTED = "<redacted>"
USER = "<user>"

_SHORTEST_USER = 3
"""A shorter user name (`me`, `ci`) would rewrite ordinary words: left alone."""

_ANONYMOUS = frozenset({"root"})
"""User names that say nothing about who recorded (every container runs as root), and
would rewrite ordinary words (`the root directory`): left alone."""


def _path_pattern(path: str) -> re.Pattern[str]:
    # The lookahead keeps `/tmp/run-1` from eating the head of a sibling `/tmp/run-10`.
    return re.compile(re.escape(path) + r"(?![\w-])")


@dataclass(frozen=True)
class Identity:
    """One run's machine-specific values and the tokens that stand for them."""

    paths: Mapping[str, str] = field(default_factory=dict)
    """token name -> absolute path (`{"workdir": "/tmp/parity-.../workdir"}`)."""
    user_home: str | None = None
    """The recorder's own home directory, scrubbed to `<home>`, never expanded to."""
    user: str | None = None
    secrets: Sequence[str] = ()

    @cached_property
    def _scrubs(self) -> list[tuple[re.Pattern[str], str]]:
        # Built once per identity: a request's projection scrubs every string in it.
        pairs: dict[str, str] = {}
        for name, path in self.paths.items():
            if len(path.rstrip("/")) > 1:
                pairs.setdefault(path.rstrip("/"), f"<{name}>")
        if self.user_home and len(self.user_home.rstrip("/")) > 1:
            pairs.setdefault(self.user_home.rstrip("/"), "<home>")
        # Longest first: the workdir usually lives below tmp or a home.
        ordered = sorted(pairs.items(), key=lambda pair: -len(pair[0]))
        out = [(_path_pattern(path), token) for path, token in ordered]
        if self.user and len(self.user) >= _SHORTEST_USER and self.user not in _ANONYMOUS:
            # Not inside a token: a user named `tmp` must leave `<tmp>` alone.
            out.append((re.compile(rf"(?<![\w.<-]){re.escape(self.user)}(?![\w>-])"), USER))
        return out

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `<redacted>`."""
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, REDACTED)
        return text

    def scrub(self, text: str) -> str:
        """`text` with secrets, then machine paths and the user name, replaced by tokens."""
        text = self.redact(text)
        for pattern, token in self._scrubs:
            text = pattern.sub(token, text)
        return text

    def expand(self, text: str) -> str:
        """`text` with the run's tokens replaced by this run's values (`<user>` too)."""
        if "<" not in text:
            return text
        for name, path in self.paths.items():
            text = text.replace(f"<{name}>", path.rstrip("/"))
        if self.user:
            text = text.replace(USER, self.user)
        return text

    def scrub_value(self, value: Any) -> Any:
        """`value` (plain JSON data) with `scrub` applied to every string in it."""
        return map_strings(value, self.scrub)

    def expand_value(self, value: Any) -> Any:
        return map_strings(value, self.expand)


def map_strings(value: Any, fn: Any) -> Any:
    """A copy of plain JSON data with `fn` applied to every string (keys kept)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, Mapping):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [map_strings(v, fn) for v in value]
    return value


def leaks(text: str, secrets: Sequence[str]) -> list[int]:
    """1-based line numbers of `text` that contain any of `secrets`."""
    wanted = [s for s in secrets if s]
    return [n for n, line in enumerate(text.splitlines(), 1) if any(s in line for s in wanted)]

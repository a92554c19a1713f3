"""Positional id tokens, machine paths and run dates: what makes one run's view stable.

`Tokens` numbers ids per kind in order of first appearance (`<session:1>`, `<message:2>`,
any other UUID `<uuid:n>`) and scrubs values and free text of ids, the run's paths
(`<workdir>`, `<home>`, ...), the random parts of names the agent makes in the run's
TMPDIR (`<tmp>/dsh-spill-<tmpname:1>/...`), ISO timestamps the agent made (`<time>`;
those the scenario supplied stay) and the run's calendar dates (`<date>`).
`parity.view.normalize.view` drives it over a transcript.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from parity.core.exact import exact_key
from parity.core.job_ids import JOB_ID

TIME = "<time>"
DATE = "<date>"

# Keys whose string values are ids of a kind; tokens are numbered per kind in order of
# first appearance on the wire, so the numbering is as deterministic as the agent.
ID_KEYS: dict[str, str] = {
    "sessionId": "session",
    "messageId": "message",
    "userMessageId": "message",
    "toolCallId": "toolcall",
    "elicitationId": "elicitation-id",
}
# Ids at least this long are also replaced inside other strings (paths, titles, model
# bodies). Shorter ones (`1`, `m1`) would rewrite unrelated text, so they are replaced
# only as whole values under their own key.
SUBSTRING_MIN = 8

TIME_KEYS = frozenset(
    {"updatedAt", "createdAt", "timestamp", "startedAt", "endedAt", "durationMs", "elapsedMs"}
)
ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")

_DIGIT = re.compile(r"\d")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


TMP_PATH = re.compile(r"<tmp>(?:/(?:[\w.+-]|<[\w:-]+>)+)+")
"""A path below the run's TMPDIR, once the run's paths are tokens: a part may already hold
a token (a name seen before is replaced wherever it recurs, ahead of this pattern)."""
TMP_DIR_SUFFIX = re.compile(r"(?<=^<tmp>/)([\w.+-]*-)([A-Za-z0-9]{6})(?=/|$)")
"""`mkdtemp`'s six random characters ending a directory made right in TMPDIR (Node's
`fs.mkdtemp("dsh-spill-")` gives `dsh-spill-wj07dB`, `dsh-subprocess-p1iaxe`)."""
TMP_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{12,}(?![0-9A-Za-z])")
"""A random hex name of 12 or more digits in a TMPDIR path (`c721f4e26c5c-stdout.log`)."""

PID_CONTEXT = (
    r"(?P<pre>\(node:|\bpid\s*[:=#]?\s*|\bprocess(?:\s+id)?\s+|/proc/|\w\[)"
    r"(?:{})(?![\w.])"
)
"""Where a text names a process id: Node's `(node:4781)`, `pid 4781`, `pid=4781`,
`process 4781`, `/proc/4781/...`, syslog's `name[4781]`; `{}` takes the run's pids."""


class Tokens:
    """Positional tokens per id kind for one run: value -> `<kind:n>`. Values are told
    apart by JSON type (`exact_key`): request ids `1`, `1.0` and `"1"` are three ids."""

    def __init__(
        self,
        paths: Mapping[str, str],
        scripted: Iterable[str] = (),
        dates: Iterable[dt.date] = (),
        pids: Iterable[int] = (),
        supplied: Iterable[str] = (),
    ) -> None:
        self._by_kind: dict[str, dict[Any, str]] = {}
        # A timestamp the scenario wrote (in a file, a fixture tool's result, the model's
        # script, a prompt) is data the agent passes on, not its clock: it stays, so an
        # agent that changes it shows the change (`supplied_texts` in normalize.py).
        self._supplied_times = frozenset(t for text in supplied for t in ISO_TIME.findall(text))
        # Agents print their own process id in diagnostics (`(node:4781) Warning: ...`).
        # Only where text names a process: a bare number equal to a pid (`2026` in a
        # date, a count in the model's text) is data, and stays.
        numbers = "|".join(str(pid) for pid in sorted(set(pids)) if pid > 0)
        self._pids = re.compile(PID_CONTEXT.format(numbers), re.IGNORECASE) if numbers else None
        # In a name the agent made in TMPDIR, its pid is a part of its own
        # (`dsh-subprocess-17345-1-...-stdout.log`).
        self._tmp_pids = re.compile(rf"(?<=[-_./])(?:{numbers})(?=[-_.]|/|$)") if numbers else None
        spelled = sorted({text for d in dates for text in date_spellings(d)}, key=len, reverse=True)
        self._dates = re.compile("|".join(map(re.escape, spelled))) if spelled else None
        self._scripted = frozenset(scripted)
        # Longest first: workdir usually lives below tmp or home. The lookahead keeps
        # `/tmp/run-1` from eating the head of a sibling `/tmp/run-10`.
        roots: dict[str, str] = {}
        for name, path in paths.items():
            path = path.rstrip("/")
            if len(path) <= 1:
                continue
            roots.setdefault(path, f"<{name}>")
            # Agents key per-project state by the path made into one name
            # (`-tmp-run-1-workdir` in qwen-code's memory directory).
            if path.count("/") >= 2:  # `/tmp` made `-tmp` would hit ordinary words
                for dashed in (path.replace("/", "-"), re.sub(r"[^A-Za-z0-9]", "-", path)):
                    roots.setdefault(dashed, f"<{name}:dashed>")
                # Some agents print a path relative to `/` (opencode titles a write
                # `tmp/parity-.../workdir/note.txt`). Longest-first order replaces the
                # absolute spelling before this one can match inside it.
                roots.setdefault(path.lstrip("/"), f"<{name}:unrooted>")
        # A dashed name goes on with `-`: `-tmp-run-1-home--cache` is `<home>/.cache`.
        # A `.` ends the path only when no name character follows it: `<workdir>.` closes
        # a sentence (native's persona), `/tmp/run-1.bak` is another path.
        self._paths = [
            (
                re.compile(
                    # An unrooted spelling must start a word: `/var/tmp/x` is not `tmp/x`.
                    (r"(?<![\w/.-])" if token.endswith(":unrooted>") else "")
                    + re.escape(p)
                    + (r"(?![\w]|\.[\w])" if ":" in token else r"(?![\w-]|\.[\w-])")
                ),
                token,
            )
            for p, token in sorted(roots.items(), key=lambda pair: -len(pair[0]))
        ]
        # One search says whether any of the patterns can match at all: every one needs
        # its root spelled in the text. A flood of 200,000 chunks is mostly text without.
        self._any_path = re.compile("|".join(map(re.escape, roots))) if roots else None
        self._long: list[tuple[str, str]] = []
        self._long_sorted = True

    def register(self, kind: str, value: Any) -> str:
        """Give `value` the next token of `kind` unless it has one; return the token."""
        table = self._by_kind.setdefault(kind, {})
        key = exact_key(value)
        if key not in table:
            table[key] = f"<{kind}:{len(table) + 1}>"
            if isinstance(value, str) and len(value) >= SUBSTRING_MIN:
                # Sorted when next used (`scrub_text`): sorting on every one made an
                # agent's 20,000 distinct UUIDs cost 24 s (quadratic).
                self._long.append((value, table[key]))
                self._long_sorted = False
        return table[key]

    def lookup(self, kind: str, value: Any) -> Any:
        """The token of `value` in `kind`, or `value` itself when it has none."""
        try:
            return self._by_kind.get(kind, {}).get(exact_key(value), value)
        except TypeError:  # unhashable junk where an id should be
            return value

    def count(self, kind: str) -> int:
        return len(self._by_kind.get(kind, {}))

    def discover(self, value: Any) -> None:
        """Register every id found under an id key anywhere in `value`."""
        # Pre-order, as the wire nests them: a key's id, then the ids inside its value.
        if isinstance(value, dict):
            for key, item in value.items():
                kind = ID_KEYS.get(key)
                if (
                    kind is not None
                    and isinstance(item, str)
                    and item
                    and (kind != "toolcall" or item not in self._scripted)
                ):
                    self.register(kind, item)
                if isinstance(item, _NESTED):
                    self.discover(item)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _NESTED):
                    self.discover(item)

    def discover_uuids(self, value: Any) -> None:
        """Register every UUID inside any string of `value` that has no token yet, and every
        background job id (`JOB_ID`)."""
        if isinstance(value, dict):
            for v in value.values():
                self.discover_uuids(v)
        elif isinstance(value, list):
            for v in value:
                self.discover_uuids(v)
        elif isinstance(value, str) and len(value) >= 6:
            for found in UUID.findall(value) if len(value) >= 36 else ():
                if not any(exact_key(found) in table for table in self._by_kind.values()):
                    self.register("uuid", found)
            for found in JOB_ID.findall(value):
                self.register("job", found)

    def scrub(self, value: Any, key: str | None = None) -> Any:
        """`value` with ids, machine paths and times replaced (a new object)."""
        if isinstance(value, dict):
            # Sorted: wire key order is no JSON fact, and sorted files diff well by eye.
            return {k: self.scrub(value[k], k) for k in sorted(value)}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        if (
            key in TIME_KEYS
            and isinstance(value, int | float | str)
            and not isinstance(value, bool)
            and value not in self._supplied_times
        ):
            return TIME
        if not isinstance(value, str):
            return value
        kind = ID_KEYS.get(key) if key else None
        if kind is not None:
            token = self.lookup(kind, value)
            if token is not value:
                return token
        return self.scrub_text(value)

    def _tmp_name(self, path: str) -> str:
        """A path below the run's TMPDIR with its random parts as positional tokens (the
        same part the same token, wherever it appears), its structure kept: where the
        agent puts a file (a long command's full output, native's spill files) is part of
        what it does, only the randomness is not."""
        path = TMP_DIR_SUFFIX.sub(lambda m: m.group(1) + self.register("tmpname", m.group(2)), path)
        path = TMP_HEX.sub(lambda m: self.register("tmpname", m.group()), path)
        return self._tmp_pids.sub("<pid>", path) if self._tmp_pids is not None else path

    def _time(self, found: re.Match[str]) -> str:
        return found.group() if found.group() in self._supplied_times else TIME

    def scrub_text(self, text: str) -> str:
        """Replace long ids, machine paths and ISO timestamps inside free text."""
        if not self._long_sorted:
            self._long.sort(key=lambda pair: -len(pair[0]))  # stable: first seen first
            self._long_sorted = True
        for raw, token in self._long:
            if raw in text:
                text = text.replace(raw, token)
        if self._any_path is not None and self._any_path.search(text):
            for pattern, token in self._paths:
                text = pattern.sub(token, text)
            if "<tmp>/" in text:
                text = TMP_PATH.sub(lambda m: self._tmp_name(m.group()), text)
        if "-" in text and self._by_kind.get("job"):
            # Short ids (0.1.0-rc.8's `bash-1`) are no `_long` substrings: by pattern.
            text = JOB_ID.sub(lambda m: str(self.lookup("job", m[0])), text)
        if not _DIGIT.search(text):
            return text  # times, pids and dates all hold a digit
        text = ISO_TIME.sub(self._time, text)
        if self._pids is not None:
            text = self._pids.sub(r"\g<pre><pid>", text)
        return self._dates.sub(DATE, text) if self._dates else text


_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def date_spellings(d: dt.date) -> list[str]:
    """How agents write a date in prompts: ISO, JS `toDateString`, en-US long and short,
    day-first. English names regardless of the machine's locale."""
    month, day = _MONTHS[d.month - 1], _DAYS[d.weekday()]
    return [
        d.isoformat(),
        f"{d.year}/{d.month:02}/{d.day:02}",
        f"{day[:3]} {month[:3]} {d.day:02} {d.year}",
        f"{day}, {month} {d.day}, {d.year}",
        f"{month} {d.day}, {d.year}",
        f"{day[:3]}, {d.day:02} {month[:3]} {d.year}",
        f"{d.day} {month} {d.year}",
        f"{d.month:02}/{d.day:02}/{d.year}",
        f"{d.month}/{d.day}/{d.year}",
        f"{d.day:02}/{d.month:02}/{d.year}",
        f"{d.day:02}.{d.month:02}.{d.year}",
    ]


def run_dates(now: dt.datetime | None = None) -> list[dt.date]:
    """The dates a run that just ended can have printed: today and yesterday, in local
    time and in UTC (a run can cross midnight; agents differ in which zone they use)."""
    now = now or dt.datetime.now(dt.UTC)
    moments = [now, now.astimezone()]
    return sorted({(m - dt.timedelta(days=k)).date() for m in moments for k in (0, 1)})


_SCALARS = (str, int, float, bool)
_NESTED = (dict, list)
"""A tuple, not `str | int | ...`: the union is built anew at every call."""


def hashable(value: Any) -> bool:
    """Whether `value` is a JSON scalar, so it can key a token table (ids are scalars)."""
    return isinstance(value, _SCALARS) or value is None

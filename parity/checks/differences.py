"""Two normalized views -> their typed differences (the parity diff's comparison).

Steps are compared pairwise (both runs played the same scenario). Inside a step the
lists of messages the agent sent (updates, agent requests, notes) are aligned like a
text diff, so one missing update shows as one `missing update`, not as every later
update shifted by one. Paired items are compared field by field, one path per leaf.

Each difference gets one category (in the spirit of Diffy's typed differences):
stop reason, error, missing update, extra update, changed field, ordering only,
chunking only, model request. "update" covers every item the agent sent in a step
(session updates, agent requests, notes), the path says which list it is.
`parity.checks.diff` applies the scenario's `diverge` rules to what this finds.

Values are compared exactly, as JSON carries them (`parity.core.exact`): `2` and `2.0`,
`true` and `1`, `"1"` and `1`, `null` and an absent key all differ. Lists inside items
are aligned here too, over exact canonical texts (deepdiff, used before, aligns lists
by `==`: it reported nothing for `[1]` against `[1.0]` or `[true]`).
"""

from __future__ import annotations

import difflib
import json
from collections import deque
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from parity.checks.comparable import comparable_views
from parity.core.exact import json_equal
from parity.scenario.selectors import Path, format_path
from parity.view.semantic import merge_chunks

STOP_REASON = "stop reason"
ERROR = "error"
MISSING_UPDATE = "missing update"
EXTRA_UPDATE = "extra update"
CHANGED_FIELD = "changed field"
ORDERING_ONLY = "ordering only"
CHUNKING_ONLY = "chunking only"
MODEL_REQUEST = "model request"
DRIFT = "declared difference drifted"
"""A side of a declared difference (`sides`) no longer does what it declares."""
CATEGORIES = (
    DRIFT,
    STOP_REASON,
    ERROR,
    MISSING_UPDATE,
    EXTRA_UPDATE,
    CHANGED_FIELD,
    ORDERING_ONLY,
    CHUNKING_ONLY,
    MODEL_REQUEST,
)


class _Absent:
    """The side of a difference where the value does not exist."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()

STEP_LISTS = ("updates", "agent_requests", "notes", "late")
# Keys not compared: `masked` legitimately differs per target (per-target masks), and
# `agent` says which build a snapshot came from (e.g. native's DSH version).
IGNORED_TOP = frozenset({"masked", "agent"})


@dataclass(frozen=True)
class Difference:
    """One typed difference between the reference view and the other view."""

    category: str
    path: str
    """Selector-style path (0-based indexes), in the reference view when it exists there."""
    ref: Any
    other: Any
    step: int | None = None
    """1-based step number, None for differences outside steps (after, model, process)."""
    step_kind: str = ""
    step_label: str = ""
    ref_path: Path | None = None
    other_path: Path | None = None
    detail: str = ""


def find_differences(ref: dict[str, Any], other: dict[str, Any], profile: str) -> list[Difference]:
    """Every difference between two views of one scenario; `ref` is the reference.
    Paths are in the views `comparable_views` makes of them (the model requests in
    canonical form when the two sides speak different dialects)."""
    ref, other = comparable_views(ref, other)
    return _Comparer(profile).views(ref, other)


class _Comparer:
    """Collects differences; one instance per comparison."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.out: list[Difference] = []
        self.step: tuple[int | None, str, str] = (None, "", "")

    def views(self, ref: dict[str, Any], other: dict[str, Any]) -> list[Difference]:
        ref_steps, other_steps = ref.get("steps", []), other.get("steps", [])
        for i in range(max(len(ref_steps), len(other_steps))):
            a = ref_steps[i] if i < len(ref_steps) else None
            b = other_steps[i] if i < len(other_steps) else None
            self.step_pair(i, a, b)
        self.step = (None, "", "")
        for key in ("before", "after"):
            self.items((key,), ref.get(key, []), other.get(key, []), updates=True)
        self.items(("model",), ref.get("model", []), other.get("model", []), category=MODEL_REQUEST)
        skip = IGNORED_TOP | {"steps", "before", "after", "model"}
        for key in sorted((set(ref) | set(other)) - skip):
            self.fields((key,), ref.get(key, ABSENT), other.get(key, ABSENT), (key,))
        return self.out

    def add(
        self,
        category: str,
        ref_path: Path | None,
        other_path: Path | None,
        a: Any,
        b: Any,
        detail: str = "",
    ) -> None:
        path = format_path(ref_path if ref_path is not None else other_path or ())
        step, kind, label = self.step
        self.out.append(
            Difference(category, path, a, b, step, kind, label, ref_path, other_path, detail)
        )

    def step_pair(self, i: int, a: dict[str, Any] | None, b: dict[str, Any] | None) -> None:
        base: Path = ("steps", i)
        known = a if a is not None else b or {}
        self.step = (
            known.get("step", i + 1),
            str(known.get("do", "")),
            str(known.get("label", "")),
        )
        if a is None or b is None:
            category = EXTRA_UPDATE if a is None else MISSING_UPDATE
            self.add(
                category,
                base if a else None,
                base if b else None,
                a or ABSENT,
                b or ABSENT,
                "whole step",
            )
            return
        self.outcome(base, a, b)
        for key in STEP_LISTS:
            self.items(
                (*base, key), a.get(key, []), b.get(key, []), updates=key in ("updates", "late")
            )
        rest = (set(a) | set(b)) - {"result", "error", *STEP_LISTS}
        for key in sorted(rest):
            self.fields((*base, key), a.get(key, ABSENT), b.get(key, ABSENT), (*base, key))

    def outcome(self, base: Path, a: dict[str, Any], b: dict[str, Any]) -> None:
        """Result vs error of a step: stop reason first, then errors, then other fields."""
        ra, rb, ea, eb = (
            a.get("result", ABSENT),
            b.get("result", ABSENT),
            a.get("error", ABSENT),
            b.get("error", ABSENT),
        )
        if (_outcome(a) is ABSENT) != (_outcome(b) is ABSENT):
            self.add(ERROR, base, base, _outcome(a), _outcome(b), "one side got no response")
            return
        if (ea is ABSENT) != (eb is ABSENT):
            self.add(ERROR, base, base, _outcome(a), _outcome(b), "one side failed")
            return
        if not json_equal(ea, eb):
            self.add(ERROR, (*base, "error"), (*base, "error"), ea, eb)
        stop_a = ra.get("stopReason", ABSENT) if isinstance(ra, dict) else ABSENT
        stop_b = rb.get("stopReason", ABSENT) if isinstance(rb, dict) else ABSENT
        if not json_equal(stop_a, stop_b):
            path = (*base, "result", "stopReason")
            self.add(STOP_REASON, path, path, stop_a, stop_b)
        if isinstance(ra, dict) and isinstance(rb, dict):
            ra = {k: v for k, v in ra.items() if k != "stopReason"}
            rb = {k: v for k, v in rb.items() if k != "stopReason"}
        elif not json_equal(stop_a, stop_b):
            return
        self.fields((*base, "result"), ra, rb, (*base, "result"))

    def fields(
        self, ref_base: Path, a: Any, b: Any, other_base: Path, category: str = CHANGED_FIELD
    ) -> None:
        """Field-level differences of two values, one per changed leaf.

        Objects are walked key by key (fast: a long run can pair tens of thousands of
        updates); lists are aligned like a text diff over their items' exact canonical
        texts, replaced runs compared pairwise and the rest reported as added or removed
        (what deepdiff reports, without its blindness to `1` against `1.0` in a list).
        """
        if json_equal(a, b):
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in [*a, *(k for k in b if k not in a)]:
                self.fields(
                    (*ref_base, key),
                    a.get(key, ABSENT),
                    b.get(key, ABSENT),
                    (*other_base, key),
                    category,
                )
            return
        if not (isinstance(a, list) and isinstance(b, list)):
            self.add(
                category,
                ref_base if a is not ABSENT else None,
                other_base if b is not ABSENT else None,
                a,
                b,
            )
            return
        matcher = difflib.SequenceMatcher(
            None, [_canon(x) for x in a], [_canon(x) for x in b], autojunk=False
        )
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            for i, j in zip_longest(range(i1, i2), range(j1, j2)):
                self.fields(
                    (*ref_base, i) if i is not None else ref_base,
                    a[i] if i is not None else ABSENT,
                    b[j] if j is not None else ABSENT,
                    (*other_base, j) if j is not None else other_base,
                    category,
                )

    def items(
        self,
        base: Path,
        la: list[Any],
        lb: list[Any],
        *,
        updates: bool = False,
        category: str | None = None,
    ) -> None:
        """Differences between two lists of wire items (aligned like a text diff)."""
        if json_equal(la, lb):
            return
        ka, kb = [_canon(x) for x in la], [_canon(x) for x in lb]
        if category is None and sorted(ka) == sorted(kb):
            self.add(
                ORDERING_ONLY, base, base, _summary(la), _summary(lb), "same items, other order"
            )
            return
        if category is None and updates and self.profile == "exact" and _merged(la) == _merged(lb):
            self.add(
                CHUNKING_ONLY, base, base, _summary(la), _summary(lb), "same text, other chunks"
            )
            return
        matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            pairs, lone_a, lone_b = _pair(la, lb, range(i1, i2), range(j1, j2))
            for i, j in pairs:
                self.fields((*base, i), la[i], lb[j], (*base, j), category or CHANGED_FIELD)
            for i in lone_a:
                at, item = _unwrapped((*base, i), la[i])
                self.add(category or MISSING_UPDATE, at, None, item, ABSENT)
            for j in lone_b:
                at, item = _unwrapped((*base, j), lb[j])
                self.add(category or EXTRA_UPDATE, None, at, ABSENT, item)


def _unwrapped(at: Path, item: Any) -> tuple[Path, Any]:
    """A lone `{update: U}` of `before`/`after` differs as its update, at `...update`:
    where a step's updates are, so `*.tool_call_update` explains a late one too."""
    if isinstance(item, dict) and set(item) == {"update"}:
        return (*at, "update"), item["update"]
    return at, item


def _pair(
    la: list[Any], lb: list[Any], ia: range, jb: range
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pair replaced items of the same kind in order; the rest are missing or extra.

    Order is kept: an item of `b` skipped over to reach a match stays unpaired (extra).
    Per-kind queues of positions keep this linear for long lists (a peer streaming one
    chunk per character gives tens of thousands of items).
    """
    queues: dict[str, deque[int]] = {}
    for j in jb:
        queues.setdefault(_kind_key(lb[j]), deque()).append(j)
    pairs: list[tuple[int, int]] = []
    lone_a: list[int] = []
    floor = jb.start - 1
    for i in ia:
        queue = queues.get(_kind_key(la[i]))
        while queue and queue[0] <= floor:
            queue.popleft()
        if not queue:
            lone_a.append(i)
            continue
        floor = queue.popleft()
        pairs.append((i, floor))
    paired_b = {j for _, j in pairs}
    return pairs, lone_a, [j for j in jb if j not in paired_b]


def _kind_key(item: Any) -> str:
    return repr(_kind(item))


def _kind(item: Any) -> Any:
    """What an item is, for pairing: its sessionUpdate, method, or its single key."""
    if isinstance(item, dict):
        for key in ("sessionUpdate", "method", "path"):
            if key in item:
                return (key, item[key])
        if len(item) == 1:
            (key,) = item
            return ("tag", key, _kind(item[key]))
    return type(item).__name__


def _canon(item: Any) -> str:
    """An item's exact text for alignment: JSON keeps `1`, `1.0`, `true` and `"1"` apart
    (`default=repr`: nothing outside JSON is mistaken for a string)."""
    return json.dumps(item, sort_keys=True, default=repr)


def _merged(items: list[Any]) -> list[str]:
    """Items with adjacent chunks merged (loose lists wrap updates as `{update: ...}`)."""
    plain = [x["update"] if isinstance(x, dict) and set(x) == {"update"} else x for x in items]
    return [_canon(x) for x in merge_chunks(plain)]


def _summary(items: list[Any]) -> list[Any]:
    """A short picture of a list: each item's kind and text, for ordering/chunking diffs."""
    out: list[Any] = []
    for x in items:
        kind = _kind(x)
        label = kind[1] if isinstance(kind, tuple) else kind
        content = x.get("content") if isinstance(x, dict) else None
        text = content.get("text") if isinstance(content, dict) else None
        out.append(f"{label} {json.dumps(text)}" if isinstance(text, str) else str(label))
    return out


def _outcome(step: dict[str, Any]) -> Any:
    if "error" in step:
        return {"error": step["error"]}
    if "result" in step:
        return {"result": step["result"]}
    return ABSENT

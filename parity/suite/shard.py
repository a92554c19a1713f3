"""`--parity-shard K/N`: this session runs the K-th of N groups of the collected items,
balanced by recorded durations, for CI jobs that each run one group (`parity merge`
joins their results; docs/ci.md).

pytest-split balances items by the durations it stores (`--store-durations`, a JSON
object of node id -> seconds). Its split is per item, but a scenario's parity items
compare its targets' runs, which the session shares through its run cache, so a
scenario's items must stay in one shard, or runs would happen twice. The groups here
are therefore the scenario files (every item of a file has the file's node id before
`::`), each weighted by the sum of its items' recorded durations, and pytest-split's
own least-duration algorithm deals the groups out. A group with no recorded duration
weighs the average of the known ones (pytest-split's rule), and ties break by name, so
every shard, in its own process, computes the same split.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

DURATIONS = "parity-durations.json"
"""The durations file at the project root (pytest-split's format), committed."""


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N), 1 <= K <= N; a usage error otherwise."""
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise pytest.UsageError(f"--parity-shard {text!r}: expected K/N with 1 <= K <= N")
    return int(k), int(n)


@dataclass(frozen=True)
class _Group:
    """One scenario file's items, as pytest-split's algorithms see an item."""

    nodeid: str
    members: tuple[str, ...]


def group_of(nodeid: str) -> str:
    return nodeid.partition("::")[0]


def split(nodeids: Sequence[str], durations: Mapping[str, float], splits: int) -> list[list[str]]:
    """The node ids of each of `splits` shards, in their collected order (pure)."""
    from pytest_split.algorithms import Algorithms

    members: dict[str, list[str]] = {}
    for nodeid in nodeids:
        members.setdefault(group_of(nodeid), []).append(nodeid)
    groups = [_Group(name, tuple(ids)) for name, ids in members.items()]
    weights = {
        g.nodeid: sum(durations[i] for i in g.members if i in durations)
        for g in groups
        if any(i in durations for i in g.members)
    }
    # The algorithm reads nothing of an item but its `nodeid`: a group stands in for one.
    dealt = Algorithms.least_duration.value(splits, groups, weights)  # type: ignore[arg-type]
    by_name = {g.nodeid: g for g in groups}
    chosen = [{i for g in shard.selected for i in by_name[g.nodeid].members} for shard in dealt]
    return [[i for i in nodeids if i in ids] for ids in chosen]


def load_durations(path: Path) -> dict[str, float]:
    """The durations file, or nothing (then the split is by name alone)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if isinstance(data, list):  # pytest-split's older list-of-pairs format
        data = dict(data)
    return {str(k): float(v) for k, v in data.items()}


def store_durations(path: Path, durations: Mapping[str, float]) -> None:
    """Write `durations` over the file's entries (pytest-split's format and rounding)."""
    merged = {**load_durations(path), **{k: round(v, 3) for k, v in durations.items()}}
    path.write_text(json.dumps(merged, sort_keys=True, indent=4) + "\n", encoding="utf-8")


class ShardPlugin:
    """Deselects every item outside this shard, after every other selection (`-k`,
    `--targets`), so that each shard splits the same items."""

    def __init__(self, shard: tuple[int, int], durations: Path) -> None:
        self.shard = shard
        self.durations = durations
        self.others: set[str] = set()
        """Node ids this plugin deselected: other shards' items, which do not make
        this shard's run partial the way `-k` does (the merge has them)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        k, n = self.shard
        mine = set(split([i.nodeid for i in items], load_durations(self.durations), n)[k - 1])
        drop = [i for i in items if i.nodeid not in mine]
        self.others = {i.nodeid for i in drop}
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = [i for i in items if i.nodeid in mine]

    def pytest_report_collectionfinish(self, config: pytest.Config) -> str:
        k, n = self.shard
        return f"parity: shard {k}/{n} ({len(self.others)} item(s) run in other shards)"

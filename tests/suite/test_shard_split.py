"""`--parity-shard K/N`'s split (pure): scenario files dealt out whole, by duration, with
pytest-split's least-duration algorithm; the same split in every process."""

from __future__ import annotations

from pathlib import Path

import pytest

from parity.suite.shard import load_durations, parse_shard, split, store_durations


def ids(files: dict[str, int]) -> list[str]:
    """Node ids of `n` items per scenario file."""
    return [f"scenarios/{f}.yaml::{t}" for f, n in files.items() for t in ("a", "b", "c")[:n]]


def test_a_scenarios_items_stay_in_one_shard_and_every_item_runs_once() -> None:
    nodeids = ids({"s1": 3, "s2": 2, "s3": 1, "s4": 3, "s5": 2})
    shards = split(nodeids, {}, 3)
    assert sorted(i for s in shards for i in s) == sorted(nodeids)
    owner = {i.partition("::")[0]: k for k, s in enumerate(shards) for i in s}
    for k, shard in enumerate(shards):
        assert all(owner[i.partition("::")[0]] == k for i in shard)
        assert shard == [i for i in nodeids if i in shard]  # collected order kept


def test_groups_are_balanced_by_their_recorded_durations() -> None:
    nodeids = ids({"slow": 2, "mid": 1, "quick1": 1, "quick2": 1, "quick3": 1})
    durations = {
        "scenarios/slow.yaml::a": 30.0,
        "scenarios/slow.yaml::b": 30.0,
        "scenarios/mid.yaml::a": 40.0,
        "scenarios/quick1.yaml::a": 10.0,
        "scenarios/quick2.yaml::a": 10.0,
        "scenarios/quick3.yaml::a": 10.0,
    }
    shards = split(nodeids, durations, 2)
    totals = sorted(sum(durations[i] for i in s) for s in shards)
    # Largest first, each to the lighter shard: slow (60) and mid (40) apart, then the
    # quick ones fill up mid's shard until the two tie, and the last goes to the first.
    assert totals == [60.0, 70.0]
    slow = next(s for s in shards if "scenarios/slow.yaml::a" in s)
    assert "scenarios/slow.yaml::b" in slow and "scenarios/mid.yaml::a" not in slow


def test_without_durations_the_split_is_stable_and_even() -> None:
    nodeids = ids({f"s{i}": 1 for i in range(9)})
    first = split(nodeids, {}, 3)
    assert first == split(list(nodeids), {}, 3)
    assert [len(s) for s in first] == [3, 3, 3]


def test_unknown_scenarios_weigh_the_average_of_the_known() -> None:
    nodeids = ids({"known": 1, "new1": 1, "new2": 1})
    shards = split(nodeids, {"scenarios/known.yaml::a": 5.0}, 2)
    assert sorted(len(s) for s in shards) == [1, 2]


def test_shard_syntax() -> None:
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0"):
        with pytest.raises(pytest.UsageError):
            parse_shard(bad)


def test_durations_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    assert load_durations(path) == {}
    store_durations(path, {"x::a": 1.23456})
    store_durations(path, {"y::b": 2.0})  # adds to what is there, as pytest-split does
    assert load_durations(path) == {"x::a": 1.235, "y::b": 2.0}

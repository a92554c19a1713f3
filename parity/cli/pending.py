"""Pending snapshots: what a run that could not write them (CI) leaves for a reviewer.

`parity run --pending DIR` (or `--report DIR`, into `DIR/pending`) writes the new
snapshot of every clean run that drifted from its snapshot, or has none, as
`DIR/<scenario>/<target>.yaml`: insta's `.snap.new`. `parity review --from DIR` walks
them with the same accept / reject / skip / quit as a live review; nothing is run, so a
reviewer accepts CI's snapshots on a machine that has none of the agents. Accepting
writes the snapshot; accepting or rejecting removes the pending file, skipping keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from parity.cli.review import Pending
from parity.config.project import Config


def pending_items(
    config: Config, source: Path, files: Sequence[Path], select: set[str] | None = None
) -> tuple[list[Pending], list[str]]:
    """The pending snapshots under `source` for the scenario `files` (and `select`ed
    targets), as review items; notes for what cannot be reviewed."""
    from parity.engine.store import (
        pending_snapshots,
        read_text,
        remove,
        snapshot_path,
    )
    from parity.scenario.errors import ScenarioInvalid
    from parity.scenario.load import load_scenario
    from parity.view.dump import load_view

    source = pending_folder(source)
    wanted = {f.resolve() for f in files}
    items: list[Pending] = []
    notes: list[str] = []
    found = pending_snapshots(source)
    skipped = 0
    for name, target, path in found:
        scenario_file = config.scenarios_dir / f"{name}.yaml"
        if scenario_file.resolve() not in wanted or (select is not None and target not in select):
            skipped += 1
            continue
        try:
            scenario = load_scenario(scenario_file, config.scenarios_dir)
        except (ScenarioInvalid, OSError) as exc:
            notes.append(f"not reviewed: {path} (its scenario {scenario_file}: {exc})")
            continue
        text = read_text(path)
        if text is None:  # decided meanwhile by another review
            continue
        snap = snapshot_path(config.snapshots_dir, name, target)
        recorded = read_text(snap)
        if recorded == text:
            notes.append(f"already recorded: {name} :: {target} (pending file removed)")
            remove(path)
            continue
        item = Pending(scenario, target, snap, recorded, text, load_view(text), pending=path)
        items.append(item)
    # As a live review walks them: scenario by scenario, each in its targets' order.
    items.sort(key=lambda i: (i.scenario.name, _order(i.scenario.targets, i.target)))
    if not items and not notes and not found:
        notes.append(f"no pending snapshots under {source}")
    elif not items and not notes:
        notes.append(
            f"none of the {skipped} pending snapshot(s) under {source} is of the selected "
            f"scenarios and targets (scenarios below {config.scenarios_dir})"
        )
    return items, notes


def pending_folder(source: Path) -> Path:
    """Where the pending snapshots of `source` are: `source` itself (`--pending DIR`), or
    its `pending/` folder when it is a report directory (`--report DIR` writes them to
    `DIR/pending`, and CI uploads the whole report)."""
    inner = source / "pending"
    if not inner.is_dir():
        return source
    # A `--pending DIR` may hold a scenario folder named `pending` among others; a report
    # holds YAML only in its pending/ folder.
    outside = any(not p.is_relative_to(inner) for p in source.rglob("*.yaml"))
    return source if outside else inner


def _order(targets: Sequence[str], target: str) -> tuple[int, str]:
    return (targets.index(target) if target in targets else len(targets), target)

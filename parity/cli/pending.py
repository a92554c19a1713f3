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
from parity.config import Config


def pending_items(
    config: Config, source: Path, files: Sequence[Path], select: set[str] | None = None
) -> tuple[list[Pending], list[str]]:
    """The pending snapshots under `source` for the scenario `files` (and `select`ed
    targets), as review items; notes for what cannot be reviewed."""
    from parity.engine.store import SUFFIX, snapshot_path
    from parity.scenario.errors import ScenarioInvalid
    from parity.scenario.load import load_scenario
    from parity.view.dump import load_view

    wanted = {f.resolve() for f in files}
    items: list[Pending] = []
    notes: list[str] = []
    for path in sorted(source.rglob(f"*{SUFFIX}")):
        name = path.parent.relative_to(source).as_posix()
        target = path.stem
        scenario_file = config.scenarios_dir / f"{name}{SUFFIX}"
        if scenario_file.resolve() not in wanted or (select is not None and target not in select):
            continue
        try:
            scenario = load_scenario(scenario_file, config.scenarios_dir)
        except (ScenarioInvalid, OSError) as exc:
            notes.append(f"not reviewed: {path} (its scenario {scenario_file}: {exc})")
            continue
        text = path.read_text(encoding="utf-8")
        snap = snapshot_path(config.snapshots_dir, name, target)
        recorded = snap.read_text(encoding="utf-8") if snap.is_file() else None
        if recorded == text:
            notes.append(f"already recorded: {name} :: {target} (pending file removed)")
            path.unlink()
            continue
        item = Pending(scenario, target, snap, recorded, text, load_view(text), pending=path)
        items.append(item)
    # As a live review walks them: scenario by scenario, each in its targets' order.
    items.sort(key=lambda i: (i.scenario.name, _order(i.scenario.targets, i.target)))
    if not items and not notes and not any(source.rglob(f"*{SUFFIX}")):
        notes.append(f"no pending snapshots under {source}")
    return items, notes


def _order(targets: Sequence[str], target: str) -> tuple[int, str]:
    return (targets.index(target) if target in targets else len(targets), target)

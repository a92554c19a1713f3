"""The suites the package ships: agent-agnostic scenarios any ACP agent can run, with the
reference agents' recordings and the known differences that apply to them.

`parity run --suite acp --targets +NAME` runs them against an agent declared only in the
user's `parity.toml` (docs/own-agent.md). The suite's files are read where they are, never
copied into the user's project: its scenarios and the reference recordings from the
package, the user's recordings of their own agents under `parity-suites/<suite>/` of the
project (what `parity record --suite` writes and `parity review --suite` walks). A
recording there wins over the shipped one of the same target.

Where the package finds them: in an installed wheel, `parity/suites/<suite>/` (setup.py
copies them there when the wheel is built); in a checkout of this repository, the
repository's own `scenarios/`, `snapshots/` and `known-differences.yaml`, which are
the single source of both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SUITES: dict[str, tuple[str, ...]] = {"acp": ("peers",)}
"""Suite name -> the scenario folders it holds (below the scenarios directory)."""

FAMILY = "peer"
"""The target family whose known differences a suite run applies: what ACP leaves to each
agent, declared once for the agents the suite was recorded with."""

PACKAGED = Path(__file__).resolve().parents[1] / "suites"
"""Where an installed wheel has the suites (`parity/suites/<name>/`)."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""A checkout of this repository, where the suites' files are the project's own."""
FILE = "known-differences.yaml"
USER_DIR = "parity-suites"
"""The folder of the user's project holding their recordings of each suite."""


class SuiteError(ValueError):
    """An unknown suite, or a package without its files; the message says what to do."""


@dataclass(frozen=True)
class Suite:
    """Where one shipped suite's files are."""

    name: str
    scenarios_dir: Path
    """Scenario names are relative to it (`peers/text-turn`), as in this repository."""
    folders: tuple[str, ...]
    recordings: Path
    """The reference agents' recordings, `<recordings>/<scenario>/<target>.yaml`."""
    known: Path
    """The known differences file; a suite run applies its `family: peer` entries."""

    @property
    def paths(self) -> list[Path]:
        """What a run of the whole suite collects."""
        return [self.scenarios_dir / folder for folder in self.folders]


def shipped_suite(name: str, packaged: Path = PACKAGED, checkout: Path = CHECKOUT) -> Suite:
    """The suite `name` as this installation has it; SuiteError when it has not."""
    if name not in SUITES:
        raise SuiteError(f"no suite {name!r}: the package ships {', '.join(sorted(SUITES))}")
    folders = SUITES[name]
    base = packaged / name
    if all((base / "scenarios" / f).is_dir() for f in folders):
        return Suite(name, base / "scenarios", folders, base / "snapshots", base / FILE)
    if all((checkout / "scenarios" / f).is_dir() for f in folders):
        return Suite(name, checkout / "scenarios", folders, checkout / "snapshots", checkout / FILE)
    raise SuiteError(
        f"suite {name!r}: its files are not in this installation ({base}); reinstall "
        f"acp-parity from a wheel or a checkout of its repository"
    )

"""The project's harness configuration: `parity.toml` (or `[tool.parity]` in
`pyproject.toml`) at the project root.

Keys: `scenarios` (the scenarios directory, default `scenarios`), `snapshots` (default
`snapshots`), `known_differences` (default `known-differences.yaml`) and
`[targets.<name>]` tables (`parity.targets.spec`). Every command and
the pytest plugin read the project through `load_config`, so each one honours the same
directories, and each reads it once: `parity run` hands the `Config` it read to the
plugin (`parity.suite.options.GivenConfig`), the plugin hands it to its xdist workers
(`Config.to_dict` in their `workerinput`), `parity validate` to its per-file lookup.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parity.config.suites import FAMILY, USER_DIR, shipped_suite
from parity.targets.spec import TargetConfigError, TargetSpec, declared_targets

if TYPE_CHECKING:
    from parity.scenario.errors import ScenarioError
    from parity.scenario.model import Rule


@dataclass(frozen=True)
class Config:
    """The project's harness configuration."""

    root: Path
    targets: dict[str, TargetSpec]
    scenarios_dir: Path
    snapshots_dir: Path
    source: str
    """The file the project settings came from, or `built-in`."""
    known_differences: Path = Path("known-differences.yaml")
    """The project's known differences (`parity.scenario.known`); absent: none."""
    project: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The project's `[parity]` settings as read (`project_table`): what `to_dict` hands
    on, so another process makes the same configuration without reading the file."""
    suite: str | None = None
    """The shipped suite this configuration runs (`--suite`, `with_suite`), or None."""
    recordings_dir: Path | None = None
    """Recordings read where `snapshots_dir` has none (a shipped suite's reference
    agents); never written."""
    suite_known: Path | None = None
    """A shipped suite's known differences: its `family: peer` entries apply too."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data (an xdist worker's `workerinput`); `from_dict` makes it again."""
        data = {"root": str(self.root), "project": dict(self.project), "source": self.source}
        return {**data, "suite": self.suite}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        config = config_of(Path(data["root"]), data["project"], str(data["source"]))
        return with_suite(config, data["suite"]) if data.get("suite") else config

    def recording(self, scenario: str, target: str) -> Path:
        """The file holding `target`'s recording of `scenario`: the project's own, else
        the shipped one (a suite's reference agents), else where the project's would be."""
        name = f"{scenario}/{target}.yaml"
        own = self.snapshots_dir / name
        if own.is_file() or self.recordings_dir is None:
            return own
        shipped = self.recordings_dir / name
        return shipped if shipped.is_file() else own

    @property
    def families(self) -> dict[str, str]:
        """Target name -> its family (family-wide known differences apply by it)."""
        return {name: spec.family for name, spec in self.targets.items()}

    def known_findings(
        self, acp_defs: Collection[str] | None = None
    ) -> tuple[list[ScenarioError], list[Rule]]:
        """Every finding of the project's known differences (the file, then each target
        table's own `known_differences`), and the entries when there is no error. An id
        is unique across all of them."""
        # Imported here: reading the configuration must not load jsonschema and YAML.
        from parity.scenario.errors import ScenarioError
        from parity.scenario.known import check_known_text, check_table_entries

        findings: list[ScenarioError] = []
        rules: list[Rule] = []
        path = self.known_differences
        if path.is_file():
            found, rules = check_known_text(
                path.read_text(encoding="utf-8"), str(path), self.families, acp_defs
            )
            findings += found
        seen = {rule.id: str(rule.where) for rule in rules}
        for name, spec in sorted(self.targets.items()):
            if not spec.known_differences:
                continue
            where = f"{spec.source}: target {name!r}"
            found, own = check_table_entries(
                name, where, spec.known_differences, self.families, acp_defs
            )
            findings += found
            for rule in own:
                if rule.id in seen:
                    message = f"duplicate id {rule.id!r} (also {seen[rule.id]})"
                    findings.append(ScenarioError(where, 0, 0, "known_differences", message))
                seen.setdefault(rule.id, where)
            rules += own
        if self.suite_known is not None and self.suite_known.is_file():
            found, shipped = check_known_text(
                self.suite_known.read_text(encoding="utf-8"),
                str(self.suite_known),
                self.families,
                acp_defs,
            )
            findings += found
            rules += [r for r in shipped if r.id not in seen and self._suite_rule(r)]
        if any(f.severity == "error" for f in findings):
            return findings, []
        return findings, rules

    def _suite_rule(self, rule: Rule) -> bool:
        """Whether a shipped suite's known difference applies in its run: declared for
        the peer family, or for targets that are all of it (one reference agent's own
        fact). The repository's others describe agents the suite does not run."""
        if rule.family:
            return rule.family == FAMILY
        targets = rule.targets or []
        return bool(targets) and all(self.families.get(t) == FAMILY for t in targets)

    def known_rules(self, acp_defs: Collection[str] | None = None) -> list[Rule]:
        """The project's known differences; `ScenarioInvalid` with every error."""
        from parity.scenario.errors import ScenarioInvalid

        findings, rules = self.known_findings(acp_defs)
        if any(f.severity == "error" for f in findings):
            raise ScenarioInvalid(findings)
        return rules


def project_table(root: Path) -> tuple[dict[str, Any], str]:
    """The project's `[parity]` settings: `parity.toml`, else `[tool.parity]`, else none."""
    parity_toml = root / "parity.toml"
    try:
        if parity_toml.is_file():
            return tomllib.loads(parity_toml.read_text(encoding="utf-8")), str(parity_toml)
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            table = data.get("tool", {}).get("parity")
            if isinstance(table, dict):
                return table, f"{pyproject} [tool.parity]"
    except tomllib.TOMLDecodeError as exc:
        raise TargetConfigError(f"{parity_toml if parity_toml.is_file() else root}: {exc}") from exc
    return {}, "built-in"


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding `parity.toml` or `pyproject.toml`."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / "parity.toml").is_file() or (directory / "pyproject.toml").is_file():
            return directory
    return start


def load_config(root: Path | None = None) -> Config:
    """Built-in targets merged with the project's declarations (project keys win)."""
    root = find_root(Path.cwd()) if root is None else root.resolve()
    project, source = project_table(root)
    return config_of(root, project, source)


def with_suite(config: Config, name: str) -> Config:
    """`config` running the shipped suite `name` (`parity.config.suites`): its scenarios,
    the user's recordings under `parity-suites/<name>/` with the shipped ones behind
    them, and its known differences beside the project's. SuiteError when there is none."""
    suite = shipped_suite(name)
    return dataclasses.replace(
        config,
        suite=name,
        scenarios_dir=suite.scenarios_dir,
        snapshots_dir=config.root / USER_DIR / name,
        recordings_dir=suite.recordings,
        suite_known=suite.known,
    )


def config_of(root: Path, project: Mapping[str, Any], source: str) -> Config:
    """The configuration a project's `[parity]` settings (`project_table`) make: pure,
    so a configuration read once can be made again elsewhere from plain data."""
    return Config(
        root=root,
        targets=declared_targets(project.get("targets", {}), source),
        scenarios_dir=root / str(project.get("scenarios", "scenarios")),
        snapshots_dir=root / str(project.get("snapshots", "snapshots")),
        source=source,
        known_differences=root / str(project.get("known_differences", "known-differences.yaml")),
        project=project,
    )

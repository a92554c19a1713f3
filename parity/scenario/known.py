"""The project's known differences: one reviewed file of differences every scenario uses.

Facts of a target version (native 0.1.0-rc.8 answers `session/new` with `sessionId`
only, sends no `usage_update`, ...) hold in every scenario that compares that target,
so they are written once, in the file `parity.toml`'s `known_differences` names
(default `known-differences.yaml` at the project root), instead of in each scenario's
`diverge`. Each entry names its target, the versions it holds for, the selector, what
each side does there (`parity.scenario.pins`), and the reason (docs/known-differences.md).
An entry may name a `family` instead of a target: a difference ACP leaves to each agent
(its own capabilities, tool titles, permission options, ...), for every comparison
between two targets of that family, with one side, `each`, that all of them hold.

Text -> findings (file:line:col, like a scenario's) -> `Rule`s with `id` and `versions`
set; `parity.checks.diff` applies them beside a scenario's own `diverge`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from yaml.nodes import Node

from parity.scenario.errors import RULE_REASON_HINT, ScenarioError, ScenarioInvalid, did_you_mean
from parity.scenario.model import Rule, Where
from parity.scenario.pins import EACH, OTHERS, acp_refs, side_problem, versions_problem
from parity.scenario.schema_findings import schema_findings
from parity.scenario.selectors import parse_selector
from parity.scenario.yaml_positions import Sink, locate, mappings, parse

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "known-differences.schema.json"
HINT = "see docs/known-differences.md"


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def check_known_text(
    text: str,
    file: str,
    families: Mapping[str, str] | None = None,
    acp_defs: Collection[str] | None = None,
) -> tuple[list[ScenarioError], list[Rule]]:
    """Every finding of a known-differences file, and its entries when it has no error.
    Pure; never raises for bad input. With `families` (target -> family), each entry's
    target must be one of them, and a family entry applies to that family's targets;
    with `acp_defs`, each ACP definition a side names must be one of them."""
    node, data, findings = parse(text, file)
    if node is None:
        if findings and findings[0].message == "empty file":
            return [], []  # an empty file declares nothing
        return findings, []
    findings += schema_findings(data, node, file, _validator())
    if isinstance(data, dict):
        sink = Sink(node, file)
        _cross_checks(data, sink, sorted(families) if families is not None else None, acp_defs)
        findings += sink.found
    findings.sort(key=lambda f: (f.line, f.column, f.severity, f.key, f.message))
    if any(f.severity == "error" for f in findings):
        return findings, []
    return findings, _rules(data, node, file, families or {})


def load_known(
    path: Path, families: Mapping[str, str] | None = None, acp_defs: Collection[str] | None = None
) -> list[Rule]:
    """The project's known differences; none when the file does not exist. Raises
    `ScenarioInvalid` with every error of a broken file."""
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    findings, rules = check_known_text(text, str(path), families, acp_defs)
    if any(f.severity == "error" for f in findings):
        raise ScenarioInvalid(findings)
    return rules


def check_table_entries(
    target: str,
    where: str,
    entries: Sequence[Mapping[str, Any]],
    families: Mapping[str, str] | None = None,
    acp_defs: Collection[str] | None = None,
) -> tuple[list[ScenarioError], list[Rule]]:
    """A target table's own known differences (`[[targets.NAME.known_differences]]`),
    checked exactly as the file's entries with `target: NAME`; findings name `where`
    (the table) and the key, since TOML leaves no line to point at."""
    text = yaml.safe_dump(
        {"differences": [{"target": target, **entry} for entry in entries]}, sort_keys=False
    )
    found, rules = check_known_text(text, where, families, acp_defs)
    findings = [
        ScenarioError(
            where,
            0,
            0,
            f.key.replace("differences", "known_differences", 1),
            f.message,
            f.hint,
            f.severity,
        )
        for f in found
    ]
    for rule in rules:
        rule.where = Where(f"{where} known_differences {rule.id!r}")
    return findings, rules


def _cross_checks(
    data: dict[str, Any], sink: Sink, targets: list[str] | None, acp_defs: Collection[str] | None
) -> None:
    seen: dict[str, int] = {}
    for i, entry in mappings(data.get("differences")):
        at = ("differences", i)
        ident = entry.get("id")
        if isinstance(ident, str):
            if ident in seen:
                sink.add((*at, "id"), f"duplicate id {ident!r} (entry {seen[ident] + 1})", HINT)
            seen.setdefault(ident, i)
        target = entry.get("target")
        if ("target" in entry) == ("family" in entry):
            sink.add(
                at,
                "an entry names one `target`, or one `family` (what ACP leaves to each agent)",
                HINT,
            )
        if "family" in entry and "versions" in entry:
            sink.add(
                (*at, "versions"), "a family entry holds for every version: no `versions`", HINT
            )
        if isinstance(target, str) and targets is not None and target not in targets:
            hint = did_you_mean(target, targets) or f"known targets: {', '.join(targets)}"
            sink.add((*at, "target"), f"unknown target {target!r}", hint)
        selector = entry.get("path")
        if isinstance(selector, str) and selector:
            try:
                parse_selector(selector)
            except ValueError as exc:
                sink.add((*at, "path"), str(exc), HINT)
        versions = entry.get("versions")
        problem = versions_problem(versions) if isinstance(versions, str) and versions else None
        if problem:
            sink.add((*at, "versions"), problem, HINT)
        reason = entry.get("reason")
        if isinstance(reason, str) and reason and not reason.strip():
            sink.add((*at, "reason"), "reason is blank", RULE_REASON_HINT)
        _check_follows(entry, data, (*at, "follows"), sink)
        raw_sides = entry.get("sides")
        sides: dict[str, Any] = raw_sides if isinstance(raw_sides, dict) else {}
        _check_sides(sides, target, (*at, "sides"), sink, targets)
        if isinstance(entry.get("family"), str):
            _check_family_sides(sides, (*at, "sides"), sink)
        for name, side in sides.items():
            for ref in acp_refs(side):
                if acp_defs is not None and ref not in acp_defs:
                    hint = did_you_mean(ref, sorted(acp_defs)) or "see the ACP schema's $defs"
                    sink.add((*at, "sides", name), f"the ACP schema defines no {ref!r}", hint)


def _check_follows(entry: dict[str, Any], data: dict[str, Any], at: Any, sink: Sink) -> None:
    """`follows` names another entry of the same file (or table), of the same target,
    that does not follow (down its chain) from this one."""
    cause = entry.get("follows")
    if not isinstance(cause, str) or not cause:
        return
    entries = {e.get("id"): e for _, e in mappings(data.get("differences"))}
    if cause == entry.get("id"):
        sink.add(at, "an entry cannot follow from itself", FOLLOWS_HINT)
    elif cause not in entries:
        ids = sorted(i for i in entries if isinstance(i, str))
        sink.add(at, f"no entry {cause!r} to follow from", did_you_mean(cause, ids) or FOLLOWS_HINT)
    elif _follows_back(entries, cause, entry.get("id")):
        sink.add(at, f"{cause!r} follows, down its chain, from this entry: a cycle", FOLLOWS_HINT)
    elif entries[cause].get("target") != entry.get("target"):
        sink.add(at, f"{cause!r} is a fact of another target", FOLLOWS_HINT)


def _follows_back(entries: dict[Any, dict[str, Any]], cause: str, ident: Any) -> bool:
    """Whether the chain from `cause` up its own `follows` comes back to `ident`."""
    seen: set[str] = set()
    while isinstance(cause, str) and cause in entries and cause not in seen:
        if cause == ident:
            return True
        seen.add(cause)
        cause = entries[cause].get("follows", "")
    return False


FOLLOWS_HINT = "`follows` names the id of the entry whose fact this one follows from"


def _check_family_sides(sides: dict[str, Any], at: tuple[Any, ...], sink: Sink) -> None:
    """A family entry states one side, `each`: what every target of the family does."""
    if EACH not in sides:
        sink.add(at, f"a family entry's sides are {EACH!r}: what every target of it does", HINT)
    for name in sides:
        if name != EACH:
            sink.add((*at, name), f"a family entry has one side, {EACH!r}, not {name!r}", HINT)


def _check_sides(
    sides: Any, target: Any, at: tuple[Any, ...], sink: Sink, targets: list[str] | None
) -> None:
    """Both sides are stated: the target's own and `others`; another key names a
    declared target whose side differs from `others`."""
    if not isinstance(sides, dict):
        return
    if isinstance(target, str):
        for needed in (target, OTHERS):
            if needed not in sides:
                sink.add(at, f"sides has no {needed!r}: state what each side does", HINT)
        for name in sides:
            if name not in (target, OTHERS) and targets is not None and name not in targets:
                hint = did_you_mean(name, targets) or f"the sides are {target!r} and {OTHERS!r}"
                sink.add((*at, name), f"side {name!r} is not a known target", hint)
    for name, side in sides.items():
        problem = side_problem(side)
        if problem:
            sink.add((*at, name), problem, HINT)


def _rules(data: Any, root: Node, file: str, families: Mapping[str, str]) -> list[Rule]:
    out: list[Rule] = []
    for i, entry in mappings(data.get("differences") if isinstance(data, dict) else None):
        node = locate(root, ("differences", i))
        family = entry.get("family")
        members = sorted(n for n, f in families.items() if f == family)
        out.append(
            Rule(
                path=entry["path"],
                reason=entry["reason"],
                targets=members if family else [entry["target"]],
                family=family,
                where=Where(file, node.start_mark.line + 1, node.start_mark.column + 1),
                sides=dict(entry["sides"]),
                id=entry["id"],
                versions=entry.get("versions"),
                scenarios=list(entry["scenarios"]) if "scenarios" in entry else None,
                follows=entry.get("follows", ""),
            )
        )
    return out

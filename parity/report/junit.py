"""JUnit XML of a parity session, for CI: `render_junit(data) -> str`.

One `<testcase>` per scenario item of the session data (`parity.report.results.session_data`):
`classname` is the scenario (`baseline/text-exchange`), `name` the item (`plus`, or
`parity[plus~native]`; an invalid file's item is `validate`, classname its path). A
failing check gets a `<failure>` (a harness error an `<error>`) whose message is the
cell's label (`differs: changed field`) with the reason and whose text is the item's
whole failure report; a skipped one gets `<skipped>` with its reason. Properties have
plain names: `status`, `check`, `target`, `reference`, `recorded`, `categories`,
`differences`, `explained`, `reason`.

Characters XML 1.0 forbids (NUL and most other C0 controls, which agent output does
carry: ANSI colour codes, stray NULs on stderr) are stripped from every value.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_CHECKS = {"target": "snapshot", "parity": "parity", "validate": "validate"}


def xml_text(value: Any) -> str:
    """`value` as text XML 1.0 can hold: forbidden characters stripped."""
    return _FORBIDDEN.sub("", str(value))


def _lookup(data: Mapping[str, Any]) -> dict[tuple[str, str, str], tuple[Any, Any]]:
    """(scenario, kind, target) -> (its cell part, its diff record or None)."""
    out: dict[tuple[str, str, str], tuple[Any, Any]] = {}
    for s in data.get("scenarios", []):
        diffs = {(d["kind"], d["target"]): d for d in s.get("diffs", [])}
        for c in s.get("cells", []):
            for kind, part in (("target", c.get("own")), ("parity", c.get("parity"))):
                if part is not None:
                    key = (s["name"], kind, c["target"])
                    out[key] = (part, diffs.get((kind, c["target"])))
    return out


def _properties(item: Mapping[str, Any], part: Any, diff: Any) -> list[tuple[str, str]]:
    props = [
        ("status", item.get("status", "")),
        ("check", _CHECKS.get(item.get("kind", ""), item.get("kind", ""))),
    ]
    if item.get("target"):
        props.append(("target", item["target"]))
    if item.get("reference"):
        props.append(("reference", item["reference"]))
    if part is not None and item.get("kind") == "parity":
        props.append(("recorded", "yes" if part.get("recorded") else "no"))
    if part is not None and part.get("categories"):
        props.append(("categories", ", ".join(part["categories"])))
    if diff is not None:
        props.append(("differences", str(diff.get("count", 0))))
        props.append(("explained", str(diff.get("explained_count", 0))))
    if item.get("reason"):
        props.append(("reason", item["reason"]))
    return props


def render_junit(data: Mapping[str, Any]) -> str:
    """The session's items as one JUnit `<testsuite>` (see the module doc)."""
    lookup = _lookup(data)
    items = list(data.get("items", []))
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    total = 0.0
    cases = []
    for item in items:
        key = (item.get("scenario", ""), item.get("kind", ""), item.get("target", ""))
        part, diff = lookup.get(key, (None, None))
        duration = float(item.get("duration", 0.0))
        total += duration
        case = ET.Element(
            "testcase",
            classname=xml_text(item.get("scenario", "") or item.get("file", "")),
            name=xml_text(item.get("name", "")),
            file=xml_text(item.get("file", "")),
            time=f"{duration:.3f}",
        )
        props = ET.SubElement(case, "properties")
        for name, value in _properties(item, part, diff):
            ET.SubElement(props, "property", name=name, value=xml_text(value))
        reason = str(item.get("reason", ""))
        label = part["label"] if part is not None else str(item.get("status", ""))
        if item.get("outcome") == "failed":
            error = reason.startswith("harness error")
            counts["errors" if error else "failures"] += 1
            failed = item.get("status") == "fail" and reason
            message = label + (f" ({reason})" if failed else "")
            failure = ET.SubElement(
                case,
                "error" if error else "failure",
                message=xml_text(message),
                type=xml_text(item.get("status", "fail")),
            )
            failure.text = xml_text(item.get("text", ""))
        elif item.get("outcome") == "skipped":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=xml_text(item.get("text") or reason))
        cases.append(case)
    suite = ET.Element(
        "testsuite",
        name="parity",
        tests=str(len(cases)),
        failures=str(counts["failures"]),
        errors=str(counts["errors"]),
        skipped=str(counts["skipped"]),
        time=f"{total:.3f}",
    )
    if data.get("generated"):
        suite.set("timestamp", xml_text(data["generated"]))
    suite.extend(cases)
    root = ET.Element("testsuites", name="parity", tests=str(len(cases)))
    for name in ("failures", "errors", "skipped"):
        root.set(name, str(counts[name]))
    root.set("time", f"{total:.3f}")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"

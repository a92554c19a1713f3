"""The official ACP JSON Schema, pinned by version and checksum, shipped in the package.

The schema comes from the npm package `@agentclientprotocol/sdk` (Apache-2.0), as
`schema/v1/schema.json` from 2.0.0 on (1.x releases, including the 1.4.0 the DSH bridges
build on, keep the v1 schema at `schema/schema.json`); the pin is the newest release when
this was written. Its bytes are committed as `parity/schema/acp/schema.json` and ship in
the wheel, so an installed harness validates with no download, no npm and no network,
against exactly the bytes CI used (`SCHEMA_SHA256`, checked by tests/checks/test_acp_schema.py).
`fetch` re-derives that file from the npm tarball (checking the tarball's sha256 too):
what a bump of `VERSION` runs, and what repairs a damaged copy.

    python -m parity.checks.acp_schema fetch     # idempotent; `make schema` calls it
    python -m parity.checks.acp_schema methods   # which $defs entry validates which method

`method_defs` maps each ACP method to its `$defs` entries using the schema's own
`x-method` annotations; conformance checks validate each frame against those entries
(the root schema is a permissive union that would accept almost anything).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Literal

PACKAGE = "@agentclientprotocol/sdk"
VERSION = "2.4.0"
TARBALL_SHA256 = "87acc66d5824f88d8913702f85cf74c997526bbffb06fce15a9f0d637566ca8d"
MEMBER = "package/schema/v1/schema.json"
SCHEMA_SHA256 = "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a"

SHIPPED = Path(__file__).resolve().parents[1] / "schema" / "acp" / "schema.json"
"""The pinned schema, package data of `parity` (in a checkout and in an installed wheel)."""
ENV_PATH = "ACP_PARITY_SCHEMA"
"""Environment variable naming another schema file (another version, a test)."""

Kind = Literal["request", "response", "notification"]


class SchemaError(RuntimeError):
    """The schema cannot be fetched or loaded; the message says what to do."""


def schema_path() -> Path:
    """Where the schema is read from: `$ACP_PARITY_SCHEMA`, else the shipped copy."""
    override = os.environ.get(ENV_PATH)
    return Path(override) if override else SHIPPED


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(dest: Path = SHIPPED, npm: str | None = None) -> Path:
    """Download the pinned package with `npm pack`, verify it, extract the schema.

    Does nothing when `dest` already holds the pinned schema. Raises SchemaError with
    a clear message when npm is missing, the download fails or a checksum differs.
    """
    if dest.is_file() and _sha256(dest.read_bytes()) == SCHEMA_SHA256:
        return dest
    npm = npm or shutil.which("npm")
    if npm is None:
        raise SchemaError(
            f"npm is not on PATH: it is needed once to fetch the ACP schema "
            f"({PACKAGE}@{VERSION}). Install Node.js/npm, or point ${ENV_PATH} at a copy "
            f"of {MEMBER.removeprefix('package/')} from that package."
        )
    with tempfile.TemporaryDirectory(prefix="acp-schema-") as tmp:
        try:
            proc = subprocess.run(
                [npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", tmp, "--silent"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SchemaError(f"npm pack {PACKAGE}@{VERSION} failed: {exc}") from exc
        tarballs = sorted(Path(tmp).glob("*.tgz"))
        if proc.returncode != 0 or len(tarballs) != 1:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise SchemaError(
                f"npm pack {PACKAGE}@{VERSION} failed (exit {proc.returncode}): " + " | ".join(tail)
            )
        data = tarballs[0].read_bytes()
    return install(data, dest)


def install(tarball: bytes, dest: Path = SHIPPED) -> Path:
    """Verify a package tarball against the pins and write its schema to `dest`."""
    got = _sha256(tarball)
    if got != TARBALL_SHA256:
        raise SchemaError(
            f"{PACKAGE}@{VERSION} tarball sha256 is {got}, pinned {TARBALL_SHA256}: refusing it"
        )
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise SchemaError(f"{PACKAGE}@{VERSION} has no {MEMBER}")
        schema = member.read()
    if _sha256(schema) != SCHEMA_SHA256:
        raise SchemaError(f"{MEMBER} in {PACKAGE}@{VERSION} does not match its pinned sha256")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename: parallel test workers never read a half-written file.
    tmp = dest.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(schema)
    tmp.replace(dest)
    return dest


def load_schema(path: Path | None = None) -> dict[str, Any]:
    """The ACP schema as a dict; SchemaError naming the fix when it is missing."""
    path = path or schema_path()
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(missing_text(path)) from None
    except (OSError, ValueError) as exc:
        raise SchemaError(f"ACP schema at {path} is unreadable: {exc}") from exc
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        raise SchemaError(f"ACP schema at {path} has no $defs")
    return schema


def missing_text(path: Path) -> str:
    """What to do when the schema file is not there: the fix depends on who moved it."""
    if os.environ.get(ENV_PATH):
        return (
            f"ACP schema not found at {path}, where ${ENV_PATH} points: point it at a copy "
            f"of {MEMBER.removeprefix('package/')} from {PACKAGE}@{VERSION}, or unset it to "
            f"use the copy acp-parity ships"
        )
    return (
        f"ACP schema not found at {path}, where acp-parity ships it: reinstall acp-parity "
        f"(`pip install --force-reinstall acp-parity`), run `python -m "
        f"parity.checks.acp_schema fetch` (needs npm), or set ${ENV_PATH} to a copy of "
        f"{MEMBER.removeprefix('package/')} from {PACKAGE}@{VERSION}"
    )


def def_names() -> frozenset[str] | None:
    """The names of the schema's `$defs` (what a `{acp: Name}` pin may name), or None
    when the schema is not there to say."""
    try:
        return frozenset(load_schema()["$defs"])
    except SchemaError:
        return None


def method_defs(schema: dict[str, Any]) -> dict[tuple[str, Kind], str]:
    """(method, kind) -> `$defs` name, from the schema's `x-method` annotations.

    The def's name says which part of a frame it describes: `...Request` the params of a
    request, `...Response` the result of its response, `...Notification` the params of a
    notification (`session/update` -> `SessionNotification`).
    """
    out: dict[tuple[str, Kind], str] = {}
    suffixes: tuple[tuple[str, Kind], ...] = (
        ("Request", "request"),
        ("Response", "response"),
        ("Notification", "notification"),
    )
    for name, definition in sorted(schema["$defs"].items()):
        method = definition.get("x-method") if isinstance(definition, dict) else None
        if not isinstance(method, str):
            continue
        for suffix, kind in suffixes:
            if name.endswith(suffix):
                out.setdefault((method, kind), name)
    return out


def main(argv: list[str] | None = None) -> int:
    """`fetch` the pinned schema, or list the `methods` map of the cached one."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if args == ["fetch"]:
            path = fetch()
            print(f"ACP schema {PACKAGE}@{VERSION}: {path}")
            return 0
        if args == ["methods"]:
            for (method, kind), name in sorted(method_defs(load_schema()).items()):
                print(f"{method:32} {kind:12} {name}")
            return 0
    except SchemaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("usage: python -m parity.checks.acp_schema fetch|methods", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

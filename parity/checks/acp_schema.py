"""The official ACP JSON Schema, fetched once at a pinned version and checksum.

The schema ships in the npm package `@agentclientprotocol/sdk` as `schema/v1/schema.json`
from 2.0.0 on (1.x releases, including the 1.4.0 the DSH bridges build on, keep the v1
schema at `schema/schema.json`); the pin is the newest release when this was written.
It is not committed: the harness fetches it with `npm pack` into
`.cache/acp-schema/schema.json`, checking the tarball's sha256, so a fresh clone
validates against exactly the bytes CI used.

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

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "acp-schema" / "schema.json"
ENV_PATH = "ACP_PARITY_SCHEMA"
"""Environment variable naming another schema file (for offline machines)."""

Kind = Literal["request", "response", "notification"]


class SchemaError(RuntimeError):
    """The schema cannot be fetched or loaded; the message says what to do."""


def schema_path() -> Path:
    """Where the schema is read from: `$ACP_PARITY_SCHEMA`, else the cache."""
    override = os.environ.get(ENV_PATH)
    return Path(override) if override else CACHE


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(dest: Path = CACHE, npm: str | None = None) -> Path:
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


def install(tarball: bytes, dest: Path = CACHE) -> Path:
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
        raise SchemaError(
            f"ACP schema not found at {path}: run `make schema` "
            f"(or `python -m parity.checks.acp_schema fetch`)"
        ) from None
    except (OSError, ValueError) as exc:
        raise SchemaError(f"ACP schema at {path} is unreadable: {exc}") from exc
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        raise SchemaError(f"ACP schema at {path} has no $defs")
    return schema


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

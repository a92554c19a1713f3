"""Credential-like variables with unique marker values, and a grep for the markers in
every file under a directory: the leak tests export the first and run the second."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

SECRET_NAMES = (
    "GITHUB_PAT",
    "GITHUB_TOKEN",
    "DB_PASS",
    "DATABASE_URL",
    "REDIS_URL",
    "CI_JOB_JWT",
    "CI_JOB_TOKEN",
    "SENTRY_DSN",
    "SLACK_WEBHOOK_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "NPM_TOKEN",
    "DOCKER_AUTH_CONFIG",
    "STRIPE_SK",
    "MONGO_URI",
    "HTTPS_PROXY",
    "VAULT_ADDR",
)
"""Twenty names a developer's or CI's shell may hold; several (DATABASE_URL, SENTRY_DSN,
MONGO_URI, STRIPE_SK) match no credential word, which is why agents get an allow-list."""


def secret_env() -> dict[str, str]:
    """Each name with a value no file could contain by chance."""
    return {name: f"leak-{name.lower()}-{uuid.uuid4().hex}" for name in SECRET_NAMES}


def files_under(*roots: Path) -> list[Path]:
    return sorted(p for root in roots if root.exists() for p in root.rglob("*") if p.is_file())


def markers_in(files: Iterable[Path], markers: Iterable[str]) -> list[tuple[str, str]]:
    """(file, marker) for every marker found in a file's bytes."""
    wanted = [m.encode() for m in markers]
    found: list[tuple[str, str]] = []
    for path in files:
        data = path.read_bytes()
        found += [(str(path), m.decode()) for m in wanted if m in data]
    return found

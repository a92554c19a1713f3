"""The `acp-plus` command (also `python -m acp_plus`): an ACP agent on stdio.

Stdout carries protocol frames only; logs go to stderr. `--help`, `--version` and the
`--dump-*` options print and exit without starting the protocol. A configuration error prints one
line on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

from acp_plus.settings.config import default_home, load_file
from acp_plus.settings.config_schema import SCHEMA, ConfigError

DISTRIBUTION = "acp-parity"
"""The installed distribution that ships `acp_plus` (its version is acp-plus's)."""


def version() -> str:
    """The installed package's version, from its metadata."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(DISTRIBUTION)
    except PackageNotFoundError:  # a bare source tree on sys.path, never installed
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-plus",
        description="An ACP agent (JSON-RPC 2.0 over stdio) with the dsh-acp wire contract. "
        "Start it from an ACP client such as Zed; it speaks on stdin/stdout.",
    )
    parser.add_argument(
        "--version", action="store_true", help="print `acp-plus <version>` and exit"
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="TOML configuration file")
    parser.add_argument(
        "--home",
        type=Path,
        metavar="DIR",
        help="state directory for session logs (default: $ACP_PLUS_HOME, else "
        "$XDG_DATA_HOME/acp-plus, else ~/.local/share/acp-plus)",
    )
    parser.add_argument(
        "--dump-config", action="store_true", help="print the effective configuration as JSON"
    )
    parser.add_argument(
        "--dump-config-schema",
        action="store_true",
        help="print the configuration's JSON Schema",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("ACP_PLUS_LOG", "WARNING"),
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default: $ACP_PLUS_LOG or WARNING)",
    )
    return parser


def _dump(value: object) -> int:
    """Print `value` as JSON; a reader that stops early (`| head`) is not an error."""
    try:
        print(json.dumps(value, indent=2), flush=True)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    args = _parser().parse_args(argv)
    if args.version:
        print(f"acp-plus {version()}", flush=True)
        return 0
    if args.dump_config_schema:
        return _dump(SCHEMA)
    home = (args.home or default_home(os.environ)).expanduser().absolute()
    try:
        config = load_file(args.config, home)
    except ConfigError as exc:
        print(f"acp-plus: config error: {exc}", file=sys.stderr)
        return 2
    if args.dump_config:
        return _dump(config.to_json())
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="acp-plus %(levelname)s %(name)s: %(message)s",
    )
    # Imported here so `--help` and the dumps stay instant.
    import asyncio

    from acp_plus.server.stdio import run_stdio

    # No `asyncio.run`: its cleanup waits for every task (an MCP client's shielded
    # shutdown) and executor thread, and then the interpreter's own finalization tears
    # down the SDKs' module graph (openai, mcp, pydantic: 0.5 to 1.5 s on a loaded
    # machine). `run_stdio` has closed the sessions, killed every descendant and flushed
    # stdout when it returns, so the process ends there (`_leave`).
    runner = asyncio.Runner()
    try:
        runner.run(run_stdio(config))
    except KeyboardInterrupt:
        return 130
    _leave(0)


def _leave(status: int) -> NoReturn:
    """End the process now: logs and stdio flushed, no interpreter finalization."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())

"""`parity capture`: the command line over `parity.capture.session` (docs/capture.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from parity.cli.project import project_config
from parity.fakellm.dialects import CAPTURABLE, OPENAI_CHAT


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    helptext = "record a live session with a real model into a keyless scenario"
    p = sub.add_parser("capture", help=helptext, description=helptext)
    p.add_argument("--target", required=True, help="the agent to capture, e.g. plus or native")
    p.add_argument("--upstream", required=True, metavar="URL", help="the provider's base URL")
    p.add_argument(
        "--api-key-env", required=True, metavar="VAR", help="environment variable with the key"
    )
    p.add_argument("--model", required=True, help="the provider's model name")
    p.add_argument(
        "--dialect",
        default=OPENAI_CHAT.name,
        choices=CAPTURABLE,
        help="the provider's API (default: openai-chat; DeepSeek speaks it and anthropic)",
    )
    client = p.add_mutually_exclusive_group(required=True)
    client.add_argument("--prompt", metavar="TEXT", help="one session, one prompt")
    client.add_argument(
        "--steps", metavar="FILE", help="a scenario without `llm`: its steps, tools, files"
    )
    p.add_argument(
        "--files", metavar="DIR", help="start the workspace with DIR's files (written into it)"
    )
    p.add_argument(
        "--no-builtin-tools",
        action="store_true",
        help="DSH-family agents offer only fixture tools (for model-view parity with native)",
    )
    p.add_argument("--no-verify", action="store_true", help="skip the keyless replay check")
    p.add_argument(
        "--keep-refused",
        action="store_true",
        help="write the scenario even when the provider refused a model call (HTTP 401, "
        "409, ...): by default such a capture fails and writes nothing",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="scenario to write")


def cmd_capture(args: argparse.Namespace) -> int:
    from parity.capture.compose import prompt_base
    from parity.capture.session import CaptureError, capture, load_base, workspace_files
    from parity.fakellm.upstream import Upstream

    key = os.environ.get(args.api_key_env, "")
    if not key:
        print(f"parity capture: ${args.api_key_env} is not set (or empty)", file=sys.stderr)
        return 2
    config = project_config(args)
    try:
        base = load_base(Path(args.steps)) if args.steps else prompt_base(args.prompt)
        if args.files:
            base = {**base, "files": {**base.get("files", {}), **workspace_files(Path(args.files))}}
        upstream = Upstream(args.upstream, args.dialect, args.model, key)
        outcome = capture(
            config,
            target=args.target,
            upstream=upstream,
            base=base,
            out=Path(args.output),
            builtin_tools=not args.no_builtin_tools,
            verify=not args.no_verify,
            keep_refused=args.keep_refused,
        )
    except (CaptureError, ValueError, OSError) as exc:
        print(f"parity capture: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {outcome.path}: {outcome.entries} model call(s) recorded from {args.target}")
    status = 0
    for line in outcome.refused:
        print(f"  kept the provider's refusal (--keep-refused): {line}", file=sys.stderr)
    for problem in outcome.problems:
        print(f"  capture run problem: {problem}", file=sys.stderr)
        status = 1
    if outcome.verified:
        for problem in outcome.replay_problems:
            print(f"  replay problem: {problem}", file=sys.stderr)
            status = 1
        if outcome.replay_diff is None:
            print("keyless replay: same normalized view as the captured run")
        else:
            print("keyless replay differs from the captured run:", file=sys.stderr)
            print(outcome.replay_diff, file=sys.stderr)
            status = 1
    if status:
        print(
            "the scenario is written; see the problems above before you commit it",
            file=sys.stderr,
        )
    return status

"""`parity init`: start an acp-parity project in the current directory (docs/own-agent.md).

Writes `parity.toml`, a first scenario (`scenarios/first/hello.yaml`) and a CI workflow
(`.github/workflows/parity.yml`); `parity init NAME -- CMD ARGS...` also declares the
agent NAME, started by CMD ARGS, in `parity.toml`, as a member of the peer family, so
`parity run --suite acp --targets +NAME` runs the shipped agent-agnostic suite on it. A
file that exists is left alone (and said so). What it writes passes `parity validate`
(tests/cli/test_init.py). The texts are pure functions of the arguments.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from parity.checks.acp_schema import SHIPPED

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
DIALECTS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
SCENARIO = "scenarios/first/hello.yaml"
WORKFLOW = ".github/workflows/parity.yml"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    helptext = "start a project here: parity.toml, a first scenario, a CI workflow"
    p = sub.add_parser(
        "init",
        help=helptext,
        description=helptext + ". `parity init NAME -- CMD ARGS...` also declares the agent "
        "NAME started by CMD ARGS (a peer-family target: `parity run --suite acp --targets "
        "+NAME` runs the shipped suite on it).",
    )
    p.add_argument("name", nargs="?", help="the agent's target name, e.g. my-agent")
    p.add_argument(
        "--dialect",
        choices=DIALECTS,
        default="openai-chat",
        help="the model API the agent speaks to the fake LLM (default openai-chat)",
    )


def target_table(name: str, command: list[str], dialect: str, root: Path) -> str:
    """The `[targets.NAME]` table (TOML). An argument naming a file of the project becomes
    `{repo}/...`: every run starts in a fresh working directory."""
    words = [f"{{repo}}/{w}" if _project_file(root, w) else w for w in command]
    env = _dialect_env(dialect)
    return (
        f"[targets.{name}]\n"
        f'description = "{name}, declared by parity init"\n'
        "# The peer family: the shipped suite (`--suite acp`) takes it, and what ACP leaves\n"
        "# to each agent is excused for it as for the reference agents (docs/own-agent.md).\n"
        'family = "peer"\n'
        f'dialect = "{dialect}"\n'
        "# The scenarios' tools reach the agent as an MCP server on stdio.\n"
        'fixture_tools = "mcp"\n'
        f"command = {json.dumps(words)}\n"
        f"# Point the agent's model client at the fake LLM; no real key is needed.\n"
        f"env = {env}\n"
    )


def _project_file(root: Path, word: str) -> bool:
    return not word.startswith(("-", "/", "{")) and (root / word).is_file()


def _dialect_env(dialect: str) -> str:
    if dialect.startswith("openai"):
        return '{ OPENAI_BASE_URL = "{llm_base}/v1", OPENAI_API_KEY = "sk-fake" }'
    if dialect == "anthropic-messages":
        return '{ ANTHROPIC_BASE_URL = "{llm_base}", ANTHROPIC_API_KEY = "sk-fake" }'
    return '{ GOOGLE_GEMINI_BASE_URL = "{llm_base}", GEMINI_API_KEY = "fake" }'


def parity_toml(table: str | None) -> str:
    head = (
        "# acp-parity: see docs/own-agent.md of acp-parity. `parity targets` lists every\n"
        "# target (the built-in ones and those below) and whether it can run here.\n"
        'scenarios = "scenarios"\n'
        'snapshots = "snapshots"\n'
        'known_differences = "known-differences.yaml"\n'
    )
    return head + ("\n" + table if table else "")


def first_scenario(name: str | None) -> str:
    """A one-target scenario: one text turn, then one tool the client approves."""
    target = name or "plus"
    return (
        f"# yaml-language-server: $schema={SHIPPED.parent.parent / 'scenario.schema.json'}\n"
        "description: >-\n"
        f"  parity init's first scenario: {target} answers one text turn, then calls a\n"
        "  tool the client approves and ends the turn.\n"
        f"targets: [{target}]          # the first target is the parity reference\n"
        "tools:\n"
        "  - name: echo\n"
        "    description: Return a deterministic result.\n"
        "    result: tool result\n"
        "llm:\n"
        "  - match: {request: side}   # a side request (a session title, ...), if any\n"
        "    text: Hello\n"
        "  - text: hello there\n"
        "  - tool_calls: [{id: call-1, name: echo, arguments: {}}]\n"
        "  - text: done\n"
        "client:\n"
        "  permission: allow-once\n"
        "steps:\n"
        "  - initialize: {}\n"
        "  - new_session: {as: s1}\n"
        "  - prompt: {session: s1, text: say hello}\n"
        "  - prompt: {session: s1, text: use the tool}\n"
    )


def workflow(name: str | None) -> str:
    """A GitHub Actions workflow: the project's scenarios and, with an agent, the suite."""
    suite = (
        f"      - run: parity run -n auto --suite acp --targets +{name} --report suite-report\n"
        if name
        else ""
    )
    upload = "          path: |\n            parity-report\n" + (
        "            suite-report\n" if name else ""
    )
    return (
        "name: parity\n"
        "on: [push, pull_request]\n"
        "jobs:\n"
        "  parity:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v5\n"
        "      - uses: actions/setup-python@v6\n"
        "        with:\n"
        '          python-version: "3.11"\n'
        "      # Install the agent under test here too, as your project builds it.\n"
        "      - run: pip install acp-parity\n"
        "      - run: parity validate\n"
        "      - run: parity run -n auto --report parity-report\n"
        + suite
        + "      - if: always()\n"
        "        uses: actions/upload-artifact@v6\n"
        "        with:\n"
        "          name: parity-report\n" + upload
    )


def files(name: str | None, command: list[str], dialect: str, root: Path) -> dict[str, str]:
    """Relative path -> text of every file `parity init` writes (pure but for `root`'s
    listing, which decides the `{repo}/` paths)."""
    table = target_table(name, command, dialect, root) if name else None
    return {
        "parity.toml": parity_toml(table),
        SCENARIO: first_scenario(name),
        WORKFLOW: workflow(name),
    }


def cmd_init(args: argparse.Namespace) -> int:
    root = Path(args.root) if args.root else Path.cwd()
    command = list(args.pytest_args)
    if args.name and not NAME.match(args.name):
        print(f"parity init: {args.name!r}: a target name is lowercase letters, digits, - and _")
        return 2
    if bool(args.name) != bool(command):
        print(
            "parity init: an agent is declared with its command: `parity init NAME -- CMD "
            "ARGS...` (or neither, for a project without one yet)",
            file=sys.stderr,
        )
        return 2
    for rel, text in files(args.name, command, args.dialect, root).items():
        path = root / rel
        if path.exists():
            print(f"parity init: {rel} exists, left as it is")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"parity init: wrote {rel}")
    nxt = f"parity run --suite acp --targets +{args.name}" if args.name else "parity run"
    print(f"next: parity validate; parity record; {nxt} (docs/own-agent.md)")
    return 0

"""acp-plus starts without the libraries only some sessions need.

The harness starts acp-plus hundreds of times in a test run (and a user's editor once per
agent start); its imports were most of a start's CPU time. jsonschema (tool arguments of
a concurrency-safe call), PyYAML (a skill file's front matter) and importlib.metadata
(where the `ripgrep` wheel put `rg`) were 0.05 s of a 0.19 s start that answers
`initialize` and `session/new`; each is now imported where it is first used.

The agent runs for real under `python -X importtime`, which names every module it
imported on stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LAZY = ("jsonschema", "yaml", "importlib.metadata")


def _imported(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_a_session_start_imports_none_of_the_lazy_libraries(tmp_path: Path) -> None:
    frames = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new",
         "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]  # fmt: skip
    agent = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "acp_plus"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DSH_HOME": str(tmp_path / "h")},
    )
    assert agent.stdin is not None and agent.stdout is not None
    answers = []
    for frame in frames:  # one at a time: EOF before an answer would cancel its request
        agent.stdin.write(json.dumps(frame) + "\n")
        agent.stdin.flush()
        answers.append(json.loads(agent.stdout.readline()))
    _, stderr = agent.communicate(timeout=60)
    assert [sorted(a) for a in answers] == [["id", "jsonrpc", "result"]] * 2, answers
    imported = _imported(stderr)
    assert "acp_plus.server.stdio" in imported  # the measurement saw the agent's imports
    loaded = sorted(n for n in imported if n in LAZY or n.split(".")[0] in LAZY[:2])
    assert loaded == [], loaded

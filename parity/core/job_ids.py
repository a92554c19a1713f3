"""Background job ids as DSH makes them (the job's kind, `bash`, `pwsh`, `workflow` or
`subagent`, a dash and 16 random hex digits; 0.1.0-rc.8: `bash-` and a count), and goal
ids. The random names of its spill files are the run's TMPDIR names
`parity.view.tokens` numbers (`<tmpname:n>`).

They are random per run, like a UUID: the normalized view numbers them `<job:n>`
(`parity.view.tokens`), and a scripted answer names the run's n-th job by the same
token (`parity.fakellm.script`), since a script cannot know the id in advance.

A goal id (`goal-` and a UUID) is random too: the view numbers it as the UUID it holds
(`goal-<uuid:n>`), and a scripted answer names the run's n-th goal `<goal:n>`, read back
from the `create_goal` or `get_goal` result it answered.

A child agent's id (a subagent's session id) is random too: a script names it
`<agent:n>`.
"""

from __future__ import annotations

import re

JOB_ID = re.compile(
    r"(?<![\w-])(?:(?:bash|pwsh|workflow|subagent)-[0-9a-f]{16}|bash-[1-9]\d*)(?![\w-]|\.\d)"
)
"""0.2.1-rc.2's ids (16 random hex digits, any kind) and 0.1.0-rc.8's (`bash-1`, counted per
process, so they depend on what else the process ran)."""
JOB_TOKEN = re.compile(r"<job:(\d+)>")
GOAL_ID = re.compile(
    r"(?<![\w-])goal-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\w-])"
)
"""A goal's id: `goal-` and a random UUID (every DSH version the project runs, and acp-plus)."""
GOAL_TOKEN = re.compile(r"<goal:(\d+)>")


def expand_jobs(text: str, ids: list[str]) -> str:
    """`text` with `<job:n>` made `ids[n - 1]`; a token past the end stays as written."""
    return JOB_TOKEN.sub(lambda m: ids[int(m[1]) - 1] if 0 < int(m[1]) <= len(ids) else m[0], text)


def job_ids(texts: list[str] | tuple[str, ...]) -> list[str]:
    """The job ids named in `texts`, in order of first appearance."""
    return list(dict.fromkeys(found for text in texts for found in JOB_ID.findall(text)))


def expand_goals(text: str, ids: list[str]) -> str:
    """`text` with `<goal:n>` made `ids[n - 1]`; a token past the end stays as written."""
    return GOAL_TOKEN.sub(lambda m: ids[int(m[1]) - 1] if 0 < int(m[1]) <= len(ids) else m[0], text)


def goal_ids(texts: list[str] | tuple[str, ...]) -> list[str]:
    """The goal ids named in `texts`, in order of first appearance."""
    return list(dict.fromkeys(found for text in texts for found in GOAL_ID.findall(text)))


AGENT_TOKEN = re.compile(r"<agent:(\d+)>")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def agent_ids(texts: list[str] | tuple[str, ...], known: tuple[str, ...]) -> list[str]:
    """Child agent ids named in `texts`: the session ids (UUIDs) of sessions the client
    never used (`known`), in order of first appearance (the `started subagent <id>`
    result a parent read)."""
    found = (uuid for text in texts for uuid in UUID.findall(text) if uuid not in known)
    return list(dict.fromkeys(found))


SESSION_TOKEN = re.compile(r"<session:(\d+)>")


def expand_agents(text: str, ids: list[str], sessions: tuple[str, ...] = ()) -> str:
    """`text` with `<agent:n>` made `ids[n - 1]`, and `<session:n>` the n-th session the
    client used (a child naming its parent); a token past the end stays as written."""
    text = AGENT_TOKEN.sub(
        lambda m: ids[int(m[1]) - 1] if 0 < int(m[1]) <= len(ids) else m[0], text
    )
    return SESSION_TOKEN.sub(
        lambda m: sessions[int(m[1]) - 1] if 0 < int(m[1]) <= len(sessions) else m[0], text
    )

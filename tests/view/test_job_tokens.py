"""Background job ids and DSH's spill file names: random per run, so a view numbers
them like ids (`<job:n>`), and the random parts of the file names like the run's other
TMPDIR names (`<tmpname:n>`, tests/view/test_tmp_names.py)."""

from __future__ import annotations

from parity.view.tokens import Tokens


def test_job_ids_are_numbered_in_order_of_first_appearance() -> None:
    tokens = Tokens({})
    tokens.discover_uuids(
        {"a": "started background job bash-1234567890abcdef", "b": ["bash-fedcba0987654321"]}
    )
    text = "bash-fedcba0987654321 then bash-1234567890abcdef"
    assert tokens.scrub_text(text) == "<job:2> then <job:1>"
    rc8 = Tokens({})
    rc8.discover_uuids({"a": "started background job bash-2; bash-5.1 is a version"})
    assert rc8.scrub_text("job bash-2 [bash] running") == "job <job:1> [bash] running"
    assert rc8.count("job") == 1
    fresh = Tokens({})
    fresh.discover_uuids({"a": "bash-1234567890abcdef0 is no job id, nor xbash-1234567890abcdef"})
    assert fresh.count("job") == 0


def test_every_job_kind_of_native_is_a_job_id() -> None:
    """Native names a job by its kind: bash and pwsh commands, workflow and subagent runs
    in the background; only rc.8's bash ids are counted."""
    tokens = Tokens({})
    tokens.discover_uuids(
        {"a": "as job workflow-22955817b07c48bd", "b": "subagent-0123456789abcdef and bash-7"}
    )
    assert tokens.count("job") == 3
    assert tokens.scrub_text("workflow-22955817b07c48bd") == "<job:1>"
    prose = Tokens({})
    prose.discover_uuids({"a": "see workflow-2 and subagent-12, not jobs"})
    assert prose.count("job") == 0


def test_spill_file_names_keep_only_their_stable_parts() -> None:
    tokens = Tokens({"tmp": "/tmp"}, pids=[17459])
    text = (
        "[output truncated; full output: /tmp/dsh-subprocess-pVfWnv/"
        "dsh-subprocess-17459-2-8a10f845a2d9-stderr.log]\n(Omitted 5 bytes. Full formatted "
        "result stored at: /tmp/dsh-spill-o4wMSI/session-7b02e343d587/1293049672f4-bash.txt."
    )
    assert tokens.scrub_text(text) == (
        "[output truncated; full output: <tmp>/dsh-subprocess-<tmpname:1>/"
        "dsh-subprocess-<pid>-2-<tmpname:2>-stderr.log]\n(Omitted 5 bytes. Full formatted "
        "result stored at: <tmp>/dsh-spill-<tmpname:3>/session-<tmpname:4>/<tmpname:5>-bash.txt."
    )

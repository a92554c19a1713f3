"""acp-plus's `bash`, job and `todo_write` families against native's, as recorded.

The definitions the model is shown and the system-prompt paragraphs are read from the
native snapshots of real runs (`snapshots/tools/*/native.yaml`), never from a copy
written here; the rest checks native's rules the scenarios under scenarios/tools/ show,
at the level of the tools (argument checks, job notices, the spill-policy).
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.base import ABORTED_TOOL_TEXT, ToolContext, ToolResult, cancelled_text
from acp_plus.core.tools.bash_family import BASH_GUIDANCE, bash_tools
from acp_plus.core.tools.builtin import builtin_tools
from acp_plus.core.tools.job_table import RETAIN_BYTES, JobTable, Outcome
from acp_plus.core.tools.jobs_family import JOBS_GUIDANCE, job_tools
from acp_plus.core.tools.spill import MAX_INLINE_TOKENS, bound, price
from acp_plus.core.tools.todo_family import TODO_GUIDANCE, todo_tools
from parity.view.dump import load_view

SNAPSHOTS = Path(__file__).parents[4] / "snapshots" / "tools"
FAMILY = ("bash", "job_output", "job_list", "job_kill", "todo_write", "workflow", "read_image")


@functools.cache
def native_requests() -> list[dict[str, Any]]:
    """The model requests of the native recordings that show tools. Read when a test
    first asks, not when the module is imported (every pytest worker collects it), and
    by the snapshot reader (libyaml): PyYAML's pure-Python loader took 1.3 s for them."""
    bodies = []
    for path in sorted(SNAPSHOTS.glob("*/native.yaml")):
        view = load_view(path.read_text(encoding="utf-8"))
        bodies += [
            r["body"] for r in view.get("model") or [] if r.get("body") and "tools" in r["body"]
        ]
    return bodies


def test_the_recordings_show_natives_families() -> None:
    shown = {tool["name"] for body in native_requests() for tool in body["tools"]}
    assert set(FAMILY) <= shown


@pytest.mark.parametrize("name", FAMILY)
def test_each_definition_is_natives_byte_for_byte(name: str) -> None:
    tools = {t.name: t for t in builtin_tools()}
    ours = {
        "name": name,
        "description": tools[name].description,
        "parameters": tools[name].parameters,
    }
    seen = [t for body in native_requests() for t in body["tools"] if t["name"] == name]
    assert seen and all(t == ours for t in seen)


def test_the_guidance_is_natives_text_for_text() -> None:
    for body in native_requests():
        names = {t["name"] for t in body["tools"]}
        paragraphs = body["system"].split("\n\n")
        if "bash" in names:
            assert all(p in paragraphs for p in BASH_GUIDANCE)
        if "job_output" in names:
            assert all(p in paragraphs for p in JOBS_GUIDANCE)
    assert TODO_GUIDANCE == ()


def test_the_argument_check_speaks_natives_words() -> None:
    (todo,) = todo_tools()
    bad = {"todos": [{"content": "x", "status": "done", "extra": 1}, "y"]}
    assert arguments_error(todo.parameters, bad) == (
        'invalid arguments: "todos[0].status" must be one of ["pending","in_progress",'
        '"completed"]; "todos[0].extra" is not a declared property (additionalProperties: '
        'false); "todos[1]" must be an object'
    )
    (bash,) = bash_tools(JobTable())
    assert arguments_error(bash.parameters, {"command": 1, "timeoutMs": "5"}) == (
        'invalid arguments: missing required property "description"; "command" must be a '
        'string; "timeoutMs" must be a number'
    )


def _ctx(tmp_path: Path, session: str = "s") -> ToolContext:
    return ToolContext(session, tmp_path, "c1", 1, "danger-full-access")


async def test_a_job_notifies_its_session_only_when_nobody_took_its_end(tmp_path: Path) -> None:
    jobs = JobTable()
    heard: list[tuple[str, str]] = []
    jobs.listen("s", lambda owner, text: heard.append((owner, text)))
    release = asyncio.Event()

    async def work(job: Any) -> Outcome:
        await release.wait()
        return Outcome("completed", "exit code: 0")

    unobserved = jobs.start("bash", "one", "s", work)
    waited = jobs.start("bash", "two", "s", work)
    killed = jobs.start("bash", "three", "s", work)
    waiting = asyncio.ensure_future(jobs.wait(waited, 5))
    await asyncio.sleep(0)
    assert jobs.kill(killed, "no need", by_model=True)
    release.set()
    await asyncio.gather(waiting, unobserved.settled.wait(), killed.settled.wait())
    assert heard == [
        (
            "s",
            f"background job {unobserved.id} (bash: one) finished [status: completed, exit "
            "code: 0]. Read its output with job_output.",
        )
    ]
    assert killed.status == "killed" and killed.detail == "killed before exit; no need"


async def test_jobs_are_their_sessions_alone(tmp_path: Path) -> None:
    jobs = JobTable()
    output, listing, kill = job_tools(jobs)
    (bash,) = bash_tools(jobs)
    started = await bash.run(
        {"description": "d", "command": "echo hi", "run_in_background": True}, _ctx(tmp_path)
    )
    job_id = _text(started).removeprefix("started background job ")
    other = await output.run({"job_id": job_id}, _ctx(tmp_path, "other"))
    assert other.is_error and _text(other) == f"Error: job {job_id} belongs to another session"
    assert _text(await listing.run({}, _ctx(tmp_path, "other"))) == "(no background jobs)"
    read = await output.run({"job_id": job_id, "wait": True}, _ctx(tmp_path))
    assert _text(read) == "hi\n[status: completed, exit code: 0]"
    again = await output.run({"job_id": job_id}, _ctx(tmp_path))
    assert _text(again) == "(no new output)\n[status: completed, exit code: 0]"
    late = await kill.run({"job_id": job_id}, _ctx(tmp_path))
    assert _text(late) == f"job {job_id} had already finished [status: completed, exit code: 0]"


def test_a_cancelled_call_reads_as_natives_for_that_tool() -> None:
    """Seen live in tools/cancel-builtin-running: native's `job_output` wait fails on the
    abort with its own words, and its registry words any other built-in call's end."""
    output, listing, _ = job_tools(JobTable())
    (bash,) = bash_tools(JobTable())
    assert cancelled_text(output) == "Error: wait aborted"
    assert cancelled_text(bash) == cancelled_text(listing) == ABORTED_TOOL_TEXT
    assert ABORTED_TOOL_TEXT == "Error: tool call aborted"


async def test_a_running_job_keeps_natives_256_kib_and_says_what_it_dropped() -> None:
    jobs = JobTable()
    release = asyncio.Event()

    async def work(job: Any) -> Outcome:
        await release.wait()
        return Outcome("completed", "exit code: 0")

    job = jobs.start("bash", "noisy", "s", work)
    line = "x" * 1023 + "\n"
    for _ in range(100):  # read: dropping it later loses nothing the model had not seen
        jobs.append(job, "stdout", line)
    assert jobs.read(job) == line * 100
    for n in range(300):  # 300 KiB unread: the oldest 44 go
        jobs.append(job, "stdout", f"{n:04d}" + line[4:])
    assert RETAIN_BYTES == 256 * 1024
    text = jobs.read(job)
    kept, notice = text.rsplit("\n", 1)
    assert kept.startswith("0044") and kept.endswith("x") and len(kept) + 1 == RETAIN_BYTES
    assert notice == "[some output was dropped from memory; full output: (unavailable)]"
    job.spill_paths = lambda: ["/tmp/a-stdout.log"]
    jobs.append(job, "stderr", "é" * (RETAIN_BYTES // 2 + 1))  # alone over the cap: its tail
    assert jobs.read(job) == (
        "[stderr]\n"
        + "é" * (RETAIN_BYTES // 2)
        + "\n[some output was dropped from memory; full output: /tmp/a-stdout.log]"
    )
    jobs.append(job, "stdout", "calm\n")
    assert jobs.read(job) == "calm\n"  # the loss is told once
    release.set()
    await job.settled.wait()


def _text(result: ToolResult) -> str:
    return str(result.content[0]["text"])


def test_an_oversized_result_keeps_its_ends_and_names_the_file() -> None:
    lines = "".join(f"{n}\n" for n in range(30000))
    result = bound(ToolResult.text(lines), "bash", "session-1")
    text = _text(result)
    head, _, rest = text.partition("\n\n[...]\n\n")
    tail, _, notice = rest.rpartition("\n\n")
    assert lines.startswith(head) and lines.endswith(tail) and head and tail
    path = notice.split("stored at: ", 1)[1].split(". Use read", 1)[0]
    assert Path(path).read_text() == lines
    omitted = len(lines) - len(head) - len(tail)
    assert notice == (
        f"(Omitted {omitted} bytes. Full formatted result stored at: {path}. Use read with "
        "offset/limit, or grep this path to search within it.)"
    )
    assert price(text) <= MAX_INLINE_TOKENS
    small = ToolResult.text("x" * 100)
    assert bound(small, "bash", "s") is small
    assert bound(ToolResult.text(lines), "read", "s").content[0]["text"] == lines


def test_an_image_in_an_oversized_result_is_the_text_a_text_only_model_reads() -> None:
    """tools/spill-image-text-model: native's spill-policy sees the plugin's text."""
    lines = "".join(f"{n}\n" for n in range(30000))
    image = {"type": "image", "mimeType": "image/png", "data": "iVBOR"}
    result = ToolResult([{"type": "text", "text": lines}, image, {"type": "text", "text": "end"}])
    kept = bound(result, "dump", "session-1")
    [block] = kept.content
    path = block["text"].split("stored at: ", 1)[1].split(". Use read", 1)[0]
    assert Path(path).read_text() == lines + "[image omitted: model has no image input]end"
    assert block["text"].startswith("0\n1\n") and "\n\n[...]\n\n" in block["text"]
    # A model that takes images: native has no image price for the route, keeps it whole.
    assert bound(result, "dump", "session-1", images=True) is result

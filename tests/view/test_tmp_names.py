"""Names the agent makes in the run's TMPDIR: native puts a long bash command's full
output in `$TMPDIR/dsh-subprocess-<mkdtemp>/dsh-subprocess-<pid>-<n>-<hex>-stdout.log`
and a long result in `$TMPDIR/dsh-spill-<mkdtemp>/session-<hex>/<hex>-bash.txt`. Their
random parts become positional tokens (the same part the same token, so the model's
later read of the file stays linked), their structure stays (issue 31)."""

from __future__ import annotations

from typing import Any

from parity.core.transcript import ProcessRecord
from parity.view.normalize import view
from tests.support.wire import Wire

S1 = "0f6c1d9e-2b8a-4c51-9a77-3f0e5d1c2b4a"
PATHS = {"workdir": "/tmp/run-1/work", "home": "/tmp/run-1/home", "tmp": "/tmp/run-1/tmp"}


def run(suffix: str, pid: int, hexes: tuple[str, str, str]) -> dict[str, Any]:
    full = f"/tmp/run-1/tmp/dsh-subprocess-{suffix}/dsh-subprocess-{pid}-1-{hexes[0]}-stdout.log"
    spill = f"/tmp/run-1/tmp/dsh-spill-{suffix[::-1]}/session-{hexes[1]}/{hexes[2]}-bash.txt"
    text = f"[output truncated; full output: {full}]\n(Full formatted result stored at: {spill}.)"
    w = Wire(paths=PATHS)
    w.step("prompt", 'prompt s1 "go"').send(3, "session/prompt", {"sessionId": S1})
    w.update(S1, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "rawOutput": text})
    w.update(S1, {"sessionUpdate": "tool_call_update", "toolCallId": "c2", "rawInput": full})
    w.reply(3, {"stopReason": "end_turn"}).end()
    w.model({"messages": [{"role": "tool", "content": text}]})
    w.t.processes.append(ProcessRecord(argv=["dsh"], pid=pid, exit_code=0))
    return view(w.t, "exact", [], dates=[])


def test_random_parts_of_tmpdir_names_become_linked_tokens_and_the_structure_stays() -> None:
    one = run("rvC8oH", 15806, ("c721f4e26c5c", "71524cc27e18", "8eb88a32539e"))
    two = run("p1iaxe", 17345, ("1c3470113070", "c96b58569bfd", "6caaaeefe141"))
    assert one == two
    updates = one["steps"][0]["updates"]
    full = "<tmp>/dsh-subprocess-<tmpname:1>/dsh-subprocess-<pid>-1-<tmpname:2>-stdout.log"
    assert updates[0]["rawOutput"] == (
        f"[output truncated; full output: {full}]\n(Full formatted result stored at: "
        "<tmp>/dsh-spill-<tmpname:3>/session-<tmpname:4>/<tmpname:5>-bash.txt.)"
    )
    assert updates[1]["rawInput"] == full
    assert one["model"][0]["body"]["messages"][0]["content"] == updates[0]["rawOutput"]


def test_names_without_random_parts_stay() -> None:
    w = Wire(paths=PATHS)
    w.step("prompt", 'prompt s1 "go"').send(3, "session/prompt", {"sessionId": S1})
    kept = "/tmp/run-1/tmp/opencode /tmp/run-1/tmp/inside.txt /tmp/run-1/work/my-report/a"
    w.update(S1, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "rawOutput": kept})
    w.reply(3, {"stopReason": "end_turn"}).end()
    update = view(w.t, "exact", [], dates=[])["steps"][0]["updates"][0]
    assert update["rawOutput"] == "<tmp>/opencode <tmp>/inside.txt <workdir>/my-report/a"


def test_a_second_file_in_a_directory_seen_before_gets_its_own_token() -> None:
    """The directory's name is already a token when the second spill file is named
    (names seen before are replaced wherever they recur): the path still counts as one
    below TMPDIR, so the new file's random name is numbered too (found recording
    tools/bash-long-output, whose second long result named its spill file raw)."""
    w = Wire(paths=PATHS)
    w.step("prompt", 'prompt s1 "go"').send(3, "session/prompt", {"sessionId": S1})
    for call, name in (("c1", "8eb88a32539e"), ("c2", "2d5f65cf6617")):
        spill = f"/tmp/run-1/tmp/dsh-spill-AbC123/session-71524cc27e18/{name}-bash.txt"
        w.update(S1, {"sessionUpdate": "tool_call_update", "toolCallId": call, "rawOutput": spill})
    w.reply(3, {"stopReason": "end_turn"}).end()
    updates = view(w.t, "exact", [], dates=[])["steps"][0]["updates"]
    assert [u["rawOutput"] for u in updates] == [
        f"<tmp>/dsh-spill-<tmpname:1>/session-<tmpname:2>/<tmpname:{n}>-bash.txt" for n in (3, 4)
    ]

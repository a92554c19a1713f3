"""The transcript's JSON form: `from_dict` gives back the typed transcript `to_dict` wrote."""

from __future__ import annotations

import json

from parity.core.transcript import Frame, ModelRequest, ProcessRecord, StepRecord, Transcript


def test_a_transcript_survives_the_json_round_trip_typed() -> None:
    transcript = Transcript(
        scenario="demo/text",
        target="plus",
        run_id="p1r1",
        frames=[
            Frame(0, 0.1, "out", '{"x": 1}', {"x": 1}),
            Frame(1, 0.2, "in", "garbage", parse_error="not JSON", process=1),
        ],
        steps=[StepRecord(0, "initialize", "initialize", line=3, frames=[0, 1], problem="p")],
        model_requests=[ModelRequest(0, 0.3, "POST", "/stream", "parity-stream", {"a": [1]})],
        processes=[ProcessRecord(["agent"], pid=7, exit_code=0, stopped_by="eof")],
        problems=["a problem"],
        paths={"workdir": "/w"},
        timings={"run": 1.5},
        files={"a.txt": "text", "gone.txt": None},
        dialect="parity-stream",
        agent={"name": "DSH"},
    )
    again = Transcript.from_dict(json.loads(json.dumps(transcript.to_dict())))
    assert again == transcript
    assert isinstance(again.frames[1], Frame) and isinstance(again.steps[0], StepRecord)
    assert isinstance(again.model_requests[0], ModelRequest)
    assert isinstance(again.processes[0], ProcessRecord)

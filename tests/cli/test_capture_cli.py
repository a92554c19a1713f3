"""`parity capture` as a user runs it: a subprocess in a throwaway project, a second fake
LLM as the provider (its key required), the scenario written and replayed keyless."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from parity.fakellm.thread import FakeLLMThread
from tests.support.project import Project

KEY = "sk-cli-" + "5e1d0c9b8a7f6e5d" * 2
NOWHERE = ("--upstream", "http://127.0.0.1:9/v1", "--model", "m")
"""A provider no one listens for (port 9, discard)."""


@pytest.fixture
def provider() -> Iterator[str]:
    """The provider's OpenAI-style base URL (a fake run that requires `KEY`)."""
    fake = FakeLLMThread()
    fake.start()
    try:
        run = fake.open_run(
            "provider", llm=[{"text": "captured answer"}], tools=[], catalog={}, api_key=KEY
        )
        yield run.base_url + "/v1"
    finally:
        fake.stop()


REFUSALS = {
    401: {"message": "Incorrect API key provided", "type": "auth", "code": "invalid_api_key"},
    409: {"message": "request conflicts with another one in flight", "type": "conflict"},
}


@pytest.fixture(params=sorted(REFUSALS))
def refusing(request: pytest.FixtureRequest) -> Iterator[tuple[int, str]]:
    """(status, OpenAI-style base URL) of a provider on 127.0.0.1 that refuses every
    call with that status and an OpenAI-style error body."""
    status: int = request.param
    body = json.dumps({"error": REFUSALS[status]}).encode()

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield status, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def capture(project: Project, *args: str, **env: str) -> tuple[int, str, str]:
    done = project.parity("capture", "--target", "mini", "--api-key-env", "CLI_KEY", *args, **env)
    return done.returncode, done.stdout, done.stderr


def test_capture_writes_a_scenario_that_replays_keyless(project: Project, provider: str) -> None:
    code, out, err = capture(
        project,
        *("--upstream", provider, "--model", "m", "--prompt", "say something"),
        *("-o", "scenarios/captured/hello.yaml"),
        CLI_KEY=KEY,
    )
    assert code == 0, err
    assert "wrote scenarios/captured/hello.yaml: 1 model call(s) recorded from mini" in out
    assert "keyless replay: same normalized view as the captured run" in out
    written = project.root / "scenarios/captured/hello.yaml"
    data = yaml.safe_load(written.read_text())
    assert data["llm"][0]["text"] == "captured answer"
    assert data["captured"]["target"] == "mini"
    assert KEY not in written.read_text()
    # What a user does next: validate and record it, with no key in the environment.
    assert project.parity("validate", "scenarios/captured/hello.yaml").returncode == 0
    recorded = project.parity("record", "captured/hello")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr


def test_a_missing_key_variable_is_refused_before_anything_runs(project: Project) -> None:
    code, _, err = capture(project, *NOWHERE, "--prompt", "x", "-o", "out.yaml")
    assert code == 2
    assert "$CLI_KEY is not set" in err
    assert not (project.root / "out.yaml").exists()


def test_a_broken_steps_file_names_its_line_and_key(project: Project) -> None:
    project.write("steps.yaml", "description: d\nsteps:\n  - prompt: {sesion: s1, text: x}\n")
    code, _, err = capture(
        project, *NOWHERE, "--steps", "steps.yaml", "-o", "out.yaml", CLI_KEY=KEY
    )
    assert code == 1
    assert "steps.yaml:3" in err and "sesion" in err
    assert not (project.root / "out.yaml").exists()


def test_an_unreachable_provider_is_a_run_problem_and_the_exit_says_so(
    project: Project,
) -> None:
    code, _, err = capture(
        project, *NOWHERE, "--prompt", "x", "-o", "out.yaml", "--no-verify", CLI_KEY=KEY
    )
    assert code == 1
    assert "upstream unreachable: http://127.0.0.1:9/v1/chat/completions" in err
    assert "the scenario is written; see the problems above" in err


def test_a_refused_call_fails_the_capture_and_writes_nothing(
    project: Project, refusing: tuple[int, str]
) -> None:
    status, url = refusing
    args = ("--upstream", url, "--model", "m", "--prompt", "x", "-o", "out.yaml")
    code, out, err = capture(project, *args, CLI_KEY=KEY)
    assert code == 1, out + err
    assert "the provider refused 1 of 1 model call(s)" in err
    assert f"llm[0]: HTTP {status}: {REFUSALS[status]['message']}" in err
    assert "nothing was written (--keep-refused writes the scenario anyway)" in err
    assert "wrote " not in out
    assert not (project.root / "out.yaml").exists()
    assert not list(project.root.glob("*.yaml"))

    # Asked for, the refusal is kept as the scenario's model answer (and said so).
    code, out, err = capture(project, *args, "--keep-refused", "--no-verify", CLI_KEY=KEY)
    assert code == 0, out + err
    assert "wrote out.yaml: 1 model call(s) recorded from mini" in out
    assert f"kept the provider's refusal (--keep-refused): llm[0]: HTTP {status}:" in err
    error = yaml.safe_load((project.root / "out.yaml").read_text())["llm"][0]["error"]
    assert error["status"] == status


def test_a_wrong_key_is_a_401_named_with_the_key_redacted(project: Project, provider: str) -> None:
    args = ("--upstream", provider, "--model", "m", "--prompt", "x", "-o", "out.yaml")
    code, _, err = capture(project, *args, CLI_KEY="sk-wrong-key-123456")
    assert code == 1
    assert "llm[0]: HTTP 401: invalid API key: <redacted>" in err
    assert "sk-wrong-key-123456" not in err
    assert not (project.root / "out.yaml").exists()

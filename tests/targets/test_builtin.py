"""The built-in `plus` and `plus-openai` targets, as shipped in parity/targets/targets.toml.

acp-plus reached through its parity-stream provider and through its real
OpenAI-compatible provider (against the fake's chat dialect) must put the same ACP
frames on the wire and show the model the same requests: the two model views, in two
wire dialects, compare equal in the fake's canonical form with no divergence declared.
"""

from __future__ import annotations

from tests.support.project import Project

BOTH = """\
description: reasoning then text, through both acp-plus providers
targets: [plus, plus-openai]
llm:
  - reasoning: think first
    text: hello there
    usage: {input: 5, output: 11, reasoning: 2}
steps:
  - initialize: {}
  - new_session: {as: s1}
  - prompt: {session: s1, text: say hello}
"""


def test_plus_openai_puts_the_same_acp_frames_on_the_wire_as_plus(project: Project) -> None:
    project.write("parity.toml", "")
    project.root.joinpath("scenarios/demo/text.yaml").unlink()
    project.write("scenarios/adapters/both.yaml", BOTH)
    done = project.parity("record")
    assert done.returncode == 0, done.stdout
    assert "scenarios/adapters/both.yaml::parity[plus-openai~plus] PASSED" in done.stdout
    plus = project.snapshot("adapters/both", "plus").read_text()
    assert "text: think first" in plus and "text: hello there" in plus
    openai = project.snapshot("adapters/both", "plus-openai").read_text()
    assert "/v1/chat/completions" in openai and "/stream" not in openai

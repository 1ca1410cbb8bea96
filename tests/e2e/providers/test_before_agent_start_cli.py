"""``before_agent_start`` returning ``systemPrompt`` replaces the prompt the provider receives for that
run (reference §9.3; pi's docs: "every provider receives the forced text as its leading system
prompt"), while the session file keeps the structured sections. Checked on the wire: the
anthropic-messages request body the loopback server recorded."""

from __future__ import annotations

import glob
import json
import textwrap

from tests.e2e.providers.test_anthropic_cli import credential
from tests.plugins.pi_provider_anthropic.test_session import answer_turn
from tests.support.pi import run_pi
from tests.support.providers.sse import Reply

PLUGIN = """
from pi_host import hookimpl


@hookimpl
def on_before_agent_start(event):
    assert "coding" in event["systemPrompt"]
    return {"systemPrompt": "FORCED PROMPT for this run"}
"""


def test_returned_system_prompt_reaches_the_provider(sse_server, isolated_environment, tmp_path):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local-claude": {
                        "baseUrl": sse_server.url,
                        "api": "anthropic-messages",
                        "apiKey": "dummy",
                        "models": [{"id": "claude-local"}],
                    }
                }
            }
        )
    )
    plugin = tmp_path / "forcer.py"
    plugin.write_text(textwrap.dedent(PLUGIN))
    sse_server.enqueue(Reply.sse(answer_turn("ok")))
    out = run_pi(
        "-p", "--model", "local-claude/claude-local", "-e", str(plugin), "hi", cwd=work, drop=credential
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    system = json.dumps(sse_server.requests[0].json["system"])
    assert "FORCED PROMPT for this run" in system and "coding" not in system
    assert [t["name"] for t in sse_server.requests[0].json["tools"]] == ["read", "bash", "edit", "write"]
    [path] = glob.glob(str(agent / "sessions" / "*" / "*.jsonl"))
    entries = [json.loads(line) for line in open(path, encoding="utf-8")]
    system_entry = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "system")
    assert "FORCED" not in json.dumps(system_entry)  # the transcript keeps the structured sections

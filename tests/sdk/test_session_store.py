"""The store under the real session layer (SDK): entry order of a new session, resuming,
crash recovery (reference §6.6, §11 item 41)."""

from __future__ import annotations

import pi_provider_faux

from pi_host.sdk import create_session
from tests.support.session_files import assistant, header, read_jsonl, user, write_jsonl


async def test_new_session_entry_order_and_lazy_file(isolated_environment):
    pi_provider_faux.set_responses([{"text": "hello back"}])
    session = await create_session(model="faux/faux-1", store_options={"name": "Named"})
    path = session.store.session_file
    import os

    assert not os.path.exists(path)
    await session.prompt("hello")
    await session.close()
    lines = read_jsonl(__import__("pathlib").Path(path))
    kinds = [line["type"] if line["type"] != "message" else line["message"]["role"] for line in lines]
    assert kinds == [
        "session",
        "session_info",
        "model_change",
        "thinking_level_change",
        "system",
        "user",
        "assistant",
    ]


async def test_resumed_session_sends_history_and_continues_the_chain(isolated_environment):
    pi_provider_faux.set_responses([{"text": "one"}, {"text": "two"}])
    first = await create_session(model="faux/faux-1")
    await first.prompt("first")
    await first.close()
    path = first.store.session_file
    second = await create_session(model="faux/faux-1", store_options={"session": path})
    await second.prompt("second")
    await second.close()
    sent = pi_provider_faux.requests[-1]["messages"]
    assert [m.role for m in sent if m.role != "system"] == ["user", "assistant", "user"]
    lines = read_jsonl(__import__("pathlib").Path(path))
    ids = [line["id"] for line in lines[1:]]
    assert [line["parentId"] for line in lines[1:]] == [None, *ids[:-1]]  # one linear chain


async def test_crash_mid_tool_resumes_with_interrupted_results(isolated_environment):
    work = isolated_environment["work"]
    path = write_jsonl(
        work / "crashed.jsonl",
        [
            header(cwd=str(work)),
            {
                "type": "model_change",
                "id": "m0",
                "parentId": None,
                "timestamp": "2026-12-02T09:14:03.590Z",
                "provider": "faux",
                "modelId": "faux-1",
            },
            user("u1", "m0", "run it"),
            assistant(
                "a1", "u1", calls=[{"id": "call_1", "name": "bash", "arguments": {"command": "sleep 100"}}]
            ),
        ],
    )
    pi_provider_faux.set_responses([{"text": "noted"}])
    session = await create_session(store_options={"session": str(path)})
    assert [m.role for m in session.messages] == ["user", "assistant", "toolResult"]
    result = session.messages[-1]
    assert result.is_error and result.tool_call_id == "call_1" and "interrupted" in result.content[0].text
    await session.prompt("what happened?")
    await session.close()
    sent = [m.role for m in pi_provider_faux.requests[-1]["messages"] if m.role != "system"]
    assert sent == ["user", "assistant", "toolResult", "user"]
    lines = read_jsonl(path)
    assert lines[4]["message"]["role"] == "toolResult" and lines[4]["parentId"] == "a1"
    # the bash command was not run again: no tool execution happened in this process
    assert not any(
        line["type"] == "message" and line["message"].get("toolCallId") == "call_1" for line in lines[5:]
    )

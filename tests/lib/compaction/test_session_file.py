"""After compaction the session file alone rebuilds the context the model saw (§6.5, §7.5)."""

from __future__ import annotations

import json

import pi_host
from tests.support.compaction import SMALL_SETTINGS, DumpPlugin, Router, dump_call


def lines(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


async def open_session(**kw):
    return await pi_host.create_session(
        model="faux/faux-small", plugins=[DumpPlugin()], settings=SMALL_SETTINGS, tools=["dump"], **kw
    )


async def test_session_file_rebuilds_to_the_compacted_context():
    router = Router(
        [dump_call(3000), "first answer", *[dump_call(6000)] * 4, "second answer", "third answer"],
        summaries=["HISTORY", "PREFIX"],
    ).install()
    session = await open_session()
    await session.prompt("first task")
    await session.prompt("second task")
    path = session.store.session_file
    records = lines(path)
    [compaction] = [r for r in records if r["type"] == "compaction"]
    ids = [r.get("id") for r in records]
    assert compaction["firstKeptEntryId"] in ids
    assert ids.index(compaction["firstKeptEntryId"]) < ids.index(compaction["id"])
    assert compaction["systemMessage"]["role"] == "system"
    assert compaction["details"] == {"readFiles": [], "modifiedFiles": []}
    assert compaction["usage"]["input"] > 0  # the summary's cost counts in session totals
    live = [m.to_json() for m in session.messages]
    await session.close()

    reopened = await open_session(store_options={"session": path})
    rebuilt = [m.to_json() for m in reopened.messages]
    assert rebuilt == live
    roles = [m["role"] for m in rebuilt]
    assert roles[:2] == ["system", "compactionSummary"]
    assert rebuilt[1]["summary"].startswith("HISTORY\n\n---\n\n**Turn context (split turn):**\n\nPREFIX")
    first_kept = next(r for r in records if r.get("id") == compaction["firstKeptEntryId"])
    assert rebuilt[2] == first_kept["message"]
    assert "toolResult" != rebuilt[2]["role"]
    # the next prompt continues from the rebuilt context
    await reopened.prompt("third task")
    sent = router.turn_requests[-1].messages
    assert [m.role for m in sent][:2] == ["system", "user"] and sent[-1].content[0].text == "third task"
    assert reopened.last_assistant().text() == "third answer"
    await reopened.close()

"""``get_fork_messages`` and ``fork`` on a session with two branches, through the real ``pi --mode
rpc`` subprocess: pi-host's, and pi 1.6.0's on the same file (skipped without it) so that both are
held to the same answers. As pi: every user message of the session file, on any branch, in file
order, each ``{entryId, text}`` with its full text; messages without text are left out. Forking
from a message of the abandoned branch starts a new file with the path up to that message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.interactive import user_texts
from tests.support.loopback import LoopbackServer, Reply
from tests.support.rpc import PI, World, node_pi_client, pi_host_client
from tests.support.session_files import assistant, entry, header, user, write_jsonl

IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def branched_session(world: World) -> Path:
    """Two branches after the first answer: the abandoned one (with an image-only message), then
    the one the leaf is on (the file's last entries; its question in two text blocks)."""
    current = entry(
        "message",
        "u4",
        "a1",
        "2026-12-02T09:14:08.000Z",
        message={
            "role": "user",
            "content": [{"type": "text", "text": "current "}, {"type": "text", "text": "branch question"}],
            "timestamp": 1,
        },
    )
    image_only = entry(
        "message",
        "u3",
        "a2",
        "2026-12-02T09:14:07.000Z",
        message={"role": "user", "content": [IMAGE], "timestamp": 1},
    )
    return write_jsonl(
        world.root / "branched.jsonl",
        [
            header(cwd=str(world.work)),
            user("u1", None, "first question"),
            assistant("a1", "u1", "first answer"),
            user("u2", "a1", "abandoned branch question\nwith a second line"),
            assistant("a2", "u2", "abandoned answer"),
            image_only,
            current,
            assistant("a4", "u4", "current answer"),
        ],
    )


@pytest.mark.parametrize("program", ["pi-host", "pi-1.6.0"])
def test_fork_messages_cover_every_branch_and_fork_revives_the_abandoned_one(tmp_path, program):
    if program == "pi-1.6.0" and PI is None:
        pytest.skip("pi 1.6.0 (node) is not installed under .tools/")
    world = World.make(tmp_path / "rpc")
    path = branched_session(world)
    before = path.read_text()
    start = pi_host_client if program == "pi-host" else node_pi_client
    with LoopbackServer([Reply("answer on the revived branch")]) as server:
        client = start(world, server, "--session", str(path))
        try:
            assert client.get_fork_messages() == {
                "messages": [
                    {"entryId": "u1", "text": "first question"},
                    {"entryId": "u2", "text": "abandoned branch question\nwith a second line"},
                    {"entryId": "u4", "text": "current branch question"},
                ]
            }
            assert client.fork("u2") == {
                "text": "abandoned branch question\nwith a second line",
                "cancelled": False,
            }
            forked = client.get_state()["sessionFile"]
            assert forked != str(path)
            assert client.get_fork_messages() == {"messages": [{"entryId": "u1", "text": "first question"}]}
            client.prompt_and_wait("abandoned branch question, revived", timeout=30)
            assert user_texts(server.requests[0]) == ["first question", "abandoned branch question, revived"]
            assert [m["text"] for m in client.get_fork_messages()["messages"]] == [
                "first question",
                "abandoned branch question, revived",
            ]
        finally:
            assert client.close() == 0
    assert path.read_text().startswith(before)  # kept (pi appends a thinking_level_change on open)
    records = [json.loads(line) for line in Path(forked).read_text().splitlines()]
    assert records[0]["parentSession"] == str(path)
    assert [r["id"] for r in records[1:3]] == ["u1", "a1"]  # the path up to the message's parent
    assert not any(r.get("id") in ("u2", "a2", "u3", "u4", "a4") for r in records)

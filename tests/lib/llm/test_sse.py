"""The fast SSE reader (pi_host.lib.llm.sse) against httpx-sse on the same bytes, cut everywhere."""

from __future__ import annotations

import httpx
import pytest
from httpx_sse import EventSource

from pi_host.lib.llm.http import create_client, open_sse
from pi_host.lib.llm.sse import iter_batches, iter_events
from pi_host.protocol import StreamOptions
from tests.support.providers.sse import FIXTURES, Reply

SAMPLES = [
    b'event: message_start\ndata: {"a":"\xc3\xa9\xe2\x98\x83"}\n\n: keep-alive\n\ndata: {"b":2}\n\n',
    b"event: x\r\ndata: line1\r\ndata: line2\r\nid: 7\r\n\r\ndata: after\r\n\r\n",
    b"data: cr only\r\rdata:no-space\n\nretry: 100\ndata: [DONE]\n\n",
]


class Chunks:
    def __init__(self, chunks):
        self.chunks = chunks

    async def aiter_bytes(self):
        for chunk in self.chunks:
            yield chunk


async def reference(raw: bytes) -> list[tuple[bytes, bytes]]:
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=raw)
    return [
        (e.event.encode() if e.event != "message" else b"", e.data.encode())
        async for e in EventSource(response).aiter_sse()
    ]


async def ours(chunks) -> list[tuple[bytes, bytes]]:
    return [event async for batch in iter_batches(Chunks(chunks)) for event in batch]


@pytest.mark.parametrize("raw", SAMPLES)
async def test_every_cut_position_gives_the_same_events(raw):
    expected = await reference(raw)
    assert expected
    assert await ours([raw]) == expected
    for cut in range(1, len(raw)):
        assert await ours([raw[:cut], raw[cut:]]) == expected, cut
    assert await ours([raw[i : i + 1] for i in range(len(raw))]) == expected


async def test_bom_is_skipped_and_a_last_event_without_blank_line_is_kept():
    """Two deliberate differences from httpx-sse: a leading BOM is dropped (as the SSE spec says),
    and a final event that lacks its blank line is still delivered (lenient with sloppy servers)."""
    raw = b"\xef\xbb\xbfdata: first\n\ndata: tail"
    for cut in range(1, len(raw)):
        assert await ours([raw[:cut], raw[cut:]]) == [(b"", b"first"), (b"", b"tail")], cut


async def test_fixture_streams_match_httpx_sse():
    for path in sorted((FIXTURES / "anthropic").glob("*.sse")):
        raw = path.read_bytes()
        expected = await reference(raw)
        got = await ours([raw[i : i + 7] for i in range(0, len(raw), 7)])
        assert [d for _, d in got] == [d for _, d in expected], path.name
        assert [n for n, _ in got] == [n for n, _ in expected]


async def test_batches_rejects_a_non_stream_answer(sse_server):
    sse_server.enqueue(Reply.json(200, {"error": {"type": "proxy", "message": "login required"}}))
    client = create_client()
    try:
        with pytest.raises(Exception, match="Expected a server-sent event stream.*login required"):
            async with open_sse(
                sse_server.url, body={}, headers={}, options=StreamOptions(client=client)
            ) as r:
                async for _ in r.batches():
                    pass
    finally:
        await client.aclose()


# Every cut of one stream that mixes the SSE line-end forms, comments, multi-line data, ``event:``
# and ``id:`` fields, a BOM, split UTF-8 and a last event without its blank line.
MIXED = (
    '\ufeffdata: {"a":"é🎉"}\r\n\r\n'
    ": keep-alive\r\n\r\n"
    "event: response.output_text.delta\r\ndata: line one\r\ndata:line two\r\nid: 7\r\n\r\n"
    "data: last\n\n\n\n"
    "data: z\rdata: w\r\r"
    'data: {"tail":true}'
).encode()

MIXED_EVENTS = [
    (b"", '{"a":"é🎉"}'.encode()),
    (b"response.output_text.delta", b"line one\nline two"),
    (b"", b"last"),
    (b"", b"z\nw"),
    (b"", b'{"tail":true}'),
]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13, 64, 4096])
async def test_every_read_size_gives_the_same_events(size):
    chunks = [MIXED[i : i + size] for i in range(0, len(MIXED), size)]
    events = [event async for event in iter_events(Chunks(chunks))]
    assert events == MIXED_EVENTS


async def test_crlf_split_between_reads():
    chunks = [b"data: a\r", b"\n\r", b"\ndata: b\r\n", b"\r\n"]
    assert [e async for e in iter_events(Chunks(chunks))] == [(b"", b"a"), (b"", b"b")]

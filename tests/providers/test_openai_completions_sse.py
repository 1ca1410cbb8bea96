"""The bytes-level SSE reader the OpenAI adapters use on their hot path: every cut of the byte
stream gives the same events, per the SSE rules (CRLF/CR/LF line ends, comments, multi-line data,
``event:`` fields, a leading BOM, split UTF-8)."""

from __future__ import annotations

import pytest
from pi_provider_openai.sse import iter_events

RAW = (
    '\ufeffdata: {"a":"é🎉"}\r\n\r\n'
    ": keep-alive\r\n\r\n"
    "event: response.output_text.delta\r\ndata: line one\r\ndata:line two\r\nid: 7\r\n\r\n"
    "data: last\n\n\n\n"
    "data: z\rdata: w\r\r"
    'data: {"tail":true}'
).encode()

EXPECTED = [
    (b"", '{"a":"é🎉"}'.encode()),
    (b"response.output_text.delta", b"line one\nline two"),
    (b"", b"last"),
    (b"", b"z\nw"),
    (b"", b'{"tail":true}'),
]


class FakeResponse:
    def __init__(self, chunks):
        self.chunks = chunks

    async def aiter_bytes(self):
        for chunk in self.chunks:
            yield chunk


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13, 64, 4096])
async def test_every_cut_gives_the_same_events(size):
    chunks = [RAW[i : i + size] for i in range(0, len(RAW), size)]
    events = [event async for event in iter_events(FakeResponse(chunks))]
    assert events == EXPECTED


async def test_crlf_split_between_reads():
    chunks = [b"data: a\r", b"\n\r", b"\ndata: b\r\n", b"\r\n"]
    assert [e async for e in iter_events(FakeResponse(chunks))] == [(b"", b"a"), (b"", b"b")]

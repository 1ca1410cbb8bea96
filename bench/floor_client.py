"""The floor a `-p` run is measured against: the least a Python program can do for the same answer.

    python bench/floor_client.py (stdlib|asyncio) (openai|anthropic) URL

It sends the request a `-p hi` run sends (one user message, streaming on), splits the
`text/event-stream` answer into events, decodes each event's data with `json`, joins the text
deltas and prints the text, as `pi -p` prints the final answer. `stdlib` reads with
`http.client` (blocking, chunked decoding in C-backed buffered reads); `asyncio` reads over
asyncio streams with a hand-written chunked decoder, because asyncio's own imports are a cost
pi-host pays too and the issue gives a second floor for them. Only the standard library is
imported: this file stays free of pi-host and of `bench/` helpers on purpose.
"""

from __future__ import annotations

import json
import sys
from urllib.parse import urlsplit


def request(api: str, url: str) -> tuple[str, str, bytes, dict[str, str]]:
    parts = urlsplit(url)
    if api == "openai":
        path = parts.path.rstrip("/") + "/v1/chat/completions"
        body = {"model": "oa-1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        headers = {"Authorization": "Bearer bench-key"}
    else:
        path = parts.path.rstrip("/") + "/v1/messages"
        body = {
            "model": "claude-bench-1",
            "stream": True,
            "max_tokens": 8192,
            "messages": [{"role": "user", "content": "hi"}],
        }
        headers = {"x-api-key": "bench-key", "anthropic-version": "2023-06-01"}
    headers["Content-Type"] = "application/json"
    headers["Accept"] = "text/event-stream"
    return parts.netloc, path, json.dumps(body).encode(), headers


def text_of(api: str, data: bytes) -> str:
    if data == b"[DONE]":
        return ""
    event = json.loads(data)
    if api == "openai":
        choices = event.get("choices")
        return (choices[0]["delta"].get("content") or "") if choices else ""
    if event.get("type") == "content_block_delta":
        return event["delta"].get("text", "")
    return ""


def events(buffer: bytearray, api: str, out: list[str]) -> bytearray:
    """Consume whole events (blank-line separated) from ``buffer``; return what is left."""
    while True:
        end = buffer.find(b"\n\n")
        if end < 0:
            return buffer
        for line in bytes(buffer[:end]).split(b"\n"):
            if line.startswith(b"data:"):
                out.append(text_of(api, line[5:].strip()))
        del buffer[: end + 2]


def run_stdlib(api: str, url: str) -> str:
    import http.client

    host, path, body, headers = request(api, url)
    connection = http.client.HTTPConnection(host)
    connection.request("POST", path, body, headers)
    response = connection.getresponse()
    out: list[str] = []
    buffer = bytearray()
    while piece := response.read1(65536):
        buffer += piece
        buffer = events(buffer, api, out)
    connection.close()
    return "".join(out)


async def run_asyncio(api: str, url: str) -> str:
    import asyncio

    host, path, body, headers = request(api, url)
    name, _, port = host.partition(":")
    reader, writer = await asyncio.open_connection(name, int(port or 80))
    head = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    head += [f"{key}: {value}" for key, value in headers.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    status = await reader.readuntil(b"\r\n\r\n")
    if b" 200 " not in status.split(b"\r\n", 1)[0]:
        raise SystemExit(status.decode(errors="replace"))
    out: list[str] = []
    buffer = bytearray()
    while True:  # chunked transfer encoding: size line, data, CRLF; a zero size ends the body
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            break
        buffer += await reader.readexactly(size + 2)
        del buffer[-2:]
        buffer = events(buffer, api, out)
    writer.close()
    return "".join(out)


def main() -> None:
    kind, api, url = sys.argv[1:4]
    if kind == "stdlib":
        text = run_stdlib(api, url)
    else:
        import asyncio

        text = asyncio.run(run_asyncio(api, url))
    sys.stdout.write(text.strip() + "\n")


if __name__ == "__main__":
    main()

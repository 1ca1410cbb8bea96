"""RPC stdin framing and command decoding (``pi_mode_rpc.framing``), without running pi."""

from __future__ import annotations

import json
import random
import time

from pi_mode_rpc.framing import LineSplitter, parse_command


def split_all(data: bytes, sizes: list[int]) -> list[bytes]:
    splitter = LineSplitter()
    lines: list[bytes] = []
    start = 0
    for size in sizes:
        lines += splitter.feed(data[start : start + size])
        start += size
    lines += splitter.feed(data[start:])
    rest = splitter.rest()
    return lines + ([rest] if rest else [])


def test_lines_are_cut_on_lf_only_however_the_chunks_fall():
    data = '{"a":1}\n\n{"b":"x\u2028y"}\r\n{"c":3}\npartial'.encode()
    expected = data.split(b"\n")
    rng = random.Random(3)
    for _ in range(200):
        sizes = [rng.randrange(0, 12) for _ in range(rng.randrange(0, 12))]
        assert split_all(data, sizes) == expected


def test_a_huge_line_in_small_chunks_takes_linear_time():
    """1,600 chunks of 16 KiB into one 25 MiB line: joined once at its end (the old framing copied
    the growing line on every chunk: ~20 GB of copying for this)."""
    chunk = b"a" * 16384
    splitter = LineSplitter()
    started = time.monotonic()
    for _ in range(1600):
        assert splitter.feed(chunk) == []
    lines = splitter.feed(b"\n" + b"next\n")
    elapsed = time.monotonic() - started
    assert [len(line) for line in lines] == [1600 * 16384, 4]
    assert elapsed < 5, elapsed


def test_commands_and_parse_errors():
    assert parse_command(b'{"type":"get_state","id":"1"}\r') == {"type": "get_state", "id": "1"}
    assert parse_command(b"   ") is None and parse_command(b"") is None
    assert parse_command(b'{"type":').startswith("Failed to parse command: ")
    assert parse_command(b"[1, 2]") == "Failed to parse command: a command is a JSON object"


def test_a_deeply_nested_line_is_a_parse_error_not_a_crash():
    for line in (b"[" * 100_000, b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000):
        assert parse_command(line) == "Failed to parse command: JSON nested too deeply"
    ordinary = json.dumps({"type": "prompt", "message": "x", "deep": [[[[[[[[[[1]]]]]]]]]]}).encode()
    assert parse_command(ordinary)["deep"] == [[[[[[[[[[1]]]]]]]]]]


def test_an_id_or_type_too_deep_to_answer_is_a_parse_error():
    """The response repeats ``id`` (and names ``type``): one nested too deep to encode again would
    leave the command unanswered, so it is refused as the parser refuses deeper JSON."""
    deep = "[" * 500 + "]" * 500
    for line in (f'{{"type":"get_state","id":{deep}}}', f'{{"type":{deep},"id":"x"}}'):
        assert parse_command(line.encode()) == "Failed to parse command: JSON nested too deeply"
    shallow = "[" * 20 + '"a"' + "]" * 20
    assert parse_command(f'{{"type":"get_state","id":{shallow}}}'.encode())["id"] == json.loads(shallow)
    # deep nesting elsewhere in a command is the command's business
    other = '{"type":"prompt","id":"p","x":' + "[" * 500 + "]" * 500 + "}"
    assert parse_command(other.encode())["id"] == "p"


def test_a_response_too_deep_to_encode_still_answers_its_command():
    import io
    import types

    from pi_mode_rpc.server import RpcServer

    out = io.BytesIO()
    server = RpcServer(types.SimpleNamespace(), stdin=0, stdout=out)
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    server.respond("get_state", "q1", data={"x": deep})
    server.send({"type": "extension_ui_request", "data": deep})  # an event: dropped
    server.respond("get_state", "q2", data={"ok": True})
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == [
        {
            "id": "q1",
            "type": "response",
            "command": "get_state",
            "success": False,
            "error": "Failed to encode the response: nested too deeply",
        },
        {"id": "q2", "type": "response", "command": "get_state", "success": True, "data": {"ok": True}},
    ]

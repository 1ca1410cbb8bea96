"""grep on long lines: a long ripgrep event is read from its bytes, never parsed whole, and gives
exactly what a full parse gives for the part that is shown."""

from __future__ import annotations

import json
import subprocess

import pi_tool_grep
import pytest
from pi_tool_grep.events import LONG_EVENT_BYTES, PREFIX_BYTES, long_event, parse_event

from pi_host.lib.toolkit.local_search import find_ripgrep
from tests.support.tools import run, text_of

RG = find_ripgrep()
pytestmark = pytest.mark.skipif(RG is None, reason="ripgrep is not installed")


def rg_events(path, pattern: str) -> list[bytes]:
    """ripgrep's JSON lines for ``pattern`` in ``path`` (the arguments the tool uses)."""
    out = subprocess.run(
        [RG, "--no-config", "--json", "--line-number", "--", pattern, str(path)],
        capture_output=True,
        check=False,
    ).stdout
    return [line for line in out.split(b"\n") if line.startswith(b'{"type":"match"')]


LINES = {
    "ascii": b"needle " + b"x" * 300_000,
    "quotes and backslashes": b"needle " + b'say "hi" \\ back\\slash ' * 20_000,
    "control characters": b"needle " + b"\x01\x02\t\x1f" * 60_000,
    "emoji": "needle 😀 é ".encode() * 30_000,
    "not utf-8": b"needle caf\xe9 " * 30_000,
    "dense matches": b"needle " * 50_000,
}


@pytest.mark.parametrize("shift", range(13))
@pytest.mark.parametrize("name", sorted(LINES))
def test_a_long_event_gives_the_start_of_the_line_as_a_full_parse_does(tmp_path, name, shift):
    # ``shift`` moves the cut at PREFIX_BYTES across every position inside an escape or a
    # UTF-8 sequence.
    (tmp_path / "f.txt").write_bytes(b"." * shift + LINES[name] + b"\n")
    (raw,) = rg_events(tmp_path / "f.txt", "needle")
    assert len(raw) >= LONG_EVENT_BYTES
    full = json.loads(raw)
    short = long_event(raw)
    assert short is not None
    assert short["type"] == "match"
    assert short["data"]["path"] == full["data"]["path"]
    assert short["data"]["line_number"] == full["data"]["line_number"] == 1
    if "text" in full["data"]["lines"]:
        whole = full["data"]["lines"]["text"]
    else:  # not UTF-8: ripgrep sends base64
        import base64

        whole = base64.b64decode(full["data"]["lines"]["bytes"]).decode("utf-8", "replace")
    text = short["data"]["lines"]["text"]
    assert len(text) > 1000
    assert whole.startswith(text[:-1])  # (the last character may be a cut sequence's U+FFFD)


def test_a_long_event_whose_line_is_short_is_read_whole(tmp_path):
    # 2,000 matches make the event long while the line itself fits in the decoded prefix.
    line = 'a"é\\' * 1_000 + "\n"
    (tmp_path / "f.txt").write_text(line, encoding="utf-8")
    (raw,) = rg_events(tmp_path / "f.txt", "a|é")
    assert len(raw) >= LONG_EVENT_BYTES and len(line.encode()) * 2 < PREFIX_BYTES
    assert long_event(raw)["data"]["lines"]["text"] == json.loads(raw)["data"]["lines"]["text"] == line


def test_what_is_not_laid_out_as_ripgrep_writes_it_is_parsed_whole():
    odd = json.dumps({"data": {"lines": {"text": "x" * LONG_EVENT_BYTES}}, "type": "match"}).encode()
    assert long_event(odd) is None
    assert parse_event(odd)["data"]["lines"]["text"] == "x" * LONG_EVENT_BYTES
    assert parse_event(b"{torn") is None


async def test_the_tool_shows_500_characters_of_each_long_line(tmp_path):
    folder = tmp_path / "search"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"head\n" + LINES["quotes and backslashes"] + b"\n")
    (folder / "b.txt").write_bytes(LINES["not utf-8"] + b"\n")
    result = await run(pi_tool_grep.create_tool(), {"pattern": "needle"}, str(folder))
    lines = text_of(result).split("\n\n[")[0].splitlines()
    quoted = LINES["quotes and backslashes"].decode()[:500]
    latin = LINES["not utf-8"].decode("utf-8", "replace")[:500]
    assert lines == [f"a.txt:2: {quoted}... [truncated]", f"b.txt:1: {latin}... [truncated]"]
    assert result.details == {"linesTruncated": True}

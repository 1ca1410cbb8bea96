"""The session line encoder writes a lone surrogate as ``JSON.stringify`` does: the escape
``\\ud83d`` and every other character raw, so a line reads back, and looks, like pi's own."""

from __future__ import annotations

import pi_session_jsonl.jsonl as jsonl


def test_a_lone_surrogate_is_escaped_and_other_characters_stay_raw():
    entry = {"type": "message", "id": "u1", "message": {"role": "user", "content": "cut \ud83d café 😀"}}
    line = jsonl.encode(entry)
    # node -e 'console.log(JSON.stringify({type:"message",id:"u1",message:{role:"user",content:"cut \ud83d café 😀"}}))'
    assert (
        line
        == (
            '{"type":"message","id":"u1","message":{"role":"user","content":"cut \\ud83d café 😀"}}\n'
        ).encode()
    )
    assert jsonl.parse_line(line) == entry


def test_ordinary_lines_are_unchanged():
    entry = {"type": "custom", "id": "c1", "data": {"n": 1 << 70, "t": "é"}}
    assert (
        jsonl.encode(entry)
        == '{"type":"custom","id":"c1","data":{"n":1180591620717411303424,"t":"é"}}\n'.encode()
    )

"""``pi_host.lib.wire``: event lines as ``JSON.stringify`` writes them, lone surrogates included.

JavaScript strings may hold a lone surrogate (a stream cut inside an emoji, a ``\\ud800`` sent
over RPC); ``JSON.stringify`` writes it as the escape ``\\ud800`` and every other character raw.
The expected bytes below are what Node 22 prints for the same values.
"""

from __future__ import annotations

import json

from pi_host.lib.wire import encode_line, json_bytes, well_formed
from pi_host.protocol import UserMessage


def test_a_lone_surrogate_is_escaped_and_the_rest_stays_raw():
    line = encode_line({"type": "x", "a": "x\ud800y\udc00z\U0001f600 é \u2028", "k\udfff": 1})
    # node -e 'console.log(JSON.stringify({type:"x",a:"x\ud800y\udc00z😀 é \u2028","k\udfff":1}))'
    assert line == '{"type":"x","a":"x\\ud800y\\udc00z😀 é \u2028","k\\udfff":1}\n'.encode()
    assert json.loads(line) == {"type": "x", "a": "x\ud800y\udc00z\U0001f600 é \u2028", "k\udfff": 1}


def test_two_halves_of_a_pair_are_one_character_as_in_javascript():
    assert encode_line({"type": "x", "a": "\ud83d\ude00"}) == '{"type":"x","a":"😀"}\n'.encode()


def test_a_message_event_with_a_lone_surrogate_keeps_its_message():
    message = UserMessage(content="hi \ud800", timestamp=1)
    line = encode_line({"type": "message_start", "message": message})
    assert json.loads(line) == {
        "type": "message_start",
        "message": {"role": "user", "content": "hi \ud800", "timestamp": 1},
    }
    assert b"\\ud800" in line


def test_the_fast_path_is_unchanged_for_ordinary_text():
    record = {"type": "x", "text": "plain é 😀 \u2028", "n": 1.5}
    assert encode_line(record) == '{"type":"x","text":"plain é 😀 \u2028","n":1.5}\n'.encode()


def test_json_bytes_falls_back_for_what_orjson_refuses():
    assert json_bytes({"big": 1 << 70, "s": "\udce9"}) == b'{"big":1180591620717411303424,"s":"\\udce9"}'
    assert json_bytes({"nan": float("nan"), "s": "\ud800"}) == b'{"nan":null,"s":"\\ud800"}'


def test_well_formed_text_replaces_lone_surrogates_like_node_writing_a_file():
    # node: fs.writeFileSync(f, "a\ud800b") writes 61 ef bf bd 62
    assert well_formed("a\ud800b") == "a\ufffdb"
    assert well_formed("\ud83d\ude00 and \udc00") == "😀 and \ufffd"
    text = "ordinary é"
    assert well_formed(text) is text

"""MessageBuilder, partial/final tool-argument parsing and usage (reference §1.4, §2)."""

from __future__ import annotations

import pytest

from pi_host.lib.llm.builder import MessageBuilder
from pi_host.lib.llm.partial_json import parse_final, parse_partial, repair_json
from pi_host.lib.llm.usage import calculate_cost
from pi_host.protocol import Model, Usage

MODEL = Model.model_validate(
    {
        "id": "m",
        "provider": "p",
        "api": "a",
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1', {"a": 1}),
        ('{"path":"src/fo', {"path": "src/fo"}),
        ('{"a":"x\\', {"a": "x"}),
        ('{"a":"\\u00', {"a": ""}),
        ('{"a":[1,2', {"a": [1, 2]}),
        ('{"a":1,"b":', {"a": 1}),
        ('{"a":1,"b', {"a": 1}),
        ('{"a":{"b":"c', {"a": {"b": "c"}}),
    ],
)
def test_partial_parse_rules(text, expected):
    assert parse_partial(text) == expected


def test_partial_parse_of_nothing_or_non_object():
    assert parse_partial("") is None
    assert parse_partial("[1,2") is None
    assert parse_partial("nonsense") is None


def test_final_parse_repairs_control_characters_and_bad_escapes():
    raw = '{"code":"line1\nline2\ttab","path":"C:\\qq\\dir"}'
    value, error = parse_final(raw)
    assert error is None
    assert value == {"code": "line1\nline2\ttab", "path": "C:\\qq\\dir"}
    assert repair_json('{"a":"\\x"}') == '{"a":"\\\\x"}'


@pytest.mark.parametrize(
    ("text", "fragment"), [("[1,2]", "list"), ('"s"', "str"), ("null", "null"), ("{bad", "Invalid JSON")]
)
def test_final_parse_non_objects_report_arguments_error(text, fragment):
    value, error = parse_final(text)
    assert value == {}
    assert fragment in error and text in error


def test_empty_arguments_are_an_empty_object():
    assert parse_final("") == ({}, None)
    assert parse_final("  ") == ({}, None)


def test_interleaved_blocks_keyed_by_provider_key():
    b = MessageBuilder(MODEL)
    events = [b.start()]
    events += b.toolcall("call-0", "", id="c0", name="read")
    events += b.toolcall("call-1", '{"path":', id="c1", name="write")
    events += b.text("t", "Hello")
    events += b.toolcall("call-0", '{"path":"a')
    events += b.toolcall("call-1", '"b"}')
    events += b.text("t", " world")
    events += b.done("toolUse", raw="tool_calls")
    kinds = [(e.type, getattr(e, "content_index", None)) for e in events]
    assert kinds == [
        ("start", None),
        ("toolcall_start", 0),
        ("toolcall_delta", 0),
        ("toolcall_start", 1),
        ("toolcall_delta", 1),
        ("text_start", 2),
        ("text_delta", 2),
        ("toolcall_delta", 0),
        ("toolcall_delta", 1),
        ("text_delta", 2),
        ("toolcall_end", 0),
        ("toolcall_end", 1),
        ("text_end", 2),
        ("done", None),
    ]
    message = events[-1].message
    assert message.stop_reason == "toolUse" and message.raw_stop_reason == "tool_calls"
    assert [c.arguments for c in message.tool_calls()] == [{}, {"path": "b"}]
    assert message.tool_calls()[0].arguments_error is not None  # '{"path":"a' is incomplete
    assert events[-2].content == "Hello world"


def test_pending_while_streaming_and_key_reuse_opens_a_new_block():
    b = MessageBuilder(MODEL)
    b.start()
    assert b.message.stop_reason == "pending"
    b.text(0, "a")
    b.text_end(0)
    b.text(0, "b")
    assert [c.text for c in b.message.content] == ["a", "b"]


def test_late_id_and_name_fill_in():
    b = MessageBuilder(MODEL)
    b.toolcall(0, "")
    b.toolcall(0, '{"x":1}', id="late", name="tool")
    end = b.toolcall_end(0)
    assert (end.tool_call.id, end.tool_call.name, end.tool_call.arguments) == ("late", "tool", {"x": 1})


def test_whole_arguments_given_at_end():
    b = MessageBuilder(MODEL)
    b.toolcall_start("g", id="x", name="n")
    end = b.toolcall_end("g", arguments={"k": [1]})
    assert end.tool_call.arguments == {"k": [1]}


def test_fail_keeps_content_and_usage():
    b = MessageBuilder(MODEL)
    b.start()
    b.text(0, "partial")
    b.set_usage(input=100, output=5)
    error = b.fail("boom")
    assert error.reason == "error"
    assert error.error.text() == "partial"
    assert error.error.usage.total_tokens == 105
    assert error.error.error_message == "boom"
    aborted = MessageBuilder(MODEL).fail("stop", aborted=True)
    assert aborted.reason == "aborted" and aborted.error.stop_reason == "aborted"


def test_done_with_refusal_becomes_error():
    b = MessageBuilder(MODEL)
    b.text(0, "x")
    events = b.done("error", raw="refusal", error_message="refused")
    assert [e.type for e in events] == ["text_end", "error"]
    assert events[-1].error.raw_stop_reason == "refusal"


def test_cost_and_tiers():
    usage = Usage(input=1_000_000, output=100_000, cache_read=200_000, cache_write=10_000)
    cost = calculate_cost(MODEL, usage)
    assert cost.input == pytest.approx(3)
    assert cost.output == pytest.approx(1.5)
    assert cost.cache_read == pytest.approx(0.06)
    assert cost.cache_write == pytest.approx(0.0375)
    assert cost.total == pytest.approx(3 + 1.5 + 0.06 + 0.0375)
    tiered = Model.model_validate(
        {
            "id": "t",
            "cost": {
                "input": 1,
                "output": 2,
                "cacheRead": 0,
                "cacheWrite": 0,
                "tiers": [
                    {"inputTokensAbove": 100, "input": 10, "output": 20},
                    {"inputTokensAbove": 1000, "input": 100, "output": 200},
                ],
            },
        }
    )
    assert calculate_cost(tiered, Usage(input=50, output=1_000_000)).total == pytest.approx(50 / 1e6 + 2)
    assert calculate_cost(tiered, Usage(input=500, output=1_000_000)).output == pytest.approx(20)
    assert calculate_cost(tiered, Usage(input=5000, output=1_000_000)).output == pytest.approx(200)


def test_text_growth_is_linear():
    """50,000 appends would take seconds if each copied the whole text."""
    import time

    b = MessageBuilder(MODEL)
    piece = "x" * 20
    started = time.perf_counter()
    for _ in range(50_000):
        b.text(0, piece)
    assert len(b.message.content[0].text) == 1_000_000
    assert time.perf_counter() - started < 1.5


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_incremental_partial_object_matches_full_reparse(ensure_ascii):
    """Random cuts of real-looking arguments: the fast path must equal a jiter parse of the prefix."""
    import json
    import random

    from pi_host.lib.llm.partial_json import PartialObject

    rng = random.Random(7)
    docs = [
        {
            "path": "src/a.py",
            "content": 'def f(x):\n    return "x" * 2  # ünïcode ✓ 🎉 \\ back\n' * 30,
            "n": [1, 2.5, {"k": 'v"q'}],
        },
        {"a": ["x", "y\\z", {"b": "c\td"}], "e": None, "f": "end é 😀", "g": {"h": ["", "i"]}},
        {"edits": [{"oldText": "a\nb", "newText": "c\nd"}, {"oldText": "é", "newText": '"q"'}]},
        {"k": "x" * 300, "k2": "y,{}[]:" * 20, "bool": False},
    ]
    fast_paths = 0
    for doc in docs:
        text = json.dumps(doc, ensure_ascii=ensure_ascii)
        for _ in range(15):
            tracker = PartialObject()
            i = deltas = 0
            while i < len(text):
                step = rng.randint(1, 12)
                got = tracker.feed(text[i : i + step])
                i += step
                deltas += 1
                want = parse_partial(text[:i])
                if want is not None:
                    assert got == want, text[:i][-40:]
            assert tracker.value == doc
            fast_paths += deltas - tracker.full_parses
    assert fast_paths > 1000  # the fast path is actually taken


@pytest.mark.parametrize("step", [1, 2, 3, 5, 7, 11])
def test_escapes_split_across_deltas_stay_on_the_fast_path(step):
    """A file body full of escapes (newlines, quotes, backslashes, tabs) cut at every phase: each
    delta's value equals jiter's partial parse of the prefix, and after the structure is known
    only ``\\u`` escapes (here: none) or structural characters need a full parse."""
    import json

    from pi_host.lib.llm.partial_json import PartialObject

    body = 'print("a\\tb")\n\\path\\to\tx = "q"\n' * 40
    text = json.dumps({"path": "a.py", "content": body})
    tracker = PartialObject()
    for i in range(0, len(text), step):
        got = tracker.feed(text[i : i + step])
        want = parse_partial(text[: i + step])
        if want is not None:
            assert got == want, (i, text[i : i + step])
    assert tracker.value == {"path": "a.py", "content": body}
    # Only the ~30 characters before the content string opens (and the closing `"}`) parse fully.
    assert tracker.full_parses <= 32 // step + 3, tracker.full_parses


def test_large_streamed_argument_stays_linear():
    """A 500 KB file body in 50,000 deltas: quadratic copying or re-parsing would take many seconds."""
    import json
    import time

    args = json.dumps({"path": "big.txt", "content": "line of text\n" * 40_000})
    pieces = [args[i : i + 10] for i in range(0, len(args), 10)]
    b = MessageBuilder(MODEL)
    b.toolcall_start(0, id="c", name="write")
    started = time.perf_counter()
    for piece in pieces:
        b.toolcall_delta(0, piece)
    assert b.block(0).arguments["content"].startswith("line of text\n")
    end = b.toolcall_end(0)
    assert time.perf_counter() - started < 2.0
    assert end.tool_call.arguments["content"] == "line of text\n" * 40_000

"""bash's bounded output collector agrees with truncating the whole output at once."""

from __future__ import annotations

import random

from pi_tool_bash.output import OutputCollector

from pi_host.lib.toolkit import truncate_tail


def feed(text: str, rng: random.Random) -> OutputCollector:
    data = text.encode()
    collector = OutputCollector()
    position = 0
    while position < len(data):
        size = rng.choice([3, 100, 4096, 65536])
        collector.add(data[position : position + size])
        position += size
    collector.close()
    return collector


def test_collector_matches_whole_output_truncation():
    rng = random.Random(7)
    shapes = [
        lambda: "".join(f"{i}\n" for i in range(rng.randint(0, 5000))),
        lambda: "".join("é" * rng.randint(0, 300) + "\n" for _ in range(rng.randint(1, 600))),
        lambda: "x" * rng.randint(40_000, 120_000),
        lambda: "short\n" + "€" * rng.randint(17_000, 40_000),
        lambda: "".join(f"{i}\n" for i in range(3000)) + "no newline at end",
    ]
    for _ in range(60):
        text = rng.choice(shapes)()
        if not text:
            continue
        collector = feed(text, rng)
        expected = truncate_tail(text)
        got = collector.truncation()
        assert (got.content, got.truncated, got.output_lines, got.total_lines, got.total_bytes) == (
            expected.content,
            expected.truncated,
            expected.output_lines,
            expected.total_lines,
            expected.total_bytes,
        )
        assert got.last_line_partial == expected.last_line_partial
        if collector.full_output_path:
            with open(collector.full_output_path, encoding="utf-8") as handle:
                assert handle.read() == text
            import os

            os.unlink(collector.full_output_path)
        else:
            assert not expected.truncated

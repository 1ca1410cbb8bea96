"""Cost of partial tool-argument parsing: a 20 KB argument object streamed in 2,000 deltas.

While a tool call streams, every non-empty delta re-parses the text so far with jiter's
``trailing-strings`` partial mode so ``partial.content[i].arguments`` stays current (reference
§2.3); the final text is parsed strictly once at ``toolcall_end``. Figures (median of several
runs, same process):

* ``builder``      ``MessageBuilder.toolcall_delta`` × 2,000 + ``toolcall_end``: the real cost,
                   including the buffer growth, the delta events and the final strict parse
                   (target ≤ 50 ms). Deltas that only extend the string being streamed take a fast
                   path (append to the last parse result); the others re-parse with jiter;
* ``jiter only``   a jiter partial parse of every prefix (what the builder would cost without the
                   fast path);
* ``one parse``    a single strict parse of the whole 20 KB text (the floor: no partial view);
* ``json.loads``   the stdlib's strict parse of every prefix that happens to be complete, plus a
                   pure-Python "close the open string/containers then json.loads" repair per
                   delta, a naive way to get partial arguments without jiter (baseline).

Run: ``.venv/bin/python bench/providers_partial_json.py [--runs 9] [--bytes 20000] [--deltas 2000]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jiter

from pi_host.lib.llm.builder import MessageBuilder
from pi_host.protocol import Model


def make_pieces(total: int, deltas: int) -> tuple[str, list[str]]:
    body = ("def f(x):\n    return x * 2  # ünïcode ✓\n" * (total // 40 + 1))[: total - 60]
    text = json.dumps({"path": "src/module.py", "content": body, "overwrite": True}, ensure_ascii=False)
    size = len(text) // deltas + 1
    return text, [text[i : i + size] for i in range(0, len(text), size)]


def naive_close(prefix: str) -> object:
    """Pure-Python partial parse: track strings/containers, close them, json.loads."""
    stack = []
    in_string = False
    escaped = False
    for ch in prefix:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            stack.pop()
    candidate = prefix[:-1] if escaped else prefix
    if in_string:
        candidate += '"'
    try:
        return json.loads(candidate + "".join(reversed(stack)))
    except ValueError:
        return None


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--bytes", type=int, default=20_000)
    parser.add_argument("--deltas", type=int, default=2_000)
    args = parser.parse_args()
    text, pieces = make_pieces(args.bytes, args.deltas)
    prefixes: list[bytes] = []
    model = Model(id="bench")
    expected = json.loads(text)

    full_parses = []

    def builder() -> None:
        b = MessageBuilder(model)
        b.toolcall_start(0, id="call_1", name="write")
        for piece in pieces:
            b.toolcall_delta(0, piece)
        full_parses.append(b._open[0].args.full_parses)
        assert b.toolcall_end(0).tool_call.arguments == expected

    def jiter_only() -> None:
        for prefix in prefixes:
            jiter.from_json(prefix, partial_mode="trailing-strings", cache_mode="keys")

    def one_parse() -> None:
        jiter.from_json(text.encode())

    def naive() -> None:
        acc = ""
        for piece in pieces:
            acc += piece
            naive_close(acc)

    # The builder runs before the ~20 MB of prefixes exist: with them allocated, growing the
    # streamed string in place gets several times slower (the allocator has to move it), which
    # measured the heap rather than the parser.
    builder_times = timed(builder, args.runs)
    acc = ""
    for piece in pieces:
        acc += piece
        prefixes.append(acc.encode())
    results = {
        "builder": builder_times,
        "jiter only": timed(jiter_only, args.runs),
        "one parse": timed(one_parse, args.runs),
        "naive (pure Python)": timed(naive, max(3, args.runs // 3)),
    }
    print(
        f"partial tool-argument parsing: {len(text.encode()):,} bytes in {len(pieces):,} deltas, median of runs"
    )
    for name, values in results.items():
        print(f"  {name:20s} {statistics.median(values) * 1000:9.2f} ms")
    total = statistics.median(results["builder"]) * 1000
    naive_ms = statistics.median(results["naive (pure Python)"]) * 1000
    print(f"  (the builder fell back to a full jiter parse on {full_parses[-1]} of {len(pieces)} deltas)")
    print(
        f"  builder total {total:.1f} ms (target <= 50 ms): {'OK' if total <= 50 else 'OVER'}; "
        f"{naive_ms / total:.0f}x faster than the pure-Python baseline"
    )


if __name__ == "__main__":
    main()

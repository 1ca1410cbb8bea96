"""The transcript view's cost against the session's length (issue 31): a ~10 MB session against a
~100 KB one, in process, with the built-in renderers and the real session store.

    .venv/bin/python bench/transcript_view.py [--big-mib 10] [--small-kib 100] [--runs 30]
                                              [--terminal-runs 3] [--keys 10] [--no-terminal]

In process, measured per session, p50 and p99 in milliseconds:

- open: index the store's branch, build the view, draw the first screen (the rows as
  prompt-toolkit fragments);
- page: PageUp and the redraw (each run a page further up, so blocks are drawn the first time);
- key while streaming: one key (a row up) and the redraw while the last block is an answer that
  grows by a few words per frame (a new paragraph every third), drawn as the application draws
  what streams (``fullview.live_drawer``).

The store is opened once per session, outside the timings (resuming is ``bench/sessions_resume.py``'s
business).

Then, in the same run, in a terminal against pi 1.6.0's fullscreen on the same two files
(``bench/transcript_view_terminal.py`` says how): open (process start to the first still screen),
PageUp, and PageUp/PageDown while an answer streams, pi-host and pi alternating run by run. A
side that is not installed is left out.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "bench")]


def _renderers():
    import pi_render_builtin
    from pi_mode_interactive.transcript import Renderers

    class Host:
        def collect_named(self, hook):
            return [("pi_render_builtin", item) for item in pi_render_builtin.register_renderers()]

    return Renderers(Host(), print)


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def measure(path: str, runs: int) -> dict[str, tuple[float, float]]:
    from pi_mode_interactive.fullview import live_drawer
    from pi_mode_interactive.transcript import Item, Transcript
    from pi_mode_interactive.transcript_source import SessionBlocks
    from pi_mode_interactive.transcript_view import TranscriptView
    from pi_session_jsonl.store import JsonlStore
    from prompt_toolkit.formatted_text import ANSI  # noqa: F401  (imported before timing)

    from pi_host.lib.render import RenderContext
    from pi_host.lib.render.theme import builtin_theme
    from pi_host.protocol.messages import AssistantMessage, TextContent

    store = JsonlStore.open_file(path, warn=lambda line: None)
    renderers, theme = _renderers(), builtin_theme("dark")

    def rc_for(width: int, expanded: bool) -> RenderContext:
        return RenderContext(width=width, theme=theme, expanded=expanded, cwd="/", state={})

    def open_view() -> TranscriptView:
        source = SessionBlocks(store, renderers, rc_for)
        view = TranscriptView(source, on_leave=lambda: None, paint=theme.fg)
        view.control.create_content(120, 40)
        return view

    results: dict[str, tuple[float, float]] = {}
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        view = open_view()
        samples.append((time.perf_counter() - start) * 1000)
    results["open"] = _percentiles(samples)

    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        view.scroll(-38)
        view.source.sync()  # the application's before_render
        view.control.create_content(120, 40)
        samples.append((time.perf_counter() - start) * 1000)
    results["page up"] = _percentiles(samples)

    view.bottom()
    words: list[str] = []
    transcript = Transcript()
    holder = {"message": AssistantMessage(content=[])}
    transcript.add(Item(lambda rc: renderers.message(holder["message"], rc)))
    screen = types.SimpleNamespace(transcript=transcript, theme=theme, cwd="/")
    view.source.live = live_drawer(screen)  # as the application draws what streams
    samples = []
    for n in range(runs):
        words.extend(f"word{n}-{k}" for k in range(8))  # the answer grows between frames
        if n % 3 == 2:
            words.append("\n\n")  # and starts a new paragraph now and then
        text = " ".join(words)
        holder["message"] = AssistantMessage(content=[TextContent(text=text)], stop_reason="pending")
        start = time.perf_counter()
        view.scroll(-1)
        view.bottom()
        view.source.sync()  # the application's before_render
        view.control.create_content(120, 40)
        samples.append((time.perf_counter() - start) * 1000)
    results["key while streaming"] = _percentiles(samples)
    store.close()
    return results


def _terminal_table(found: dict[tuple[str, str], dict[str, list[float]]], runs: int) -> None:
    """Medians (p99 for the keys, pooled over the runs), big/small per side and pi-host/pi."""
    print(f"\nin a terminal, {runs} runs per side and session (open: median; keys: p50 / p99)")
    sides = sorted({side for side, _ in found}, reverse=True)  # pi-host first
    header = "".join(f"{side + ' ' + name:>22}" for side in sides for name in ("big", "small"))
    print(f"{'':22}{header}{'big/small':>22}{'pi-host/pi big':>16}")
    for what in ("open", "page up", "key while streaming"):
        cells, p50 = [], {}
        for side in sides:
            for name in ("big", "small"):
                samples = found.get((side, name), {}).get(what, [])
                if not samples:
                    cells.append(f"{'-':>22}")
                    continue
                middle, high = _percentiles(samples)
                p50[side, name] = middle
                cells.append(f"{middle:>13.1f}" + (f" /{high:>7.1f}" if what != "open" else " " * 9))
        growth = " ".join(
            f"{p50[side, 'big'] / p50[side, 'small']:.2f}"
            if (side, "big") in p50 and (side, "small") in p50
            else "-"
            for side in sides
        )
        versus = (
            f"{p50['pi-host', 'big'] / p50['pi', 'big']:.2f}"
            if ("pi-host", "big") in p50 and ("pi", "big") in p50
            else "-"
        )
        print(f"{what:22}{''.join(cells)}{growth:>22}{versus:>16}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--big-mib", type=float, default=10)
    parser.add_argument("--small-kib", type=float, default=100)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--terminal-runs", type=int, default=3)
    parser.add_argument("--keys", type=int, default=10, help="key presses timed per terminal run")
    parser.add_argument("--no-terminal", action="store_true", help="in process only (no tmux, no pi)")
    args = parser.parse_args()
    from sessions_generate import generate

    with tempfile.TemporaryDirectory() as folder:
        big, small = os.path.join(folder, "big.jsonl"), os.path.join(folder, "small.jsonl")
        generate(big, entries=4000, mib=args.big_mib, cwd=folder)
        generate(small, entries=60, mib=args.small_kib / 1024, cwd=folder)
        sizes = {name: os.path.getsize(path) for name, path in (("big", big), ("small", small))}
        found = {name: measure(path, args.runs) for name, path in (("big", big), ("small", small))}
        terminal = None
        if not args.no_terminal:
            from transcript_view_terminal import measure as measure_terminal

            terminal = measure_terminal({"big": big, "small": small}, args.terminal_runs, args.keys)
    print(
        f"sessions: big {sizes['big'] / 1e6:.1f} MB, small {sizes['small'] / 1e3:.0f} KB; {args.runs} runs each"
    )
    print(f"{'':22}{'big p50':>10}{'big p99':>10}{'small p50':>11}{'small p99':>11}{'ratio p50':>11}")
    for what in found["big"]:
        b50, b99 = found["big"][what]
        s50, s99 = found["small"][what]
        print(f"{what:22}{b50:10.2f}{b99:10.2f}{s50:11.2f}{s99:11.2f}{b50 / s50 if s50 else 0:11.2f}")
    if terminal is not None:
        _terminal_table(terminal, args.terminal_runs)


if __name__ == "__main__":
    main()

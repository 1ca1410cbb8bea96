"""Print the comparison table of pi's example extensions (pi-host beside pi 1.6.0) as Markdown:
``python -m tests.e2e.interop.ts_examples.table``."""

from __future__ import annotations

import sys

from tests.e2e.interop.ts_examples.harness import run_both
from tests.e2e.interop.ts_examples.scenarios import NOT_RUN, SCENARIOS


def main() -> int:
    print("| example | mode | result | note |")
    print("|---|---|---|---|")
    for scenario in SCENARIOS:
        runs = run_both(scenario, timeout=60)
        same = runs["pi-host"].observed == runs["pi"].observed
        note = scenario.reason or ""
        if not same:
            note = f"pi-host {runs['pi-host'].observed!r:.80} / pi {runs['pi'].observed!r:.80}"
        print(f"| {scenario.name} | {scenario.mode} | {'works the same' if same else 'differs'} | {note} |")
        sys.stdout.flush()
    for name, reason in sorted(NOT_RUN.items()):
        print(f"| {name} | - | not run | {reason} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

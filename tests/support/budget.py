"""How many examples a fuzz test draws.

The full run (the README's test command, CI) draws each fuzz test's whole budget. The inner loop
(``pytest -m "not e2e"``) draws an eighth of it, so that tier stays under a minute; the examples
are deterministic (``derandomize``), so the eighth is the first part of the same sequence, not
other examples. ``PI_TEST_FUZZ=full`` or ``quick`` overrides the choice.
"""

from __future__ import annotations

import os

QUICK_SHARE = 8


def examples(budget: int) -> int:
    """``budget`` in a full run, an eighth of it (at least 25) in the inner loop."""
    if os.environ.get("PI_TEST_FUZZ", "full") == "quick":
        return max(25, budget // QUICK_SHARE)
    return budget

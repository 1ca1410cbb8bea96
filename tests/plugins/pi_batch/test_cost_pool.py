"""The batch-wide cost pool: shares never add up to more than the cap; a spent pool starts nothing."""

from __future__ import annotations

from pi_batch.budget import CostPool
from pi_batch.runner import StreamWatch, _cap, pi_argv
from pi_batch.tasks import Task


def test_shares_split_what_is_left_and_come_back():
    pool = CostPool(1.0)
    a, b = pool.reserve("a", 2), pool.reserve("b", 1)
    assert (a, b) == (0.5, 0.5) and pool.reserve("c", 1) is None  # all reserved
    pool.release("a", 0.2)  # a spent 0.2 of its 0.5: 0.3 goes back
    assert abs(pool.reserve("c", 1) - 0.3) < 1e-9
    pool.release("b", 0.5)
    pool.release("c", 0.3)
    assert pool.reserve("d", 1) is None and abs(pool.spent - 1.0) < 1e-9


def test_the_child_gets_the_tighter_cap_and_its_stop_is_read():
    assert _cap(0.5, 0.2) == 0.2 and _cap(None, 0.2) == 0.2 and _cap(None, None) is None
    argv = pi_argv(Task(id="t", prompt="p"), "/tmp/s", "python", 0.25)
    assert argv[argv.index("--max-cost") + 1] == "0.25"
    watch = StreamWatch()
    watch.feed(
        b'{"type": "budget_exceeded", "budget": "cost", "limit": 0.25, "spent": 0.2, "scope": "session"}'
    )
    assert watch.budget == {"budget": "cost", "limit": 0.25, "spent": 0.2, "scope": "session"}

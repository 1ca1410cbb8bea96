"""pi 1.6.0's own example extensions, each run in pi-host and in pi against the same loopback
model: what the scenario observes must be the same (scenarios.py; the table in
docs/typescript-extensions.md comes from ``python -m tests.e2e.interop.ts_examples.table``)."""

from __future__ import annotations

import pytest

from tests.e2e.interop.ts_examples.harness import EXAMPLES, PI, run_both
from tests.e2e.interop.ts_examples.scenarios import NOT_RUN, SCENARIOS
from tests.e2e.ts_bridge.conftest import NODE

pytestmark = [
    pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/"),
    pytest.mark.skipif(NODE is None, reason="Node.js >= 22.19 is not installed"),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.name}:{s.mode}")
def test_the_example_works_the_same(scenario):
    runs = run_both(scenario, timeout=60)
    host, pi = runs["pi-host"], runs["pi"]
    assert host.observed == pi.observed, (
        f"pi-host stderr:\n{host.stderr[-2000:]}\npi stderr:\n{pi.stderr[-1000:]}"
    )
    assert "failed" not in host.stderr, host.stderr


def test_every_example_is_run_or_has_a_reason():
    examples = {p.name for p in EXAMPLES.iterdir() if p.suffix == ".ts" or p.is_dir()} - {"README.md"}
    covered = {s.name for s in SCENARIOS} | set(NOT_RUN)
    assert examples - covered == set()

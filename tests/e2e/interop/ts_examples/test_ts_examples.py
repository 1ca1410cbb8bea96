"""pi 1.6.0's own example extensions, each run in pi-host against the same loopback model as pi:
what the scenario observes must be the same as what pi observed (scenarios.py). pi's side comes
from the recording (recording.py) when it is current for the scenario, otherwise pi runs live;
a few scenarios always run pi live to catch a stale recording. The table in
docs/typescript-extensions.md comes from ``python -m tests.e2e.interop.ts_examples.table``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e.interop.ts_examples.harness import EXAMPLES, PI, run_one
from tests.e2e.interop.ts_examples.recording import comparable, recorded_pi, run_pi, scenario_id
from tests.e2e.interop.ts_examples.scenarios import NOT_RUN, SCENARIOS
from tests.e2e.ts_bridge.conftest import NODE

pytestmark = [
    pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/"),
    pytest.mark.skipif(NODE is None, reason="Node.js >= 22.19 is not installed"),
]

LIVE_CHECKS = ("hello.ts:print", "permission-gate.ts:rpc", "custom-compaction.ts:rpc")
"""Scenarios whose recording is compared with a live pi run every time (print, RPC, dialogs)."""


def _run_host(scenario):
    root = Path(tempfile.mkdtemp(prefix="ts-example-host-"))
    try:
        return run_one(scenario, "pi-host", root / "pi-host", timeout=60)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_the_example_works_the_same(scenario):
    host = _run_host(scenario)
    current, pi_observed = recorded_pi(scenario)
    if not current:
        pi_observed = run_pi(scenario)
    assert comparable(host.observed) == pi_observed, f"pi-host stderr:\n{host.stderr[-2000:]}"
    assert "failed" not in host.stderr, host.stderr


@pytest.mark.parametrize("name", LIVE_CHECKS)
def test_the_recording_is_what_pi_does(name):
    scenario = next(s for s in SCENARIOS if scenario_id(s) == name)
    current, recorded = recorded_pi(scenario)
    if not current:
        pytest.skip(f"{name}: no current recording (pi runs live in the comparison test)")
    assert run_pi(scenario) == recorded, f"re-record: python -m {__package__}.recording"


def test_every_example_is_run_or_has_a_reason():
    examples = {p.name for p in EXAMPLES.iterdir() if p.suffix == ".ts" or p.is_dir()} - {"README.md"}
    covered = {s.name for s in SCENARIOS} | set(NOT_RUN)
    assert examples - covered == set()

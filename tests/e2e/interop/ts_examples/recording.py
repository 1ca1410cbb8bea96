"""What pi 1.6.0 observed in each scenario, recorded once so the suite runs only pi-host.

Running pi (Node) beside pi-host for all 35 scenarios cost about 45 s of the suite's time, and
pi's side never changes for a given pi release and scenario. ``pi_observed.json`` holds pi's
observation for each scenario together with a fingerprint of the scenario's definition: a
scenario that was edited (or is new) no longer matches its fingerprint, and the test then runs
pi live for it, as before. ``test_the_recording_is_what_pi_does`` re-runs pi for a few scenarios
each time so a stale recording shows; ``PI_TS_EXAMPLES_LIVE=1`` runs pi live everywhere.

Re-record after changing the scenarios or pi's version:
``python -m tests.e2e.interop.ts_examples.recording``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tests.e2e.interop.ts_examples.harness import Scenario, run_one

RECORDING = Path(__file__).with_name("pi_observed.json")


def scenario_id(scenario: Scenario) -> str:
    return f"{scenario.name}:{scenario.mode}"


def comparable(value: Any) -> Any:
    """The value as JSON gives it back (tuples become lists), so live and recorded compare."""
    return json.loads(json.dumps(value, default=repr))


def fingerprint(scenario: Scenario) -> str:
    """Changes when anything that shapes the run or the observation changes."""
    parts = [
        scenario_id(scenario),
        repr(scenario.args),
        repr(scenario.rpc),
        repr(scenario.replies),
        repr(scenario.extra_models),
        repr(scenario.env),
        repr(scenario.tools),
        repr(scenario.session),
    ]
    for function in (scenario.observe, scenario.prepare, scenario.answer):
        try:
            parts.append(inspect.getsource(function) if function else "")
        except (OSError, TypeError):
            parts.append(repr(function))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def load() -> dict[str, Any]:
    try:
        return json.loads(RECORDING.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def recorded_pi(scenario: Scenario) -> tuple[bool, Any]:
    """(True, pi's observation) when the recording is current for this scenario."""
    if os.environ.get("PI_TS_EXAMPLES_LIVE") == "1":
        return False, None
    entry = load().get(scenario_id(scenario))
    if entry is None or entry.get("fingerprint") != fingerprint(scenario):
        return False, None
    return True, entry["observed"]


def run_pi(scenario: Scenario, timeout: float = 60) -> Any:
    root = Path(tempfile.mkdtemp(prefix="ts-example-pi-"))
    try:
        return comparable(run_one(scenario, "pi", root / "pi", timeout).observed)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    from tests.e2e.interop.ts_examples.scenarios import SCENARIOS

    recording = {scenario_id(s): {"fingerprint": fingerprint(s), "observed": run_pi(s)} for s in SCENARIOS}
    RECORDING.write_text(json.dumps(recording, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded pi's observations of {len(recording)} scenarios in {RECORDING}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

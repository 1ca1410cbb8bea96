"""`pi batch --executor ray` on a local Ray that `pi batch` starts on demand (one Ray start for the
module: it is slow on small machines). Skipped when ray is not installed (extra `pi-host[ray]`)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.e2e.batch.helpers import (
    MAX_COST,
    TIMEOUT,
    RoutingServer,
    check_mixed,
    mixed_batch,
    progress_lines,
    run_batch,
    write_priced_models,
)
from tests.support.loopback import Reply

# find_spec, not importorskip: importing ray costs ~0.7 s of every worker's collection
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")


def test_twenty_tasks_on_a_local_ray(isolated_environment, tmp_path, tmp_path_factory):
    tasks, routes = mixed_batch(str(tmp_path))
    out = str(tmp_path / "out")
    ray_tmp = tmp_path_factory.mktemp("r")  # short: Ray's socket paths must fit in 107 bytes
    with RoutingServer(routes, default=Reply("done", before=0.3)) as server:
        write_priced_models(str(isolated_environment["agent"]), server.url)
        done = run_batch(
            tasks,
            out,
            "-j",
            "4",
            "--executor",
            "ray",
            "--ray-temp-dir",
            str(ray_tmp),
            "--timeout",
            TIMEOUT,
            "--max-cost",
            MAX_COST,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    records = check_mixed(out, server, done.stderr)
    assert 2 <= server.max_open <= 4
    # the work ran in Ray workers, and the driver wrote what they sent back
    assert all(record.get("worker") for record in records)
    assert any(ray_tmp.iterdir())  # Ray kept its files in the temp dir it was given
    steps = [line for line in progress_lines(done.stderr) if line["type"] == "progress"]
    assert len(steps) == 20 and steps[-1]["done"] + steps[-1]["failed"] == 20

"""Compiled dataclass methods and forward references kept between runs (issue 16)."""

from __future__ import annotations

import glob
import os

from pi_host.cli.code_cache import CodeCache
from tests.support.pi import run_pi


def _run(env: dict):
    return run_pi("--model", "faux/faux-1", "--no-session", "-p", "hi", env=env)


def test_the_cli_writes_the_cache_once_and_runs_the_same_with_it(isolated_environment, tmp_path):
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "PI_HOST_CACHE_DIR": str(cache_dir)}
    first = _run(env)
    assert first.returncode == 0, first.stderr
    (written,) = glob.glob(str(cache_dir / "compiled-*.marshal"))
    cached = CodeCache(written)
    assert any(mode == "exec" and "__init__" in text for mode, text in cached.known)
    assert any(mode == "eval" for mode, _ in cached.known)
    stamp = os.stat(written).st_mtime_ns
    second = _run(env)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert os.stat(written).st_mtime_ns == stamp  # everything was found: not rewritten

    with open(written, "wb") as handle:
        handle.write(b"not marshal data")
    damaged = _run(env)
    assert damaged.returncode == 0 and damaged.stdout == first.stdout and damaged.stderr == first.stderr
    assert len(CodeCache(written).known) > 100  # rebuilt


def test_pi_host_no_code_cache_turns_it_off(isolated_environment, tmp_path):
    cache_dir = tmp_path / "off"
    done = _run({**os.environ, "PI_HOST_CACHE_DIR": str(cache_dir), "PI_HOST_NO_CODE_CACHE": "1"})
    assert done.returncode == 0, done.stderr
    assert not glob.glob(str(cache_dir / "compiled-*"))

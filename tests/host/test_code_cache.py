"""Compiled dataclass methods and forward references kept between runs (issue 16)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

from pi_host.cli.code_cache import CodeCache

PI = os.path.join(os.path.dirname(sys.executable), "pi")


def test_a_hit_is_what_compiling_gives_and_only_new_code_is_saved(tmp_path):
    path = str(tmp_path / "c.marshal")
    cache = CodeCache(path)
    space: dict = {}
    cache.exec("def f(x):\n return x * 2\n", space)
    assert space["f"](21) == 42 and cache.new
    assert cache.compile("1 + 2", "<string>", "eval") is cache.compile("1 + 2", "<string>", "eval")
    cache.save()
    again = CodeCache(path)
    assert set(again.known) == {("exec", "def f(x):\n return x * 2\n"), ("eval", "1 + 2")}
    other: dict = {"y": 5}
    again.exec("def f(x):\n return x * 2\n", other)
    assert other["f"](2) == 4 and not again.new
    before = os.stat(path).st_mtime_ns
    again.save()  # nothing new: the file is left alone
    assert os.stat(path).st_mtime_ns == before
    assert eval(again.compile("y + 1", "<string>", "eval"), other) == 6


def test_a_damaged_file_counts_as_empty(tmp_path):
    path = tmp_path / "c.marshal"
    path.write_bytes(b"\x00garbage")
    cache = CodeCache(str(path))
    assert cache.known == {}
    space: dict = {}
    cache.exec("z = 3", space)
    cache.save()
    assert CodeCache(str(path)).known.keys() == {("exec", "z = 3")}


def _run(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PI, "--model", "faux/faux-1", "--no-session", "-p", "hi"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


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

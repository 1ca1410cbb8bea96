"""Compiled dataclass methods and forward references kept between runs (issue 16)."""

from __future__ import annotations

import os

from pi_host.cli.code_cache import CodeCache


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

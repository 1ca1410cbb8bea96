"""Compiled dataclass methods and forward references kept between runs (issue 16)."""

from __future__ import annotations

import glob
import json
import marshal
import os
import subprocess
import sys

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
    assert any(key[0] == "exec" and "__init__" in key[1] for key in cached.known)
    assert any(key[0] == "eval" for key in cached.known)
    assert any(key[0] == "re" for key in cached.known)  # regular expressions built at import
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


REGEX_PROGRAM = """
import json, sys
from pi_host.cli import code_cache
cache = code_cache.install(sys.argv[1])
import re
patterns = [
    re.compile(r"(?P<key>[a-z_]+)\\s*=\\s*(?P<value>\\d+)"),
    re.compile(r"^HELLO\\b", re.IGNORECASE | re.MULTILINE),
    re.compile(rb"(\\r?\\n){2}"),
    re.compile(r"  a  b  # spaced", re.VERBOSE),
    re.compile(r"[\\u00e9-\\u00ff]+", re.ASCII),
]
text = "x = 1\\nhello there\\n\\nab é"
print(json.dumps({
    "new": cache.new,
    "found": [
        [m.groupdict() for m in patterns[0].finditer(text)],
        [m.start() for m in patterns[1].finditer(text)],
        [m.span() for m in patterns[2].finditer(text.encode())],
        patterns[3].findall(text),
        patterns[4].findall(text),
    ],
    "flags": [p.flags for p in patterns],
    "groups": [(p.groups, p.groupindex.copy()) for p in patterns],
}))
"""


def _regexes(cache_dir) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", REGEX_PROGRAM, str(cache_dir)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_regular_expressions_from_the_cache_match_as_compiled_ones(tmp_path):
    first = _regexes(tmp_path)
    assert first["new"] and first["found"][0] == [{"key": "x", "value": "1"}]
    second = _regexes(tmp_path)
    assert not second["new"]  # every pattern came from the file
    assert second["found"] == first["found"] and second["flags"] == first["flags"]
    assert second["groups"] == first["groups"]
    (written,) = glob.glob(str(tmp_path / "compiled-*.marshal"))
    entries = marshal.loads(open(written, "rb").read())
    damaged = {
        k: (marshal.dumps(("other", 0, [1], 0, {}, ())) if k[0] == "re" else v) for k, v in entries.items()
    }
    with open(written, "wb") as handle:
        handle.write(marshal.dumps(damaged))
    third = _regexes(tmp_path)  # entries that do not fit their pattern are compiled again
    assert third["new"] and third["found"] == first["found"]


def test_a_process_records_a_bounded_number_of_new_regular_expressions(tmp_path):
    program = (
        "import sys\nfrom pi_host.cli import code_cache\ncache = code_cache.install(sys.argv[1])\n"
        "import re\nfor n in range(code_cache.MAX_NEW_REGEXES + 200): re.compile(f'pattern {n}')\n"
        "assert re.compile('pattern 1150').match('pattern 1150')\nprint(code_cache.MAX_NEW_REGEXES)"
    )
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (written,) = glob.glob(str(tmp_path / "compiled-*.marshal"))
    kept = [key for key in marshal.loads(open(written, "rb").read()) if key[0] == "re"]
    assert len(kept) == int(done.stdout)  # (the patterns of start-up and the first of the loop)

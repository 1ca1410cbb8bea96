"""Big and endless input through the real ``pi`` (hardening items 5 and 11).

A session file is read as a stream: one without a header is refused after its first MiB, a huge
one lists without being read whole and resumes without holding every byte; piped stdin and
``@file`` arguments are capped (``/dev/zero`` is refused in one line, not read until memory runs
out); ``--session /proc/self/status`` (a "regular" file of size 0 with content) is one line.

Every child runs under a 2 GiB address-space limit, so a regression fails here instead of eating
the machine, and its own peak RSS is read with ``wait4`` by a small launcher.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.faux import text
from tests.support.pi import start_pi
from tests.support.session_files import assistant, entry, header, user

MiB = 1024 * 1024
FAUX = ("--model", "faux/faux-1")
LIMIT_AS = 2048 * MiB


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    max_rss_mib: float
    seconds: float


# The child's own peak RSS: Linux folds the RSS high-water mark of the process that forked (and
# exec'd) a child into the child's ``ru_maxrss``, so pi is started by a small launcher instead of
# by this (big) test process. The launcher also caps the address space at LIMIT_AS, so a
# regression fails here instead of eating the machine.
LAUNCHER = """
import os, resource, sys
limit = int(os.environ.pop("PI_TEST_LIMIT_AS"))
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_pid, status, usage = os.wait4(pid, 0)
with open(os.environ["PI_TEST_RSS_FILE"], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured(*args: str, stdin: Any = subprocess.DEVNULL, timeout: float = 60, **kwargs: Any) -> Measured:
    """Run ``pi <args>`` and return what it printed, its exit code and its own peak RSS."""
    rss_file = Path(tempfile.mkdtemp()) / "rss"
    env = {**kwargs.pop("env", {}), "PI_TEST_RSS_FILE": str(rss_file), "PI_TEST_LIMIT_AS": str(LIMIT_AS)}
    command = [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "pi_host"]
    started = time.monotonic()
    proc = start_pi(
        *args, stdin=stdin, text=False, command=command, env=env, start_new_session=True, **kwargs
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    seconds = time.monotonic() - started
    rss = int(rss_file.read_text()) if rss_file.exists() else 0
    shutil.rmtree(rss_file.parent)
    return Measured(
        proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), rss / 1024, seconds
    )


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err[:2000]
    assert "Traceback" not in err
    return lines[0]


# --- session files -------------------------------------------------------------------------------


def test_headerless_big_file_is_refused_fast_without_reading_it(isolated_environment):
    work = isolated_environment["work"]
    path = work / "zeros.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(256 * MiB)  # sparse: 256 MiB of NUL bytes and no newline, no disk used
    out = measured("--session", str(path), "-p", *FAUX, "hi", cwd=work)
    assert out.returncode == 1
    line = _one_line(out.stderr)
    assert str(path) in line and "session header" in line, line
    assert out.max_rss_mib < 120, out  # the file is never held: pi-host's own start-up is ~40 MiB
    assert out.seconds < 20, out
    assert path.stat().st_size == 256 * MiB and path.stat().st_blocks == 0  # untouched


def test_session_on_proc_status_is_one_line(isolated_environment):
    work = isolated_environment["work"]
    out = measured("--session", "/proc/self/status", "-p", *FAUX, "hi", cwd=work)
    assert out.returncode == 1
    line = _one_line(out.stderr)
    assert "/proc/self/status" in line, line


def _big_session(path: Path, cwd: Path, mib: int) -> list[str]:
    """A v3 session of about ``mib`` MiB: a first exchange, thousands of 8 KiB tool results, a
    compaction that keeps only the last exchange, the last exchange. Returns the context's texts."""
    filler = "x" * 8000
    records: list[dict] = [
        header(cwd=str(cwd)),
        user("u0", None, "first question"),
        assistant("a0", "u0", "first answer"),
    ]
    parent = "a0"
    count = mib * MiB // 8200
    with open(path, "wb") as handle:
        for record in records:
            handle.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        for index in range(count):
            record = user(f"t{index:07x}", parent, filler)
            handle.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
            parent = f"t{index:07x}"
        tail = [
            user("u9", parent, "last question"),
            assistant("a9", "u9", "last answer"),
            entry("compaction", "c9", "a9", summary="all of it", firstKeptEntryId="u9", tokensBefore=1),
        ]
        for record in tail:
            handle.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    return ["all of it", "last question", "last answer"]


def _sessions_dir(agent: Path, work: Path) -> Path:
    from pi_session_jsonl.paths import default_session_dir

    directory = Path(default_session_dir(str(agent), str(work)))
    directory.mkdir(parents=True)
    return directory


def test_resume_list_reads_no_whole_file(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    folder = _sessions_dir(agent, work)
    _big_session(folder / "2026-12-02T09-14-03-512Z_big.jsonl", work, 64)
    with open(os.devnull, "rb") as nothing:  # no number: the listing is printed, nothing opened
        out = measured("-r", "-p", *FAUX, "hi", cwd=work, stdin=nothing)
    assert out.returncode == 1 and "No session selected" in out.stderr, out
    assert "first question" in out.stderr  # the row was listed
    assert out.max_rss_mib < 80, out  # reading the file whole would take 64 MiB and more


def test_continue_resumes_a_big_session_without_holding_it(isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    folder = _sessions_dir(agent, work)
    path = folder / "2026-12-02T09-14-03-512Z_big.jsonl"
    _big_session(path, work, 96)
    size = path.stat().st_size
    out = measured("-c", "-p", *FAUX, "next", cwd=work, script=[text("fine")])
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "fine"
    # The blocks holding the 12,000 lines before the compaction are not kept: the process stays
    # well under the file's size (it would be ~40 MiB of start-up plus the 96 MiB file).
    assert out.max_rss_mib < 40 + size / MiB / 2, out
    tail = path.read_bytes()[size:].decode()
    assert '"next"' in tail and '"fine"' in tail


# --- stdin and @file ---------------------------------------------------------------------------------


def test_stdin_from_dev_zero_is_capped_in_one_line(isolated_environment):
    work = isolated_environment["work"]
    with open("/dev/zero", "rb") as zeros:
        out = measured("-p", *FAUX, cwd=work, stdin=zeros, timeout=30)
    assert out.returncode == 1, out
    line = _one_line(out.stderr)
    assert "stdin" in line and "64 MiB" in line, line
    assert out.max_rss_mib < 400, out
    assert not list((isolated_environment["agent"]).rglob("*.jsonl"))  # nothing was saved


def test_at_dev_zero_is_capped_in_one_line(isolated_environment):
    work = isolated_environment["work"]
    out = measured("-p", *FAUX, "@/dev/zero", "what is this?", cwd=work, timeout=30)
    assert out.returncode == 1, out
    line = _one_line(out.stderr)
    assert "/dev/zero" in line and "64 MiB" in line, line
    assert out.max_rss_mib < 400, out


def test_big_regular_at_file_is_refused_before_reading(isolated_environment):
    work = isolated_environment["work"]
    big = work / "big.txt"
    with open(big, "wb") as handle:
        handle.truncate(1024 * MiB)  # sparse
    out = measured("-p", *FAUX, f"@{big}", "summarise", cwd=work, timeout=30)
    assert out.returncode == 1, out
    line = _one_line(out.stderr)
    assert str(big) in line and "64 MiB" in line, line
    assert out.max_rss_mib < 120, out

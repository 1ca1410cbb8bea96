"""A finished ``pi`` skips the interpreter's teardown when nothing can be lost (issue 36,
pi_host/cli/fast_exit.py): built-in plugins only; the ``atexit`` handlers still run."""

from __future__ import annotations

import os

from tests.support.faux import text
from tests.support.pi import PI_SCRIPT, run_pi

# Imported at start through PYTHONPATH: a buffered write that only the teardown flushes.
TEARDOWN_PROBE = """
_probe = open({path!r}, "w")
_probe.write("TEARDOWN")
"""


def _probe_env(tmp_path, **extra: str) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(TEARDOWN_PROBE.format(path=str(tmp_path / "probe.txt")))
    return {"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **extra}


def _torn_down(tmp_path) -> bool:
    return (tmp_path / "probe.txt").read_text() == "TEARDOWN"


def test_a_builtin_only_run_skips_the_teardown_and_keeps_its_output_and_status(
    isolated_environment, tmp_path
):
    env = _probe_env(tmp_path)
    done = run_pi(
        "--model",
        "faux/faux-1",
        "--no-session",
        "-p",
        "hi",
        script=[text("word " * 5000)],
        env=env,
        command=PI_SCRIPT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "word " * 5000 + "\n"  # flushed whole through the pipe
    assert not _torn_down(tmp_path)

    failed = run_pi("--model", "nowhere/none", "--no-session", "-p", "hi", env=env, command=PI_SCRIPT)
    assert failed.returncode == 1 and "Model not found" in failed.stderr and not _torn_down(tmp_path)

    slow = run_pi(
        "--model",
        "faux/faux-1",
        "--no-session",
        "-p",
        "hi",
        script=[text("ok")],
        env={**env, "PI_HOST_NO_FAST_EXIT": "1"},
    )
    assert slow.returncode == 0 and slow.stdout == "ok\n" and _torn_down(tmp_path)


def test_a_run_with_an_extension_tears_down_so_its_buffered_file_is_written(isolated_environment, tmp_path):
    # A plugin that leaves a buffered file open relies on the teardown to flush it.
    written = tmp_path / "kept.txt"
    extension = tmp_path / "buffered.py"
    extension.write_text(f"_log = open({str(written)!r}, 'w')\n_log.write('kept by the teardown')\n")
    env = _probe_env(tmp_path)
    done = run_pi(
        "-e",
        str(extension),
        "--model",
        "faux/faux-1",
        "--no-session",
        "-p",
        "hi",
        script=[text("ok")],
        env=env,
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    assert _torn_down(tmp_path)
    assert written.read_text() == "kept by the teardown"

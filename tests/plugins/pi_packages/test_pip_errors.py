"""The one line a failed ``pi install`` prints names the cause, not pip's boilerplate. The outputs
below are pip 23's and uv's own (trimmed where they repeat), as ``run_pip`` captures them."""

from __future__ import annotations

import pytest
from pi_packages.pip_runner import PipResult

SETUP_RAISES = """\
Processing ./boom_setup
  Preparing metadata (pyproject.toml): started
  Preparing metadata (pyproject.toml): finished with status 'error'
  error: subprocess-exited-with-error

  × Preparing metadata (pyproject.toml) did not run successfully.
  │ exit code: 1
  ╰─> [18 lines of output]
      Traceback (most recent call last):
        File "/venv/lib/python3.11/site-packages/setuptools/build_meta.py", line 335, in run_setup
          exec(code, locals())
        File "<string>", line 1, in <module>
      RuntimeError: setup.py exploded on purpose
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: metadata-generation-failed

× Encountered error while generating package metadata.
╰─> See above for output.

note: This is an issue with the package mentioned above, not pip.
hint: See above for details.
"""

PIP_CRASHED = """\
Processing ./syntax
ERROR: Exception:
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/pip/_internal/pyproject.py", line 64, in load_pyproject_toml
    pp_toml = tomli.loads(f.read())
              ^^^^^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/pip/_vendor/tomli/_parser.py", line 298, in create_dict_rule
    raise suffixed_err(src, pos, "Expected ']' at the end of a table declaration")
pip._vendor.tomli.TOMLDecodeError: Expected ']' at the end of a table declaration (at line 1, column 14)
"""

GIT_CLONE = """\
Collecting git+file:///tmp/nonexistent-repo
  Cloning file:///tmp/nonexistent-repo to /tmp/pip-req-build-a9arf2go
  Running command git clone --filter=blob:none --quiet file:///tmp/nonexistent-repo /tmp/pip-req-build-a9arf2go
  fatal: '/tmp/nonexistent-repo' does not appear to be a git repository
  fatal: Could not read from remote repository.

  Please make sure you have the correct access rights
  and the repository exists.
  error: subprocess-exited-with-error

  × git clone --filter=blob:none --quiet file:///tmp/nonexistent-repo /tmp/pip-req-build-a9arf2go did not run successfully.
  │ exit code: 128
  ╰─> See above for output.

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error

× git clone --filter=blob:none --quiet file:///tmp/nonexistent-repo /tmp/pip-req-build-a9arf2go did not run successfully.
│ exit code: 128
╰─> See above for output.

note: This error originates from a subprocess, and is likely not a problem with pip.
"""

WHEEL_BUILD = """\
  Building wheel for fast (pyproject.toml): started
  Building wheel for fast (pyproject.toml): finished with status 'error'
  error: subprocess-exited-with-error

  × Building wheel for fast (pyproject.toml) did not run successfully.
  │ exit code: 1
  ╰─> [6 lines of output]
      running build_ext
      building 'fast._speedups' extension
      gcc -fPIC -I/usr/include/python3.11 -c fast/_speedups.c -o build/fast/_speedups.o
      fast/_speedups.c:1:10: fatal error: Python.h: No such file or directory
      compilation terminated.
      error: command '/usr/bin/gcc' failed with exit code 1
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
  ERROR: Failed building wheel for fast
Failed to build fast
ERROR: Could not build wheels for fast, which is required to install pyproject.toml-based projects
"""

CONFLICT = """\
INFO: pip is looking at multiple versions of pkg-b to determine which version is compatible.
ERROR: Cannot install pkg-a==1.0 and pkg-b==1.0 because these package versions have conflicting dependencies.

The conflict is caused by:
    pkg-a 1.0 depends on pkg-c==1
    pkg-b 1.0 depends on pkg-c==2

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""

EXTERNALLY_MANAGED = """\
error: externally-managed-environment

× This environment is externally managed
╰─> To install Python packages system-wide, try apt install
    python3-xyz, where xyz is the package you are trying to
    install.

note: If you believe this is a mistake, please contact your Python installation or OS distribution provider.
hint: See PEP 668 for the detailed specification.
"""

UV_NO_SOLUTION = """\
  × No solution found when resolving dependencies:
  ╰─▶ Because no-such-thing was not found in the package registry and you require no-such-thing, we can conclude that your requirements are unsatisfiable.
"""

UV_PARSE = """\
error: Failed to parse: `bad req !!`
  Caused by: Expected one of `@`, `(`, `<`, `=`, `>`, `~`, `!`, `;`, found `req`
"""


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        (
            SETUP_RAISES,
            "Preparing metadata (pyproject.toml) did not run successfully: "
            "RuntimeError: setup.py exploded on purpose",
        ),
        (
            PIP_CRASHED,
            "TOMLDecodeError: Expected ']' at the end of a table declaration (at line 1, column 14)",
        ),
        (
            GIT_CLONE,
            "git clone did not run successfully: "
            "fatal: '/tmp/nonexistent-repo' does not appear to be a git repository",
        ),
        (
            WHEEL_BUILD,
            "Building wheel for fast (pyproject.toml) did not run successfully: "
            "fast/_speedups.c:1:10: fatal error: Python.h: No such file or directory",
        ),
        (
            CONFLICT,
            "Cannot install pkg-a==1.0 and pkg-b==1.0 because these package versions have "
            "conflicting dependencies: pkg-a 1.0 depends on pkg-c==1; pkg-b 1.0 depends on pkg-c==2",
        ),
        (
            "ERROR: Invalid requirement: './nowhere'\n"
            "Hint: It looks like a path. File './nowhere' does not exist.\n",
            "Invalid requirement: './nowhere' (It looks like a path. File './nowhere' does not exist.)",
        ),
        (
            "ERROR: Could not find a version that satisfies the requirement x (from versions: none)\n"
            "ERROR: No matching distribution found for x\n",
            "No matching distribution found for x",
        ),
        (
            EXTERNALLY_MANAGED,
            "This environment is externally managed: To install Python packages system-wide, try "
            "apt install python3-xyz, where xyz is the package you are trying to install.",
        ),
        (
            UV_NO_SOLUTION,
            "No solution found when resolving dependencies: Because no-such-thing was not found in the "
            "package registry and you require no-such-thing, we can conclude that your requirements "
            "are unsatisfiable.",
        ),
        (
            UV_PARSE,
            "Failed to parse: `bad req !!`; Caused by: Expected one of `@`, `(`, `<`, `=`, `>`, `~`, "
            "`!`, `;`, found `req`",
        ),
        ("", "pip failed without output"),
        ("something odd happened\nnote: a note\n", "something odd happened"),
    ],
)
def test_the_cause_is_named(output, cause):
    assert PipResult(False, output).error_line() == cause


def test_never_boilerplate():
    for output in (SETUP_RAISES, PIP_CRASHED, GIT_CLONE, WHEEL_BUILD, EXTERNALLY_MANAGED):
        line = PipResult(False, output).error_line()
        assert "\n" not in line
        assert line not in ("Exception:", "hint: See above for details.")
        assert not line.startswith(("note:", "hint:"))


def test_a_cause_is_one_line_of_bounded_length():
    line = PipResult(False, "ERROR: " + "x" * 5000 + "\n").error_line()
    assert len(line) <= 500 and line.endswith("…")

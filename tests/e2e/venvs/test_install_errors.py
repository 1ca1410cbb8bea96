"""A failing ``pi install`` names the cause in one line: the exception a build raised, the error
pip crashed with, git's complaint, a missing path, never pip's boilerplate (``Exception:``,
``hint: See above for details.``, ``note: This error originates from a subprocess...``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.venv import OFFLINE, make_venv, venv_pi


def project(where: Path, **files: str) -> Path:
    where.mkdir(parents=True)
    for name, text in files.items():
        (where / name.replace("__", ".")).write_text(text)
    return where


def test_install_failures_name_their_cause(tmp_path, isolated_environment):
    venv = make_venv(tmp_path / "venv")
    raising = project(tmp_path / "raising", setup__py="raise RuntimeError('setup.py exploded on purpose')\n")
    bad_toml = project(tmp_path / "bad-toml", pyproject__toml="[build-system\n")
    not_a_repo = tmp_path / "not-a-repo"
    empty = project(tmp_path / "empty")
    cases = [
        (
            str(raising),
            "Preparing editable metadata (pyproject.toml) did not run successfully: "
            "RuntimeError: setup.py exploded on purpose",
        ),
        (str(bad_toml), "TOMLDecodeError: Expected ']' at the end of a table declaration"),
        (
            f"git+file://{not_a_repo}",
            f"git clone did not run successfully: fatal: '{not_a_repo}' does not appear to be a git "
            "repository",
        ),
        (
            str(empty),
            f"Directory '{empty}' is not installable. Neither 'setup.py' nor 'pyproject.toml' found.",
        ),
        (str(tmp_path / "nowhere"), "no such file or directory"),
    ]
    for spec, cause in cases:
        out = venv_pi(venv, "install", *OFFLINE, spec)
        assert out.returncode == 1, spec
        [line] = out.stderr.splitlines()
        assert line.startswith(f"pi: installing {spec} failed: {cause}"), line
        assert out.stdout == ""
    assert not (isolated_environment["agent"] / "pi-host-packages.json").exists()

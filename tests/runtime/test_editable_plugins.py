"""What ``/reload`` drops from ``sys.modules`` before plugins load again: the modules of an
editable plugin distribution in which a file changed, all of them, and nothing else. (The real
thing, in a session: ``tests/e2e/venvs/test_editable_install.py``.)"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from pi_host.runtime import editable_plugins


def test_a_changed_editable_plugin_is_imported_again_and_an_unchanged_one_is_kept(tmp_path, monkeypatch):
    for name in ("pi_edited", "pi_still"):
        (tmp_path / name / name).mkdir(parents=True)
        (tmp_path / name / name / "__init__.py").write_text(f"from {name}.part import VALUE\n")
        (tmp_path / name / name / "part.py").write_text("VALUE = 'one'\n")
        monkeypatch.syspath_prepend(str(tmp_path / name))
    projects = {"pi-edited": str(tmp_path / "pi_edited"), "pi-still": str(tmp_path / "pi_still")}
    monkeypatch.setattr(editable_plugins, "editable_projects", lambda: projects)
    edited, still = importlib.import_module("pi_edited"), importlib.import_module("pi_still")
    try:
        part = tmp_path / "pi_edited" / "pi_edited" / "part.py"
        part.write_text("VALUE = 'two'\n")  # same size, same second: the .pyc would pass its check
        # (the file system's clock is coarse: one tick after the .pyc, as a person's edit would be)
        compiled = os.stat(importlib.util.cache_from_source(str(part))).st_mtime_ns
        os.utime(part, ns=(compiled + 1, compiled + 1))
        assert editable_plugins.forget_changed_modules() == ["pi-edited"]
        assert "pi_edited" not in sys.modules and "pi_edited.part" not in sys.modules
        assert sys.modules["pi_still"] is still
        assert importlib.import_module("pi_edited").VALUE == "two" and edited.VALUE == "one"
        assert editable_plugins.forget_changed_modules() == []  # nothing changed since
    finally:
        for name in ("pi_edited", "pi_edited.part", "pi_still", "pi_still.part"):
            sys.modules.pop(name, None)


def test_only_editable_plugin_distributions_count():
    # this environment: pi-host itself is installed in development mode, and is never reloaded
    assert "pi-host" not in editable_plugins.editable_projects()

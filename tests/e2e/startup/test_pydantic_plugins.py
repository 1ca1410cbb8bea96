"""pydantic's plugin scan is skipped only when no installed distribution declares a pydantic
plugin (issue 16), and the real loader comes back for anything else asked of it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {extra!r})
    from pi_host.cli.pydantic_plugins import skip_scan_when_none_installed
    print("skipped" if skip_scan_when_none_installed() else "scanned")
    from pydantic import BaseModel

    class Item(BaseModel):
        name: str

    print(Item(name="x").name, "importlib.metadata" in sys.modules, type(sys.modules["pydantic.plugin._loader"]).__name__)
    import pydantic.plugin._loader as loader
    print(loader.PYDANTIC_ENTRY_POINT_GROUP, type(sys.modules["pydantic.plugin._loader"]).__name__)
    """
)


def _probe(extra: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(extra=extra)], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


def test_no_pydantic_plugin_installed_skips_the_scan_and_models_still_build(tmp_path):
    lines = _probe(str(tmp_path))
    assert lines[0] == "skipped"
    assert lines[1] == "x False _NoPlugins"  # built without importing importlib.metadata
    assert lines[2] == "pydantic module"  # any other name brings the real loader back


def test_an_installed_pydantic_plugin_keeps_pydantic_s_own_scan(tmp_path):
    dist = tmp_path / "some_pydantic_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: some-pydantic-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nmine = some_pydantic_plugin:plugin\n")
    lines = _probe(str(tmp_path))
    assert lines[0] == "scanned"
    assert lines[1] == "x True module"


def test_pydantic_disable_plugins_is_left_to_pydantic(tmp_path):
    import os

    lines = _probe(str(tmp_path), env={**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"})
    assert lines[0] == "scanned"

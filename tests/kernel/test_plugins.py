"""Plugin discovery, load order, ordered dispatch and isolation (issue 2, reference §9)."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest

from pi_host import hookimpl
from pi_host.plugins.dispatch import PluginError, PluginHost, PluginRecord
from pi_host.plugins.loading import entry_points
from pi_host.plugins.selection import PluginRequest, load_plugins

ORDER_PLUGIN = """
from pi_host import hookimpl

@hookimpl
def on_agent_start(event):
    event.setdefault("order", []).append({name!r})
"""


def write_plugin(path, name, body=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body or ORDER_PLUGIN.format(name=name)))
    return path


@pytest.fixture
def fake_site(tmp_path, monkeypatch):
    """A real directory on sys.path holding an installed third-party distribution."""
    site = tmp_path / "site"
    dist = site / "pi_thirdparty-1.2.3.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pi-thirdparty\nVersion: 1.2.3\n")
    (dist / "entry_points.txt").write_text("[pi_host]\nzeta = tp_zeta\nalpha = tp_alpha\n")
    write_plugin(site / "tp_zeta.py", "installed:zeta")
    write_plugin(site / "tp_alpha.py", "installed:alpha")
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in ("tp_zeta", "tp_alpha", "tp_broken"):
        sys.modules.pop(name, None)


def build_host(cwd, settings=None, approve=True, **options):
    """Plugins for ``cwd`` through the one loading path (``settings`` become the user's file)."""
    if settings:
        import json
        import os

        from pi_host.config import paths

        with open(os.path.join(paths.agent_dir(), "settings.json"), "w") as handle:
            json.dump(settings, handle)
    return load_plugins(PluginRequest(cwd=str(cwd), approve=approve, **options)).host


def order_of(host: PluginHost) -> list[str]:
    event: dict = {}
    asyncio.run(host.dispatch("agent_start", event))
    return event.get("order", [])


def test_load_order_is_builtins_installed_global_project_cli(fake_site, isolated_environment, tmp_path):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    # created in reverse alphabetical order so file-system order cannot explain the result
    write_plugin(agent / "extensions" / "zz_global.py", "global:zz")
    write_plugin(agent / "extensions" / "aa_global.py", "global:aa")
    write_plugin(work / ".pi" / "extensions" / "project.py", "project")
    cli_b = write_plugin(tmp_path / "b_cli.py", "cli:b")
    cli_a = write_plugin(tmp_path / "a_cli.py", "cli:a")
    host = build_host(str(work), extension_paths=(str(cli_b), str(cli_a)))
    sources = [(r.name, r.source) for r in host.records]
    builtin_names = [name for name, source in sources if source == "builtin"]
    assert builtin_names == sorted(builtin_names) and "faux" in builtin_names
    assert sources.index(("alpha", "installed")) > max(sources.index((n, "builtin")) for n in builtin_names)
    assert order_of(host) == [
        "installed:alpha",
        "installed:zeta",
        "global:aa",
        "global:zz",
        "project",
        "cli:b",
        "cli:a",
    ]
    installed = next(r for r in host.records if r.name == "alpha")
    assert installed.origin == "pi-thirdparty" and installed.version == "1.2.3"
    assert installed.hooks == ["on_agent_start"]


def test_untrusted_project_files_are_listed_but_not_loaded(isolated_environment):
    work = isolated_environment["work"]
    write_plugin(work / ".pi" / "extensions" / "project.py", "project")
    host = build_host(str(work), approve=False)
    [record] = [r for r in host.records if r.name == "project"]
    assert record.disabled and "not trusted" in record.error
    assert order_of(host) == []


def test_builtins_only_and_disabled_plugins(fake_site, isolated_environment, monkeypatch):
    work = str(isolated_environment["work"])
    monkeypatch.setenv("PI_HOST_NO_PLUGINS", "1")
    host = build_host(work)
    assert {r.source for r in host.records} == {"builtin"}
    monkeypatch.delenv("PI_HOST_NO_PLUGINS")
    monkeypatch.setenv("PI_HOST_DISABLE_PLUGINS", "zeta")
    host = build_host(work, {"disabledPlugins": ["alpha"]})
    disabled = {r.name for r in host.records if r.disabled}
    assert disabled == {"zeta", "alpha"}
    assert order_of(host) == []


def test_environments_sharing_a_cache_dir_keep_a_file_each(fake_site, tmp_path, monkeypatch):
    from pi_host.plugins import loading

    cache = tmp_path / "cache"
    with_fake = {e.name for e in entry_points(str(cache))}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(fake_site)])
    without = {e.name for e in entry_points(str(cache))}
    assert "alpha" in with_fake and "alpha" not in without
    assert len(list(cache.glob("entry-points-*.json"))) == 2
    scans = []
    real_scan = loading._scan_entry_points
    monkeypatch.setattr(loading, "_scan_entry_points", lambda: scans.append(1) or real_scan())
    monkeypatch.syspath_prepend(str(fake_site))
    assert {e.name for e in entry_points(str(cache))} == with_fake and scans == []  # no rebuild


def test_old_entry_point_files_are_pruned(tmp_path):
    from pi_host.plugins import loading

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "entry-points.json").write_text("{}")  # an earlier version's single file
    os.utime(cache / "entry-points.json", ns=(0, 0))
    for index in range(loading.KEEP_ENTRY_POINT_FILES + 3):
        old = cache / f"entry-points-{index:08x}.json"
        old.write_text("{}")
        os.utime(old, ns=(index * 10**9, index * 10**9))
    entry_points(str(cache))
    left = sorted(p.name for p in cache.glob("entry-points*.json"))
    assert len(left) == loading.KEEP_ENTRY_POINT_FILES and "entry-points.json" not in left
    assert "entry-points-00000000.json" not in left


def test_entry_point_cache_is_invalidated_by_installs(fake_site, isolated_environment):
    from pi_host.config import paths

    first = {e.name for e in entry_points(paths.cache_dir())}
    assert {"alpha", "zeta"} <= first
    dist = fake_site / "pi_newplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pi-newplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[pi_host]\nnewcomer = tp_new\n")
    assert "newcomer" in {e.name for e in entry_points(paths.cache_dir())}


def test_broken_plugins_are_named_and_isolated(fake_site, isolated_environment, tmp_path):
    (fake_site / "pi_thirdparty-1.2.3.dist-info" / "entry_points.txt").write_text(
        "[pi_host]\nzeta = tp_zeta\nbroken = tp_broken\n"
    )
    write_plugin(fake_site / "tp_broken.py", "x", body="raise RuntimeError('cannot start')\n")
    syntax = write_plugin(tmp_path / "syntax_error.py", "x", body="def broken(:\n")
    bad_sig = write_plugin(
        tmp_path / "bad_signature.py",
        "x",
        body="from pi_host import hookimpl\n@hookimpl\ndef on_agent_start(event, unknown_arg):\n    pass\n",
    )
    errors = []
    host = build_host(
        str(isolated_environment["work"]),
        extension_paths=(str(syntax), str(bad_sig)),
        on_error=errors.append,
    )
    failed = {r.name: r.error for r in host.records if r.error}
    assert "cannot start" in failed["broken"]
    assert "SyntaxError" in failed["syntax_error"]
    assert "unknown_arg" in failed["bad_signature"]
    assert {e["plugin"] for e in errors} == {"broken", "syntax_error", "bad_signature"}
    assert order_of(host) == ["installed:zeta"]  # the healthy plugin still runs


def test_strict_plugins_makes_failures_fatal(isolated_environment, tmp_path):
    broken = write_plugin(tmp_path / "broken.py", "x", body="import no_such_module_anywhere\n")
    with pytest.raises(PluginError, match="broken"):
        build_host(str(isolated_environment["work"]), extension_paths=(str(broken),), strict=True)


# --- ordered dispatch ---------------------------------------------------------------------------


class SyncRecorder:
    def __init__(self, name, result=None, calls=None, raises=None):
        self.name, self.result, self.calls, self.raises = name, result, calls, raises

    @hookimpl
    def on_tool_call(self, event, ctx):
        self.calls.append(self.name)
        if self.raises:
            raise self.raises
        return self.result


class AsyncRecorder(SyncRecorder):
    @hookimpl
    async def on_tool_call(self, event, ctx):
        await asyncio.sleep(0)
        self.calls.append(self.name)
        if self.raises:
            raise self.raises
        return self.result


def Recorder(name, result=None, calls=None, is_async=False, raises=None):  # noqa: N802
    return (AsyncRecorder if is_async else SyncRecorder)(name, result, calls, raises)


def make_host(*plugins):
    host = PluginHost()
    errors = []
    host.on_error(errors.append)
    for plugin in plugins:
        host.register(plugin, PluginRecord(name=plugin.name, source="sdk"))
    return host, errors


@pytest.mark.parametrize("is_async", [False, True])
async def test_handlers_run_in_load_order_and_last_return_wins(is_async):
    calls = []
    host, _ = make_host(
        Recorder("a", {"v": 1}, calls, is_async),
        Recorder("b", None, calls, is_async),
        Recorder("c", {"v": 3}, calls, not is_async),
        Recorder("d", None, calls, is_async),
    )
    assert await host.dispatch("tool_call", {}) == {"v": 3}
    assert calls == ["a", "b", "c", "d"]


@pytest.mark.parametrize("is_async", [False, True])
async def test_a_stop_ends_the_chain_at_once(is_async):
    calls = []
    host, _ = make_host(
        Recorder("a", {"v": 1}, calls, is_async),
        Recorder("b", {"block": True, "reason": "no"}, calls, is_async),
        Recorder("c", {"v": 3}, calls, is_async),
    )
    assert await host.dispatch("tool_call", {}) == {"block": True, "reason": "no"}
    assert calls == ["a", "b"]


async def test_a_stop_of_another_event_is_only_a_return():
    calls = []
    host, _ = make_host(Recorder("x", {"cancel": True}, calls), Recorder("y", {"v": 2}, calls))
    assert await host.dispatch("tool_call", {}) == {"v": 2}  # tool_call stops on block, not cancel
    assert calls == ["x", "y"]


async def test_none_everywhere_means_no_opinion():
    calls = []
    host, _ = make_host(Recorder("a", None, calls), Recorder("b", None, calls, True))
    assert await host.dispatch("tool_call", {}) is None
    assert calls == ["a", "b"]


async def test_plugins_registered_late_join_the_end_of_the_chain():
    calls = []
    host, _ = make_host(Recorder("a", {"v": "a"}, calls))
    assert await host.dispatch("tool_call", {}) == {"v": "a"}
    late = Recorder("late", {"v": "late"}, calls, True)
    host.register(late, PluginRecord(name="late", source="sdk"))
    calls.clear()
    assert await host.dispatch("tool_call", {}) == {"v": "late"}
    assert calls == ["a", "late"]
    host.unregister("late")
    assert await host.dispatch("tool_call", {}) == {"v": "a"}


class StartRecorder:
    def __init__(self, name, calls, raises=None):
        self.name, self.calls, self.raises = name, calls, raises

    @hookimpl
    def on_agent_start(self, event):
        self.calls.append(self.name)
        if self.raises:
            raise self.raises


async def test_a_raising_handler_is_reported_once_and_the_chain_goes_on():
    calls = []
    host, errors = make_host(
        StartRecorder("a", calls), StartRecorder("bad", calls, ValueError("kaput")), StartRecorder("c", calls)
    )
    for _ in range(3):
        await host.dispatch("agent_start", {})
    assert calls == ["a", "bad", "c"] * 3
    assert errors == [
        {"extensionPath": "bad", "plugin": "bad", "event": "agent_start", "error": "ValueError: kaput"}
    ]
    assert host.repeated_failures() == ["plugin 'bad' failed in agent_start 2 more times with the same error"]


async def test_a_raising_tool_call_handler_blocks_and_is_named():
    calls = []
    host, errors = make_host(
        Recorder("bad", None, calls, raises=RuntimeError("nope")), Recorder("c", None, calls)
    )
    result = await host.dispatch("tool_call", {})
    assert result == {"block": True, "reason": "nope"}
    assert calls == ["bad"] and errors[0]["plugin"] == "bad"


async def test_chained_events_let_each_handler_see_the_previous_result():
    seen = []

    class Transform:
        def __init__(self, name, suffix):
            self.name, self.suffix = name, suffix

        @hookimpl
        def on_input(self, event):
            seen.append(event["text"])
            return {"action": "transform", "text": event["text"] + self.suffix}

    host, _ = make_host(Transform("one", "-1"), Transform("two", "-2"))
    event = {"text": "x", "images": None}
    await host.dispatch("input", event)
    assert seen == ["x", "x-1"] and event["text"] == "x-1-2"


async def test_a_return_the_rule_refuses_is_named_and_skipped():
    class Bad:
        name = "bad"

        @hookimpl
        def on_input(self, event):
            return {"action": "explode"}

    class Good:
        name = "good"

        @hookimpl
        def on_input(self, event):
            return {"action": "transform", "text": "fine"}

    host, errors = make_host(Bad(), Good())
    event = {"text": "x", "images": None}
    await host.dispatch("input", event)
    assert event["text"] == "fine"
    assert errors[0]["plugin"] == "bad" and "action must be" in errors[0]["error"]


def test_ordering_marks_then_load_order():
    calls = []

    def plugin(name, mark):
        class Marked:
            pass

        def handler(event):
            calls.append(name)

        impl = hookimpl(**({mark: True} if mark else {}))(handler)
        marked = Marked()
        marked.name = name
        marked.on_agent_start = impl
        return marked

    host, _ = make_host(
        plugin("late1", "trylast"),
        plugin("plain1", None),
        plugin("first1", "tryfirst"),
        plugin("plain2", None),
        plugin("late2", "trylast"),
        plugin("first2", "tryfirst"),
    )
    asyncio.run(host.dispatch("agent_start", {}))
    assert calls == ["first1", "first2", "plain1", "plain2", "late1", "late2"]


def test_wrappers_and_unknown_hooks_are_refused_in_one_line_each():
    class Wrapped:
        name = "wrapped"

        @hookimpl(hookwrapper=True)
        def on_input(self, event):
            yield

        @hookimpl
        def on_tool_calls(self, event):
            return None

    host, errors = make_host(Wrapped())
    assert host.plugin_names() == []
    lines = [e["error"] for e in errors]
    assert len(lines) == 2 and "on_input" in lines[0] and "wrapper" in lines[0]
    assert "unknown hook 'on_tool_calls'" in lines[1] and "did you mean 'on_tool_call'" in lines[1]

    class Optional:
        name = "optional"

        @hookimpl(optionalhook=True)
        def on_some_future_event(self, event):
            return None

    host, errors = make_host(Optional())
    assert host.plugin_names() == ["optional"] and errors == []


def test_collect_concatenates_registrations_in_load_order():
    class Registrar:
        def __init__(self, name, items, fail=False):
            self.name, self.items, self.fail = name, items, fail

        @hookimpl
        def register_commands(self):
            if self.fail:
                raise OSError("disk on fire")
            return self.items

    host, errors = make_host(
        Registrar("a", ["x", "y"]), Registrar("b", None), Registrar("c", ["z"]), Registrar("d", [], True)
    )
    assert host.collect("register_commands") == ["x", "y", "z"]
    assert host.collect_named("register_commands") == [("a", "x"), ("a", "y"), ("c", "z")]
    assert errors[0]["plugin"] == "d" and "disk on fire" in errors[0]["error"]


@pytest.mark.parametrize(
    "source, hook, words",
    [
        ("@hookimpl(hookwrapper=True)\ndef on_input(event):\n    yield\n", "on_input", "wrapper"),
        (
            "@hookimpl(wrapper=True)\ndef on_agent_start(event):\n    return (yield)\n",
            "on_agent_start",
            "wrapper",
        ),
        ("@hookimpl\ndef on_tool_calls(event):\n    return None\n", "on_tool_calls", "unknown hook"),
        ("@hookimpl\ndef register_tool():\n    return []\n", "register_tool", "unknown hook"),
    ],
    ids=["hookwrapper", "wrapper", "typo-event", "typo-register"],
)
def test_a_plugin_file_with_a_wrapper_or_unknown_hook_is_refused_with_the_hook_named(
    isolated_environment, tmp_path, source, hook, words
):
    """Every variant of a refused file (the command line's one line and exit code for one of them:
    tests/e2e/cli/test_contract.py)."""
    plugin = tmp_path / "odd.py"
    plugin.write_text("from pi_host import hookimpl\n\n\n" + source)
    host = build_host(isolated_environment["work"], extension_paths=(str(plugin),))
    record = host.record("odd")
    assert record is not None and "odd" not in host.plugin_names()
    assert record.error and hook in record.error and words in record.error

"""The rules every test runs under.

* **Isolation**: a temporary home, agent dir and working directory per test; no provider key of
  the developer's environment leaks in.
* **A warm cache**: pi-host's cache folder (compiled code, entry points, the pydantic plugin
  check) is shared by the whole run, across xdist workers, so each ``pi`` a test starts skips
  the cold-start work. Tests about the cache ask for the ``cold_cache`` fixture.
* **Bytecode caches on**, whatever ``PYTHONDONTWRITEBYTECODE`` says (see below).
* **Tiers by folder**: everything under ``tests/e2e/`` is marked ``e2e``; its ``terminal/``,
  ``interop/`` and ``venvs/`` folders add the markers ``terminal``, ``interop`` and ``venv``
  (pytest never collects a folder named ``venv``). ``pytest -m "not e2e"`` is the inner loop.
* **The tier rule**: a test outside ``tests/e2e/`` that starts ``pi``, a Python interpreter,
  Node, npm or tmux fails, naming what it started (``support/guard.py``).
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

# Bytecode is written even where the environment asks not to (PYTHONDONTWRITEBYTECODE): the test
# modules' rewritten asserts and the pi processes the tests start would otherwise be compiled
# from source again on every run (about 10 s of collection per xdist worker, and the imports of
# every pi start).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from tests.support.guard import ProcessGuard  # noqa: E402 (after the bytecode switch)

pytest_plugins = ["tests.support.fixtures"]

TESTS = Path(__file__).resolve().parent
E2E = TESTS / "e2e"
E2E_KINDS = {"terminal": "terminal", "interop": "interop", "venvs": "venv"}


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        # Compile pi-host's own modules once, here, before the workers start: on a fresh clone the
        # first pi of each worker (and any started at the same moment) would each compile them.
        import compileall

        for package in ("pi_host", "plugins"):
            compileall.compile_dir(str(TESTS.parent / package), quiet=1, workers=2)
    # The inner loop draws an eighth of each fuzz test's examples (support/budget.py); set before
    # collection, where the budgets are read, and inherited by the xdist workers.
    if config.option.markexpr.replace(" ", "") == "note2e":
        os.environ.setdefault("PI_TEST_FUZZ", "quick")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not e2e"`` the e2e folder is not even collected: every test in it is marked
    e2e by its folder, and importing its modules in every worker cost seconds of the inner loop."""
    if collection_path == E2E and config.option.markexpr.replace(" ", "") == "note2e":
        return True
    return None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): one worker per core, plus one on small machines. Much of
    the e2e tier waits on child processes (pi starting, Node, servers, terminals), so with one
    worker per core two cores were busy about 70 % of the time; one more worker fills the waits.
    ``-n <count>`` still overrides."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1 if cores <= 4 else cores


LONG_FIRST = (
    "batch/test_ray.py",
    "interop/test_harbor.py",
    "interop/test_pi_rpc_client.py",
    "interop/test_rpc_conformance.py",
    "venvs/",
    "sessions/test_kill_loop.py",
    "batch/",
    "mcp/",
)
"""e2e files whose tests (or module fixtures) take seconds each: handed out first, so that the
run does not end with one worker on a 20-second test while the others are idle."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank: dict[pytest.Item, int] = {}
    for item in items:
        try:
            parts = item.path.resolve().relative_to(E2E).parts
        except ValueError:
            rank[item] = len(LONG_FIRST) + 1  # the quick tests fill the gaps at the end
            continue
        item.add_marker(pytest.mark.e2e)
        if len(parts) > 1 and parts[0] in E2E_KINDS:
            item.add_marker(getattr(pytest.mark, E2E_KINDS[parts[0]]))
        where = "/".join(parts)
        rank[item] = next((i for i, p in enumerate(LONG_FIRST) if where.startswith(p)), len(LONG_FIRST))
    items.sort(key=rank.__getitem__)  # stable: the order within a rank is the collection's


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup`` (pyproject.toml): each test is its own unit of work, except the tests
    of a module that builds a module-scoped fixture (a pi 1.6.0 run, an installed example, a
    server), which go to one worker together so the fixture is built once. (xdist's own
    ``xdist_group`` marks do not reach its scheduler under pytest 9.2: the node ids it edits are
    no longer what pytest reports.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if _builds_module_fixture(module) else nodeid

    return ModuleFixtureScheduling(config, log)


@functools.cache
def _builds_module_fixture(module: str) -> bool:
    try:
        source = (TESTS.parent / module).read_text(encoding="utf-8")
    except OSError:
        return False
    return 'scope="module"' in source or "scope='module'" in source


_guard = ProcessGuard()


def _guarded(item: pytest.Item):
    if item.get_closest_marker("e2e") is not None:
        return (yield)
    with _guard.watching() as started:
        try:
            result = yield
        finally:
            if started:
                _guard.fail(item, started)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    return (yield from _guarded(item))


@pytest.fixture(scope="session")
def shared_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the whole run (the xdist workers' base folders share a parent)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "pi-host-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path, monkeypatch, shared_cache_dir):
    home = tmp_path / "home"
    agent = tmp_path / "agent"
    work = tmp_path / "work"
    for directory in (home, agent, work):
        directory.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_HOST_CACHE_DIR", str(shared_cache_dir))
    # pi 1.6.0 under Node reuses the code V8 compiled in earlier tests of the run (~0.2 s CPU
    # of each of its starts); pi-host's TS bridge sets its own under PI_HOST_CACHE_DIR
    monkeypatch.setenv("NODE_COMPILE_CACHE", str(shared_cache_dir / "node-compile-cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")  # ~10 % of each offline pip run
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # Vertex without credentials: no DNS query
    monkeypatch.delenv("PI_HOST_NO_PLUGINS", raising=False)
    monkeypatch.delenv("PI_HOST_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("PI_FAUX_SCRIPT", raising=False)
    for key in list(os.environ):
        if key.endswith("_API_KEY") or key in (
            "ANTHROPIC_OAUTH_TOKEN",
            "ANTHROPIC_AUTH_TOKEN",
            "GEMINI_API_KEY",
        ):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(work)
    try:
        import pi_provider_faux

        pi_provider_faux.clear()
    except ImportError:
        pass
    yield {"home": home, "agent": agent, "work": work}

"""An import budget for ``-p`` and ``--mode json`` runs (issue 16: start-up is mostly imports).

The real ``python -m pi_host`` runs in a subprocess and writes ``sys.modules`` when it exits.
Guarded by *which* modules load, not by time: the heavy libraries a run does not need stay out,
and the number of pi-host / plugin modules stays under a measured budget (raise it on purpose,
with a look at ``python -X importtime``, when a feature really needs more; see
docs/performance.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.loopback import MODEL, PROVIDER, LoopbackServer, write_models_json

PROBE = """
import atexit, json, runpy, sys
def dump():
    with open({out!r}, "w") as handle:
        json.dump(sorted(sys.modules), handle)
atexit.register(dump)
sys.argv = ["pi_host", *{argv!r}]
runpy.run_module("pi_host", run_name="__main__", alter_sys=True)
"""

# never on a print / json run, whatever the provider
NEVER = {"typer", "click", "prompt_toolkit", "rich", "pygments", "markdown_it", "shellingham"}
# the MCP SDK (issue 18): only when mcp.json configures a server
NEVER |= {"mcp", "mcp_types", "httpx2"}
# the OpenTelemetry SDK (issue 35): only when an OTEL_* variable turns tracing on
NEVER |= {"opentelemetry"}
# the HTTP stack, for a provider that makes no request
HTTP = {"httpx", "httpcore", "httpx_sse", "anyio", "h11", "certifi", "idna", "sniffio"}
# provider adapters other than the one in use (their ``__init__`` registers them, cheaply)
ADAPTERS = {
    "pi_provider_anthropic": ("pi_provider_anthropic.",),
    "pi_provider_google": ("pi_provider_google.",),
}

# pi_host.* plus plugin (pi_*) modules loaded, measured with headroom (issue 16)
BUDGET = {"faux": 181, "openai": 194}  # measured: 157-158 and 168-169; +3 for the thin modules of
# the permissions, sandbox and agent-hooks plugins (their work is imported only when they are used);
# +4 for the runtime layer (pi_host.runtime, runtime.factory, plugins.modes, session.config);
# +4 for issue 35: agent.budget and runtime.budgets (every session has a budget, limits or not),
# the thin modules of the task tool and the otel plugin (the SDK stays out: see NEVER);
# +1 for issue 32: the Bedrock plugin's thin module (its adapter and botocore load on a Bedrock request)
# +1 for issue 32: the pi_auth plugin's thin module (`pi auth`; its flows load when it runs)
# +1 for issue 36: pi_host._record, the protocol classes' base (pydantic's ~100 modules are gone)
# +2 for issue 36: cli.fast_exit (no teardown after the run) and config.catalog_entries (the catalog
# is read per provider, on use): both save far more than a module's import


def _run(argv: list[str], tmp_path, cwd) -> tuple[set[str], str]:
    out_file = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, out=str(out_file))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(out_file.read_text())), done.stdout


def _ours(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if name.split(".")[0] == "pi_host" or name.startswith("pi_"))


def _tops(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_faux_run_stays_within_the_import_budget(mode, isolated_environment, tmp_path):
    modules, stdout = _run(
        ["--model", "faux/faux-1", "--no-session", *mode, "hi"], tmp_path, isolated_environment["work"]
    )
    assert "faux" in stdout  # the run really happened
    tops = _tops(modules)
    assert not tops & NEVER, sorted(tops & NEVER)
    assert not tops & HTTP, sorted(tops & HTTP)
    for prefixes in ADAPTERS.values():
        assert not [name for name in modules if name.startswith(prefixes)]
    assert not [
        name
        for name in modules
        if name.startswith("pi_provider_openai.") and name != "pi_provider_openai.catalog_loader"
    ]
    assert not tops & {"pydantic_core"} and "pydantic" not in modules, "pydantic loaded on a faux run"
    ours = _ours(modules)
    assert len(ours) <= BUDGET["faux"], ours


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_openai_completions_run_loads_only_its_adapter(mode, isolated_environment, tmp_path):
    with LoopbackServer(["hello there", "hello there"]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        argv = ["--model", f"{PROVIDER}/{MODEL}", "--no-session", *mode, "hi"]
        _run(argv, tmp_path, isolated_environment["work"])  # warms the entry-point cache
        modules, stdout = _run(argv, tmp_path, isolated_environment["work"])
    assert "hello there" in stdout
    # importlib.metadata only scans distributions when the entry-point cache is cold (this run
    # warmed it): pydantic's own plugin scan is skipped (pi_host/cli/pydantic_plugins.py)
    assert "importlib.metadata" not in modules
    tops = _tops(modules)
    assert not tops & NEVER, sorted(tops & NEVER)
    assert "pi_provider_openai.completions" in modules
    # the request goes over asyncio streams and h11 (pi_host.lib.llm.wire): httpx, httpcore and
    # anyio (~90 ms of imports) stay out unless a proxy or a caller's own client needs them
    assert "h11" in tops and "pi_host.lib.llm.wire" in modules
    assert not tops & {"httpx", "httpcore", "anyio", "sniffio", "httpx_sse", "certifi", "idna"}
    for prefixes in ADAPTERS.values():
        assert not [name for name in modules if name.startswith(prefixes)]
    assert not tops & {"pydantic_core"} and "pydantic" not in modules, "pydantic loaded on a provider run"
    ours = _ours(modules)
    assert len(ours) <= BUDGET["openai"], ours


def test_a_stdio_mcp_server_is_used_without_importing_the_mcp_sdk(
    isolated_environment, tmp_path, monkeypatch
):
    """The SDK costs about a second of CPU to import; a stdio server runs on pi-host's own
    session (pi_mcp.session), so a run that calls its tool never loads it."""
    from tests.e2e.mcp.helpers import TEST_STDIO, write_config

    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**TEST_STDIO, "exposure": "direct"}})
    script = [
        {"toolCalls": [{"name": "mcp__docs__echo", "arguments": {"text": "abc"}}]},
        {"text": "got: {{lastToolResult}}"},
    ]
    monkeypatch.setenv("PI_FAUX_SCRIPT", json.dumps(script))
    modules, stdout = _run(
        ["--model", "faux/faux-1", "--no-session", "-p", "echo"], tmp_path, isolated_environment["work"]
    )
    assert "got: cba" in stdout
    assert "pi_mcp.session" in modules
    assert not _tops(modules) & {"mcp", "mcp_types", "httpx2"}, sorted(_tops(modules) & {"mcp", "mcp_types"})

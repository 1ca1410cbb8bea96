"""The layering rule of ``pi_host/``, checked on the source: every import (module level, inside
functions, under ``TYPE_CHECKING``) goes to the same layer or a lower one, and no modules import
each other in a cycle (nor the modules of any bundled plugin under ``plugins/``); ``lib/`` is
kits only (it dispatches no hook); the kernel's size can only shrink (a ratchet).
docs/architecture.md explains the layers.

    entry (cli/, sdk.py, rpc/) > runtime/ > lib/ > session/ > agent/ > ai/ > plugins/ > config/
    > loop/ > protocol/

``ai/`` (the LLM library) and ``agent/`` (the agent library) are public packages of their own,
outside the kernel: the coding agent's session is built on the agent library.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import pi_host

ROOT = Path(pi_host.__file__).parent
LAYERS = [
    ("protocol", ("pi_host.protocol",)),
    ("loop", ("pi_host.loop",)),
    ("config", ("pi_host.config",)),
    ("plugins", ("pi_host.plugins",)),
    ("ai", ("pi_host.ai",)),
    ("agent", ("pi_host.agent",)),
    ("session", ("pi_host.session",)),
    ("lib", ("pi_host.lib",)),
    ("runtime", ("pi_host.runtime",)),
    ("entry", ("pi_host.cli", "pi_host.sdk", "pi_host.__main__", "pi_host.rpc")),
]
FACADE = {"pi_host", "pi_host._aliases", "pi_host._exports", "pi_host._version", "pi_host._record"}
"""The package root lazily re-exports the public API; internal modules import real modules."""
SHARED_BY_ALL = {"pi_host._version", "pi_host._exports", "pi_host._record"}
"""Root modules any layer may import (the version, the lazy re-export helper, the plain-record
base that stands in for pydantic on the hot path: a library, not kernel logic)."""
KERNEL = ("protocol", "loop", "plugins", "session")
KERNEL_BUDGET = ROOT.parent / "tests" / "repo" / "kernel_budget.json"
"""The kernel's measured size (lines of code, and all lines): it may not grow, and a shrink must
be recorded (lower the numbers) so that it cannot grow back unnoticed."""
RATCHET_SLACK = 40
FILE_LINE_BUDGET = 600


def module_files() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ["pi_host", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_files()


def layer_of(module: str) -> int | None:
    for index, (_name, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return None


def imports_of(
    module: str, path: Path, modules: dict[str, Path] | None = None, prefix: str = "pi_host"
) -> set[str]:
    modules = MODULES if modules is None else modules
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(prefix))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if not name.startswith(prefix):
                continue
            for alias in node.names:  # `from pi_host.config import paths` imports a module
                candidate = f"{name}.{alias.name}"
                found.add(candidate if candidate in modules else name)
    found.discard(module)
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    """Every module's pi_host imports (parsed on first use, not at collection)."""
    return {module: imports_of(module, path) for module, path in MODULES.items()}


def test_every_module_belongs_to_a_layer():
    assert sorted(m for m in MODULES if m not in FACADE and layer_of(m) is None) == []


def test_no_module_imports_an_old_path_or_the_facade():
    from pi_host._aliases import current_name

    bad = []
    for module, targets in graph().items():
        for target in targets:
            if current_name(target) is not None or target not in MODULES:
                bad.append(f"{module} -> {target} (no such module)")
            elif module not in FACADE and target in FACADE - SHARED_BY_ALL:
                bad.append(f"{module} -> {target} (the package facade)")
    assert bad == []


def test_imports_go_to_the_same_layer_or_below():
    upward = []
    for module, targets in graph().items():
        mine = layer_of(module)
        if mine is None:
            continue
        for target in targets:
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                upward.append(f"{module} ({LAYERS[mine][0]}) -> {target} ({LAYERS[theirs][0]})")
    assert sorted(upward) == []


def test_no_import_cycles():
    assert cycles_of(graph(), skip=FACADE) == []


def cycles_of(edges: dict[str, set[str]], skip: set[str] = frozenset()) -> list[list[str]]:
    """Tarjan's strongly connected components over a module graph: every group of modules that
    import each other, directly or around a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in index and module not in skip:
            visit(module)
    return cycles


PLUGINS = ROOT.parent / "plugins"
PLUGIN_PACKAGES = sorted(path.name for path in PLUGINS.iterdir() if (path / "__init__.py").is_file())


def plugin_graph(package: str) -> dict[str, set[str]]:
    """Imports among one bundled plugin's own modules (module level, in functions and under
    ``TYPE_CHECKING`` alike: a circle of type-only imports is a circle of knowledge all the same)."""
    found: dict[str, Path] = {}
    for path in (PLUGINS / package).rglob("*.py"):
        parts = list(path.relative_to(PLUGINS).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    edges: dict[str, set[str]] = {}
    for module, path in found.items():
        edges[module] = {t for t in imports_of(module, path, found, prefix=package) if t in found}
    return edges


@pytest.mark.parametrize("package", PLUGIN_PACKAGES)
def test_no_import_cycles_in_a_plugin(package):
    assert cycles_of(plugin_graph(package)) == []


@pytest.mark.parametrize("package", PLUGIN_PACKAGES)
def test_a_plugin_imports_no_other_plugin(package):
    """Plugins use the public API (``pi_host``), never each other's modules: what two plugins
    share lives in ``pi_host`` (e.g. ``pi_host.lib.llm.strict_tool_limits``)."""
    others = set(PLUGIN_PACKAGES) - {package}
    found = []
    for path in (PLUGINS / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found += [f"{path.relative_to(PLUGINS)}: {n}" for n in names if n.split(".")[0] in others]
    assert found == []


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def code_line_count(path: Path) -> int:
    source = path.read_text(encoding="utf-8")
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docstrings.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and number not in docstrings
    )


def kernel_size() -> tuple[dict[str, int], dict[str, int]]:
    lines = {name: 0 for name in KERNEL}
    code = {name: 0 for name in KERNEL}
    for module, path in MODULES.items():
        layer = layer_of(module)
        if layer is not None and LAYERS[layer][0] in KERNEL:
            lines[LAYERS[layer][0]] += line_count(path)
            code[LAYERS[layer][0]] += code_line_count(path)
    return lines, code


def test_the_kernel_only_shrinks():
    import json

    lines, code = kernel_size()
    budget = json.loads(KERNEL_BUDGET.read_text())
    print("kernel lines:", lines, "total", sum(lines.values()), "| code:", code, "total", sum(code.values()))
    assert sum(code.values()) <= budget["code"], f"the kernel grew: {code} over {budget['code']}"
    assert sum(lines.values()) <= budget["lines"], f"the kernel grew: {lines} over {budget['lines']}"
    assert budget["code"] - sum(code.values()) <= RATCHET_SLACK, (
        f"the kernel shrank to {sum(code.values())} lines of code: lower {KERNEL_BUDGET.name}"
    )
    assert budget["lines"] - sum(lines.values()) <= RATCHET_SLACK * 2, (
        f"the kernel shrank to {sum(lines.values())} lines: lower {KERNEL_BUDGET.name}"
    )


def test_lib_is_kits_only():
    """Nothing in ``lib/`` dispatches a hook: what fires plugin events around a session is the
    runtime's (``pi_host/runtime/``) or the session's own."""
    calls = []
    for module, path in MODULES.items():
        if not module.startswith("pi_host.lib"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "dispatch"
            ):
                calls.append(f"{module}:{node.lineno}")
    assert calls == []


SIZE_CHECKED = sorted(
    [str(path.relative_to(ROOT.parent)) for path in MODULES.values()]
    + [str(path.relative_to(ROOT.parent)) for path in (ROOT.parent / "plugins").rglob("*.py")]
)
"""Every file of the host and of the bundled plugins: the line budget holds for both."""


@pytest.mark.parametrize("path", SIZE_CHECKED)
def test_no_file_over_the_budget(path):
    assert line_count(ROOT.parent / path) <= FILE_LINE_BUDGET


def test_the_session_is_built_on_the_agent_library():
    """One loop: the coding agent's session runs its prompts through the agent library's Agent,
    which alone drives the kernel's loop."""
    session = graph()["pi_host.session.agent_session"]
    assert "pi_host.agent.agent" in session and "pi_host.loop.loop" not in session
    drivers = sorted(m for m, targets in graph().items() if "pi_host.loop.loop" in targets)
    assert "pi_host.agent.agent" in drivers
    assert not [m for m in drivers if m.startswith("pi_host.session")]

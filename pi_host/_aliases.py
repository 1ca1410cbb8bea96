"""Module paths of the flat layout (before pi-host 0.2), kept working for plugins.

``import pi_host.llm.http`` gives the very module object ``pi_host.lib.llm.http`` is, so classes,
module state and monkeypatching stay the same whichever name a plugin uses. A meta-path finder
placed first answers only for the names below (and their submodules); every other import passes
through untouched after one string check.
"""

from __future__ import annotations

import sys

# The spec class without importing importlib (this module loads for `pi --version` too).
ModuleSpec = type(__spec__)

MOVED: dict[str, str] = {
    "pi_host.abort": "pi_host.protocol.abort",
    # pi_host.agent is now the agent library (the Agent class); its modules of the flat layout resolve
    "pi_host.agent.convert": "pi_host.loop.convert",
    "pi_host.agent.loop": "pi_host.loop.loop",
    "pi_host.agent.validation": "pi_host.loop.validation",
    "pi_host.bootstrap": "pi_host.plugins.selection",
    "pi_host.cli_input": "pi_host.cli.input",
    "pi_host.compaction": "pi_host.lib.compaction",
    "pi_host.extension_context": "pi_host.session.context",
    "pi_host.frontmatter": "pi_host.lib.frontmatter",
    "pi_host.hookspecs": "pi_host.plugins.hookspecs",
    "pi_host.lazy": "pi_host.lib.lazy",
    "pi_host.llm": "pi_host.lib.llm",
    "pi_host.llm.credentials": "pi_host.config.credentials",
    "pi_host.llm.overflow": "pi_host.protocol.failures",
    "pi_host.model_registry": "pi_host.config.models",
    "pi_host.paths": "pi_host.config.paths",
    "pi_host.plugin_host": "pi_host.plugins.dispatch",
    "pi_host.plugin_loading": "pi_host.plugins.loading",
    "pi_host.protocol.events": "pi_host.protocol.stream",
    "pi_host.registrations": "pi_host.plugins.registrations",
    "pi_host.resources": "pi_host.lib.resources",
    "pi_host.session_bridge": "pi_host.session.bridge",
    "pi_host.session_retry": "pi_host.session.retry",
    "pi_host.session_store": "pi_host.lib.sessions.store",
    "pi_host.session_tree": "pi_host.lib.sessions.tree",
    "pi_host.settings": "pi_host.config.settings",
    "pi_host.settings_schema": "pi_host.config.settings_schema",
    "pi_host.system_prompt": "pi_host.session.system_prompt",
    "pi_host.toolkit": "pi_host.lib.toolkit",
    "pi_host.tools": "pi_host.loop.tools",
    "pi_host.trust": "pi_host.config.trust",
    "pi_host.wire": "pi_host.lib.wire",
    # pi-host 0.3: what happens around a live session left lib/ for the runtime layer
    "pi_host.lib.compaction.compactor": "pi_host.runtime.compactor",
    "pi_host.lib.extension_api": "pi_host.runtime.extension_api",
    "pi_host.lib.extension_api.process": "pi_host.lib.toolkit.process",
    "pi_host.lib.sessions.switching": "pi_host.runtime.switching",
    "pi_host.lib.toolkit.user_bash": "pi_host.runtime.user_bash",
    # the steering and follow-up queues belong to the agent library (pi_host.agent)
    "pi_host.session.queues": "pi_host.agent.queues",
}
"""Old module path -> current one. A longer entry wins over a shorter one it extends."""


def current_name(name: str) -> str | None:
    """The current path of an old module name, or None when ``name`` was not moved (a path moved
    twice, ``pi_host.compaction.compactor``, resolves to where it is now)."""
    found = _moved_once(name)
    while found is not None:
        again = _moved_once(found)
        if again is None:
            return found
        found = again
    return None


def _moved_once(name: str) -> str | None:
    head = name
    while True:
        target = MOVED.get(head)
        if target is not None:
            return target + name[len(head) :]
        head, dot, _ = head.rpartition(".")
        if not dot or head == "pi_host":
            return None


class _AliasLoader:
    """Finder and loader at once (duck-typed: importlib.abc costs start-up time)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if not fullname.startswith("pi_host.") or current_name(fullname) is None:
            return None
        return ModuleSpec(fullname, self)

    def create_module(self, spec: ModuleSpec) -> object:
        import importlib

        module = importlib.import_module(current_name(spec.name) or spec.name)
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module: object) -> None:
        # The import system has just stamped the alias spec on the real module: put its own back.
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    if not any(isinstance(finder, _AliasLoader) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasLoader())

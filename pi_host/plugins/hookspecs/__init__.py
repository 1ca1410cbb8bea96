"""Every extension point of pi-host, declared in one package (one module per group of hooks).

A plugin is a module (or object) with functions named after these specs and decorated with
``pi_host.hookimpl``; an implementation may accept any subset of a spec's arguments.

* **Registration hooks** (``register_*``, :mod:`.registration`) return lists of things: tools,
  providers, commands... The host concatenates them in load order.
* **Event hooks** (``on_*``) receive ``event`` (a dict with pi's field names: the TypedDict
  named in the annotation) and ``ctx``, the session's :class:`pi_host.session.ExtensionContext`
  (for ``on_project_trust``, a smaller :class:`pi_host.plugins.selection.TrustContext`). Handlers
  run one at a time; ``async def`` handlers are awaited. ``None`` always means "no opinion".
  What other returns do is the **return rule** declared under each spec with ``@returns``
  (:mod:`pi_host.plugins.rules`): ignored, a stop that ends the chain, or a fold that later
  handlers see. A return the rule does not accept is reported naming the plugin and skipped.

**Order.** Handlers marked ``@hookimpl(tryfirst=True)`` run first, unmarked ones next,
``trylast=True`` ones last; within each group in load order: built-in plugins, installed
third-party plugins (by entry-point name), ``<agent dir>/extensions/*.py``, the trusted project's
``.pi/extensions/*.py``, then ``-e`` paths in the order given.

**Rejected at load**, in one line naming the plugin and the hook: ``hookwrapper=True`` and
``wrapper=True`` implementations (pi-host has no wrapper calls: a handler sees the event and
returns), and names of hooks that do not exist (``on_tool_calls``), unless marked
``optionalhook=True`` (a hook of a newer pi-host).

**Failures.** A handler that raises is reported once per (plugin, hook, error) (one stderr line,
or ``extension_error`` in JSON mode; a count at the end if it repeats) and the chain goes on,
except where a rule says a raise blocks (``on_tool_call``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from pi_host.plugins.hookspecs import lifecycle, prompt, provider, registration, run, tools, ui
from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.hookspecs.lifecycle import *  # noqa: F403
from pi_host.plugins.hookspecs.prompt import *  # noqa: F403
from pi_host.plugins.hookspecs.provider import *  # noqa: F403
from pi_host.plugins.hookspecs.registration import *  # noqa: F403
from pi_host.plugins.hookspecs.run import *  # noqa: F403
from pi_host.plugins.hookspecs.tools import *  # noqa: F403
from pi_host.plugins.hookspecs.ui import *  # noqa: F403

MODULES: tuple[ModuleType, ...] = (registration, lifecycle, prompt, run, provider, tools, ui)


def specs() -> dict[str, Callable[..., Any]]:
    """Every hook spec by name (``on_input``, ``register_tools``, ``load_script_extension``...)."""
    return {
        name: getattr(module, name)
        for module in MODULES
        for name in module.__all__
        if name.startswith(("on_", "register_", "load_"))
    }


EVENT_HOOKS: tuple[str, ...] = tuple(
    name[3:] for name in specs() if name.startswith("on_") and name != "on_event"
)
"""Every event name that has a specific ``on_<name>`` hook."""

__all__ = ["EVENT_HOOKS", "MODULES", "hookspec", "specs", *specs()]

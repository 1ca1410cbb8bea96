"""How the returns of an event's handlers combine (reference §9.3).

Every event hook in :mod:`pi_host.plugins.hookspecs` declares its :class:`Rule` next to its spec
with ``@returns(...)``; :meth:`pi_host.plugins.dispatch.PluginHost.dispatch` applies it. A rule
says, for one handler's non-None return:

* ``check``   validate and normalise it (a plain dict for a message becomes a message); raising
  :class:`BadReturn` rejects that return, reported in one line naming the plugin
  (:class:`Corrected` reports it too, but goes on with a corrected value);
* ``stop``    whether it ends the chain at once (a cancel, a block, a handled input);
* ``fold``    how it changes the event before the next handler sees it (chained events);
* ``combine`` what the dispatch returns from all accepted returns (default: the last one).

A rule with none of these (:data:`IGNORED`) drops every return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class BadReturn(Exception):
    """A handler returned something its event does not accept; the message says what."""


class Corrected(BadReturn):
    """A return was usable after a correction: reported like a bad return, then ``value`` is
    used instead."""

    def __init__(self, message: str, value: Any) -> None:
        super().__init__(message)
        self.value = value


class Rule:
    """How one event's returns combine (a plain class: dataclasses cost start-up time)."""

    __slots__ = ("summary", "check", "stop", "fold", "combine", "raise_blocks", "ignored")

    def __init__(
        self,
        summary: str,
        check: Callable[[dict[str, Any], Any], Any] | None = None,
        stop: Callable[[Any], bool] | None = None,
        fold: Callable[[dict[str, Any], Any], None] | None = None,
        combine: Callable[[list[Any]], Any] | None = None,
        raise_blocks: bool = False,
    ) -> None:
        self.summary = summary
        """One line for the docs and ``pi plugins``: how returns combine."""
        self.check = check
        self.stop = stop
        self.fold = fold
        self.combine = combine
        self.raise_blocks = raise_blocks
        """A raising handler ends the chain as ``{"block": True, "reason": <error>}`` (``tool_call``)."""
        self.ignored = check is None and stop is None and fold is None and combine is None

    def __repr__(self) -> str:
        return f"Rule({self.summary!r})"


IGNORED = Rule("return ignored")

_RULE_ATTRIBUTE = "pi_host_return_rule"


def returns(rule: Rule) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the return rule of the event hook it decorates (put it under ``@hookspec``)."""

    def mark(spec: Callable[..., Any]) -> Callable[..., Any]:
        setattr(spec, _RULE_ATTRIBUTE, rule)
        return spec

    return mark


def rule_of(spec: Callable[..., Any]) -> Rule:
    return getattr(spec, _RULE_ATTRIBUTE, IGNORED)


# --- building blocks of the checks ------------------------------------------------------------


def expect_dict(result: Any, what: str = "a dict") -> dict[str, Any]:
    if not isinstance(result, dict):
        raise BadReturn(f"expected {what}, got {type(result).__name__}")
    return result


def flag(name: str) -> Callable[[Any], bool]:
    """A stop test: the return has a truthy ``name`` (``cancel``, ``block``)."""
    return lambda result: bool(result.get(name))


def chained(key: str, check: Callable[[dict[str, Any], Any], Any] | None = None, summary: str = "") -> Rule:
    """``{key: value}`` replaces ``event[key]`` for the next handler; the last return wins."""

    def fold(event: dict[str, Any], result: Any) -> None:
        event[key] = result[key]

    def checked(event: dict[str, Any], result: Any) -> Any:
        result = expect_dict(result)
        if key not in result:
            return None
        return check(event, result) if check is not None else result

    return Rule(summary or f"{{{key}}} chained", check=checked, fold=fold)

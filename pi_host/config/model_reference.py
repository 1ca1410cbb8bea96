"""Which model a typed reference (``--model``, ``/model``, ``--models`` patterns) means, by pi
1.6.0's rules.

An exact id (or ``provider/id``) found under one provider is that model. Found under several
(Claude on Anthropic, Bedrock, OpenRouter...), the one provider with credentials wins; when none
or more than one has credentials the reference is ambiguous and refused, naming the candidates,
rather than guessed. Otherwise a case-insensitive substring of ids and names: across providers
only those with credentials count (all of them when none has), the undated alias with the
greatest id wins, and the same id under several providers is again ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_DATED = re.compile(r"-\d{8}$")


class AmbiguousModel(LookupError):
    """The reference names the same model under several providers; ``str()`` is pi's message."""

    def __init__(self, reference: str, candidates: list[Any], usable_count: int) -> None:
        names = ", ".join(sorted(f"{m.provider}/{m.id}" for m in candidates))
        hint = (
            "No matching provider is authenticated."
            if usable_count == 0
            else "More than one matching provider is authenticated."
        )
        super().__init__(
            f'Model "{reference}" is ambiguous across providers: {names}. {hint} Use --provider or provider/model.'
        )


def _best(matches: list[Any]) -> Any | None:
    aliases = [m for m in matches if m.id.endswith("-latest") or not _DATED.search(m.id)]
    pool = aliases or matches
    return max(pool, key=lambda m: m.id) if pool else None


def _contains(text: str, models: list[Any]) -> list[Any]:
    lowered = text.lower()
    return [m for m in models if lowered in m.id.lower() or lowered in (m.name or "").lower()]


def _exact(text: str, pool: list[Any], usable: Callable[[str], bool]) -> Any | None:
    lowered = text.lower()
    raw = [m for m in pool if m.id.lower() == lowered]
    named = None
    head, slash, tail = text.partition("/")
    if slash:
        scoped = [m for m in pool if m.provider.lower() == head.lower()]
        if scoped:
            named = next((m for m in scoped if m.id.lower() == tail.lower()), None)
            named = named or next((m for m in raw if m.provider == scoped[0].provider), None)
            named = named or _best(_contains(tail, scoped))
    others = [m for m in raw if m is not named]
    candidates = ([named] if named is not None else []) + others
    if not candidates:
        return None
    if len({m.provider for m in candidates}) == 1:
        return candidates[0]
    if named is not None and usable(named.provider):
        return named
    usable_others = [m for m in others if usable(m.provider)]
    if len(usable_others) == 1:
        return usable_others[0]
    if not usable_others and named is not None:
        return named
    raise AmbiguousModel(text, candidates, len(usable_others))


def match_exact(text: str, pool: list[Any], usable: Callable[[str], bool]) -> Any | None:
    """Only the exact rule of :func:`match` (an id, or ``provider/id``): None when it finds
    nothing; raises :class:`AmbiguousModel` as :func:`match` does."""
    return _exact(text, pool, usable)


def match(text: str, pool: list[Any], usable: Callable[[str], bool]) -> Any | None:
    """The model ``text`` means among ``pool``, None when nothing matches; raises
    :class:`AmbiguousModel` when it names the same model under several providers."""
    found = _exact(text, pool, usable)
    if found is not None:
        return found
    lowered = text.lower()
    by_name = [m for m in pool if (m.name or "").lower() == lowered]
    if len({m.provider for m in by_name}) == 1:
        return by_name[0]  # a display name under one provider only (pi-host also takes names)
    matches = _contains(text, pool)
    if not matches:
        return None
    usable_matches = (
        [m for m in matches if usable(m.provider)] if len({m.provider for m in matches}) > 1 else []
    )
    chosen = usable_matches or matches
    best = _best(chosen)
    tied = [m for m in chosen if m.id == best.id]
    if len({m.provider for m in tied}) == 1:
        return best
    raise AmbiguousModel(text, tied, len(tied) if usable_matches else 0)

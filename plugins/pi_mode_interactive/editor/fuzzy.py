"""Fuzzy matching shared by the completer and the picker.

``fuzzy_score(query, candidate)`` returns ``None`` when the query's characters do not all appear
in the candidate in order (case-insensitive), otherwise a score where *higher is better*.
The score rewards runs of consecutive characters, matches at word boundaries and matches near
the start, and penalises gaps; an exact match and a prefix match get large bonuses.

``fuzzy_filter(query, items, key)`` splits the query on whitespace; every token must match and
the scores add up. Items are returned best first; ties keep their original order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

_BOUNDARY_CHARS = frozenset(" \t-_./:\\@")

EXACT_BONUS = 100.0
PREFIX_BONUS = 25.0


def _is_boundary(original: str, index: int) -> bool:
    if index == 0:
        return True
    previous = original[index - 1]
    if previous in _BOUNDARY_CHARS:
        return True
    # camelCase transition: "fooBar" -> "B" starts a word.
    return previous.islower() and original[index].isupper()


def _score_positions(original: str, positions: Sequence[int]) -> float:
    score = 0.0
    run = 0
    last = -1
    for index in positions:
        score += 1.0
        if last >= 0 and index == last + 1:
            run += 1
            score += 4.0 * run
        else:
            run = 0
            if last >= 0:
                score -= float(index - last - 1)
        if _is_boundary(original, index):
            score += 8.0
        score -= index * 0.05
        last = index
    return score


def _greedy_positions(query_lower: str, candidate_lower: str) -> list[int] | None:
    positions: list[int] = []
    start = 0
    for char in query_lower:
        index = candidate_lower.find(char, start)
        if index < 0:
            return None
        positions.append(index)
        start = index + 1
    return positions


def fuzzy_score(query: str, candidate: str) -> float | None:
    """Score ``candidate`` against ``query``; ``None`` means no match. Higher is better."""
    if not query:
        return 0.0
    query_lower = query.lower()
    candidate_lower = candidate.lower()
    if len(query_lower) > len(candidate_lower):
        return None
    positions = _greedy_positions(query_lower, candidate_lower)
    if positions is None:
        return None
    best = _score_positions(candidate, positions)
    # The greedy alignment can scatter the query over an unrelated early part of the text; also
    # score every contiguous occurrence and keep the best one.
    length = len(query_lower)
    occurrence = candidate_lower.find(query_lower)
    while occurrence >= 0:
        best = max(best, _score_positions(candidate, range(occurrence, occurrence + length)))
        occurrence = candidate_lower.find(query_lower, occurrence + 1)
    if candidate_lower == query_lower:
        best += EXACT_BONUS
    elif candidate_lower.startswith(query_lower):
        best += PREFIX_BONUS
    return best


def fuzzy_filter(query: str, items: Iterable[T], key: Callable[[T], str] = str) -> list[T]:
    """Items whose ``key`` matches every whitespace-separated token of ``query``, best first."""
    tokens = query.split()
    materialized = list(items)
    if not tokens:
        return materialized
    scored: list[tuple[float, int, T]] = []
    for position, item in enumerate(materialized):
        text = key(item)
        total = 0.0
        for token in tokens:
            score = fuzzy_score(token, text)
            if score is None:
                break
            total += score
        else:
            scored.append((total, position, item))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [item for _, _, item in scored]

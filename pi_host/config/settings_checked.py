"""Settings contents already found valid, so an unchanged settings.json is not checked again.

Checking a file with the full schema (:mod:`pi_host.config.settings_schema`) imports pydantic and
builds the model: ~50-60 ms, on every start of anyone who has a settings.json. Almost every start
reads the same contents as the one before, so the digest of each contents that passed with no
problem is kept in ``<cache dir>/settings-valid.txt`` (the last :data:`KEEP`). The digest covers
the canonical JSON, pi-host's version and the schema module's modification time, so a new
schema checks everything again. Contents with a problem are never recorded: their problems are
said on every start. A missing or unreadable file only means checking again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import Any

from pi_host._version import __version__
from pi_host.config.paths import cache_dir

KEEP = 32
FILE_NAME = "settings-valid.txt"


def digest(data: dict[str, Any]) -> str:
    schema = os.path.join(os.path.dirname(__file__), "settings_schema.py")
    try:
        stamp = os.stat(schema).st_mtime_ns
    except OSError:
        stamp = 0
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{__version__}\n{stamp}\n{text}".encode()).hexdigest()


def _path() -> str:
    return os.path.join(cache_dir(), FILE_NAME)


def _known() -> list[str]:
    try:
        with open(_path(), encoding="ascii") as handle:
            return handle.read().split()
    except (OSError, ValueError):
        return []


def was_valid(key: str) -> bool:
    return key in _known()


def remember_valid(key: str) -> None:
    """Record ``key`` (atomically; a failure to write only costs a check next time)."""
    known = [k for k in _known() if k != key][-(KEEP - 1) :] + [key]
    path = _path()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="ascii") as handle:
            handle.write("\n".join(known) + "\n")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)

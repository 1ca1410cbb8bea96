"""Where pi-host keeps things. The agent dir is shared with pi on purpose."""

from __future__ import annotations

import os


def agent_dir() -> str:
    """``PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    value = os.environ.get("PI_CODING_AGENT_DIR")
    if value:
        return os.path.abspath(os.path.expanduser(value))
    return os.path.join(os.path.expanduser("~"), ".pi", "agent")


def cache_dir() -> str:
    """pi-host's own cache (never inside the agent dir, which pi also reads)."""
    value = os.environ.get("PI_HOST_CACHE_DIR")
    if value:
        return os.path.abspath(os.path.expanduser(value))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pi-host")

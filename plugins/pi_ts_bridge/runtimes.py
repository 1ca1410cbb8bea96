"""Each plugin host's bridge, on its own so that the package's hooks and the loader share it
without importing each other."""

from __future__ import annotations

import weakref
from typing import Any

RUNTIMES: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""Plugin host -> its bridge (``pi_ts_bridge.runtime.BridgeRuntime``), once one was started."""

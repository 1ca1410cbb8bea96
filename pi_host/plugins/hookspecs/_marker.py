"""The pluggy marker every spec module uses (kept apart so the spec modules import nothing else
of the plugin machinery)."""

import pluggy

hookspec = pluggy.HookspecMarker("pi_host")

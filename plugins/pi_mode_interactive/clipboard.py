"""Text to the user's clipboard: a clipboard tool when one is there, else OSC 52 (the terminal
sets its own clipboard, which also works over SSH and inside tmux with ``set-clipboard on``).

The transcript view and ``/copy`` (``commands.py``) copy through this."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Callable

TOOLS = (
    ["wl-copy"],
    ["xclip", "-selection", "clipboard"],
    ["xsel", "--clipboard", "--input"],
    ["pbcopy"],
)


def copy_to_clipboard(text: str, write_raw: Callable[[str], None]) -> str:
    """Copy ``text``; the name of what took it (a tool, or ``OSC 52``)."""
    for tool in TOOLS:
        if not shutil.which(tool[0]):
            continue
        # a tool for a display that is not there fails slowly or copies nowhere
        if tool[0] == "wl-copy" and not os.environ.get("WAYLAND_DISPLAY"):
            continue
        if tool[0].startswith("x") and not os.environ.get("DISPLAY"):
            continue
        try:
            subprocess.run(tool, input=text.encode(), check=True, timeout=5, capture_output=True)
            return tool[0]
        except (OSError, subprocess.SubprocessError):
            continue
    payload = base64.b64encode(text.encode()).decode()
    write_raw(f"\x1b]52;c;{payload}\x07")
    return "OSC 52"

"""What this machine can do, asked once per process: the Landlock ABI, whether namespaces can be
created (unprivileged user namespaces may be forbidden), whether ``bwrap`` is installed."""

from __future__ import annotations

import os
import platform
import shutil
from functools import cache

from pi_sandbox.launch import Capabilities


@cache
def capabilities() -> Capabilities:
    system = platform.system()
    if system != "Linux":
        return Capabilities(platform={"Darwin": "macOS"}.get(system, system))
    from pi_sandbox import landlock

    return Capabilities(
        landlock_abi=landlock.abi_version(), namespaces=_can_unshare(), bwrap=shutil.which("bwrap")
    )


def _can_unshare() -> bool:
    """Try, in a throw-away child, what every sandboxed command will do."""
    from pi_sandbox import namespaces

    flags = namespaces.CLONE_NEWNS | namespaces.CLONE_NEWPID | namespaces.CLONE_NEWNET
    if os.geteuid() != 0:
        flags |= namespaces.CLONE_NEWUSER
    uid, gid = os.getuid(), os.getgid()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            namespaces.unshare(flags, uid, gid)
            namespaces.make_private()
            code = 0
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def backend_for(caps: Capabilities, wanted: str) -> tuple[str, str | None]:
    """``(backend, problem)``: ``landlock``, ``bwrap`` or ``none`` (then ``problem`` says why in
    one line)."""
    if caps.platform != "linux":
        return "none", f"not available on {caps.platform} (the sandbox uses Linux's Landlock or bubblewrap)"
    if wanted in ("auto", "landlock") and caps.landlock_abi:
        return "landlock", None
    if wanted in ("auto", "bwrap") and caps.bwrap:
        return "bwrap", None
    if wanted == "bwrap":
        return "none", "bubblewrap (bwrap) is not installed"
    kernel = platform.release()
    hint = " or install bubblewrap" if not caps.bwrap else ""
    return "none", f"not available on this kernel ({kernel}: no Landlock){hint}"

"""Linux namespaces for one command, with ctypes (``unshare``, ``mount``, one ``ioctl``).

* a **PID** namespace whose first process is the command's shell: when it exits, the kernel kills
  whatever is left inside (``setsid``, ``nohup``, double forks: nothing outlives the tool);
* a **mount** namespace, private, where protected paths inside the writable roots (``.pi``,
  ``.claude``, the agent dir...) are bound read-only over themselves, and ``/proc`` is this PID
  namespace's;
* a **network** namespace with only a loopback interface, when the network is off;
* a **user** namespace first when pi-host is not root, so that the others need no privilege.

Every function here runs in a forked child between ``fork`` and ``exec`` (see :mod:`.launch`):
no imports, no threads, only system calls on prepared data.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import struct
from functools import cache

try:
    import fcntl
except ImportError:  # Windows: the sandbox says it is not available before anything here runs
    fcntl = None  # type: ignore[assignment]

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
# statvfs f_flag bits that a read-only remount must keep (a user namespace may not drop them);
# the names exist on POSIX systems only (this module is imported on every platform)
_KEEP = tuple(
    (getattr(os, name, 0), flag)
    for name, flag in (
        ("ST_NOSUID", MS_NOSUID),
        ("ST_NODEV", MS_NODEV),
        ("ST_NOEXEC", MS_NOEXEC),
        ("ST_NOATIME", MS_NOATIME),
        ("ST_NODIRATIME", MS_NODIRATIME),
        ("ST_RELATIME", MS_RELATIME),
    )
)

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


@cache
def _lib() -> ctypes.CDLL:
    """libc, with the argument types of the calls made here (loaded on first use)."""
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    lib.setns.argtypes = [ctypes.c_int, ctypes.c_int]
    return lib


class NamespaceError(OSError):
    pass


def warm() -> None:
    """Load libc in the parent, so a forked child finds it ready."""
    _lib()


def _check(result: int, step: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise NamespaceError(code, f"{step}: {os.strerror(code)}")


def unshare(flags: int, uid: int, gid: int) -> None:
    """Enter new namespaces; with ``CLONE_NEWUSER`` map our own ids so files keep their owner."""
    _check(_lib().unshare(flags), "unshare")
    if flags & CLONE_NEWUSER:
        _write("/proc/self/setgroups", b"deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1".encode())
        _write("/proc/self/gid_map", f"{gid} {gid} 1".encode())


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def make_private() -> None:
    """Mounts made from now on stay in this namespace."""
    _check(_lib().mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")


def bind_read_only(path: bytes, keep: int) -> None:
    """Bind ``path`` over itself, then remount that bind read-only (``keep``: the flags of the
    mount it lives on, from :func:`mount_flags`)."""
    _check(_lib().mount(path, path, None, MS_BIND | MS_REC, None), f"bind {path.decode(errors='replace')}")
    _check(
        _lib().mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, None),
        f"remount {path.decode(errors='replace')} read-only",
    )


def mount_flags(path: str) -> int:
    """The flags of the mount ``path`` is on, as ``mount(2)`` wants them (read in the parent)."""
    found = os.statvfs(path).f_flag
    return sum(ms for st, ms in _KEEP if found & st)


def mount_proc() -> None:
    """A ``/proc`` of this PID namespace (the shell sees its own processes only)."""
    _check(_lib().mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")


def loopback_up() -> None:
    """A new network namespace has ``lo`` down: bring it up so local servers still work."""
    assert fcntl is not None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def setns(fd: int, nstype: int) -> None:
    """Join the namespace ``fd`` refers to (an open ``/proc/<pid>/ns/<kind>``)."""
    _check(_lib().setns(fd, nstype), "setns")


class Network:
    """One network namespace (with ``lo`` up) kept for a whole session and joined by every command:
    creating and destroying one per command is what costs the most when commands follow each other
    (the kernel tears namespaces down asynchronously, and a new one waits for that). Held by open
    descriptors of a short-lived child's namespaces; without root, its user namespace is kept too,
    since joining the network namespace needs its capabilities."""

    def __init__(self) -> None:
        self.user_fd = -1
        self.net_fd = -1
        flags = CLONE_NEWNET | (CLONE_NEWUSER if os.geteuid() != 0 else 0)
        uid, gid = os.getuid(), os.getgid()
        ready_read, ready_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(ready_read)
                unshare(flags, uid, gid)
                loopback_up()
                os.write(ready_write, b"k")
                while True:
                    signal.pause()  # until the parent, holding our namespaces open, kills us
            except BaseException:  # noqa: BLE001 (a forked child never returns)
                pass
            os._exit(1)
        os.close(ready_write)
        try:
            if os.read(ready_read, 1) != b"k":
                raise NamespaceError(0, "could not create a network namespace")
            if flags & CLONE_NEWUSER:
                self.user_fd = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
            self.net_fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            os.close(ready_read)
            os.kill(pid, 9)
            os.waitpid(pid, 0)

    def join(self) -> None:
        """In a command's child: enter the kept namespaces (the user one first)."""
        if self.user_fd >= 0:
            setns(self.user_fd, CLONE_NEWUSER)
        setns(self.net_fd, CLONE_NEWNET)

    def close(self) -> None:
        for fd in (self.user_fd, self.net_fd):
            if fd >= 0:
                os.close(fd)
        self.user_fd = self.net_fd = -1

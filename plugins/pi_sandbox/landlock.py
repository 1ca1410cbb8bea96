"""Landlock (Linux ≥ 5.13) through its three system calls, with ctypes: no dependency.

A ruleset names the kinds of access it *handles*; everything handled is denied except beneath the
paths (and TCP ports) a rule grants. The sandbox handles writes only, so reads stay free, and
grants them beneath the writable roots. ``restrict_self`` applies the ruleset to the calling thread
and, through ``fork`` and ``exec``, to everything it starts; nothing can lift it afterwards.

What each ABI version adds (the kernel reports the highest it supports):
1 files · 2 ``REFER`` (links and renames across folders) · 3 ``TRUNCATE`` · 4 TCP bind/connect
· 5 device ioctls · 6 scopes (signals and abstract unix sockets stay inside the sandbox).
"""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass, field

# System call numbers: the same in the generic table (arm64, riscv...) and on x86-64.
_NUMBERS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446), "riscv64": (444, 445, 446)}
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

WRITE_ACCESS_V1 = (
    FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_CHAR
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_BLOCK
    | FS_MAKE_SYM
)
FILE_ONLY_ACCESS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE
"""The rights a rule on a file (not a folder) may grant."""

PR_SET_NO_NEW_PRIVS = 38


class LandlockError(OSError):
    """Landlock refused a step (the message names it and the errno)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


_libc: ctypes.CDLL | None = None


def _syscall() -> ctypes._CFuncPtr:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.syscall


def warm() -> None:
    """Load libc in the parent, so a forked child finds it ready."""
    _syscall()


def abi_version() -> int:
    """The Landlock ABI this kernel offers; 0 when it has none (too old, disabled, not Linux)."""
    numbers = _NUMBERS.get(platform.machine())
    if numbers is None or not platform.system() == "Linux":
        return 0
    result = _syscall()(
        ctypes.c_long(numbers[0]), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
    )
    return max(0, int(result))


def write_access(abi: int) -> int:
    """Every write-like right this ABI knows."""
    access = WRITE_ACCESS_V1
    if abi >= 2:
        access |= FS_REFER
    if abi >= 3:
        access |= FS_TRUNCATE
    return access


@dataclass
class Ruleset:
    """What to allow, prepared in the parent (paths opened, structs built) so that the child
    only has to make four system calls between ``fork`` and ``exec``."""

    abi: int
    writable: list[str] = field(default_factory=list)
    """Folders (or files) beneath which writing is allowed."""
    writable_files: list[str] = field(default_factory=list)
    """Single files that may be written but not replaced (``/dev/null``...)."""
    network: str = "on"
    """``on`` (not handled), ``off`` (no TCP at all) or ``ports`` (only ``ports``)."""
    ports: list[int] = field(default_factory=list)
    scope: bool = True
    """ABI 6: signals and abstract unix sockets do not leave the sandbox."""

    def build(self) -> int:
        """Create the ruleset and add the rules; returns its file descriptor (close-on-exec)."""
        numbers = _NUMBERS[platform.machine()]
        syscall = _syscall()
        access = write_access(self.abi)
        attr = _RulesetAttr(handled_access_fs=access)
        size = 8
        if self.network != "on" and self.abi >= 4:
            attr.handled_access_net = NET_CONNECT_TCP | (NET_BIND_TCP if self.network == "off" else 0)
            size = 16
        if self.scope and self.abi >= 6:
            attr.scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET
            size = 24
        fd = syscall(ctypes.c_long(numbers[0]), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise _error("landlock_create_ruleset")
        try:
            for path in self.writable:
                self._add_path(fd, path, access)
            for path in self.writable_files:
                self._add_path(fd, path, access & FILE_ONLY_ACCESS)
            if self.network == "ports" and self.abi >= 4:
                for port in self.ports:
                    rule = _NetPortAttr(allowed_access=NET_CONNECT_TCP, port=port)
                    if (
                        syscall(
                            ctypes.c_long(numbers[1]),
                            ctypes.c_int(fd),
                            ctypes.c_int(RULE_NET_PORT),
                            ctypes.byref(rule),
                            ctypes.c_uint32(0),
                        )
                        < 0
                    ):
                        raise _error(f"landlock_add_rule(port {port})")
        except BaseException:
            os.close(fd)
            raise
        os.set_inheritable(fd, False)
        return fd

    @staticmethod
    def _add_path(fd: int, path: str, access: int) -> None:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a root that does not exist (yet) grants nothing
        try:
            if not os.path.isdir(path):
                access &= FILE_ONLY_ACCESS
            rule = _PathBeneathAttr(allowed_access=access, parent_fd=target)
            numbers = _NUMBERS[platform.machine()]
            if (
                _syscall()(
                    ctypes.c_long(numbers[1]),
                    ctypes.c_int(fd),
                    ctypes.c_int(RULE_PATH_BENEATH),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
                < 0
            ):
                raise _error(f"landlock_add_rule({path})")
        finally:
            os.close(target)


def restrict_self(ruleset_fd: int) -> None:
    """Apply the ruleset to this thread (and all it starts). Sets no-new-privileges first, which
    Landlock requires of a process without CAP_SYS_ADMIN and which also disarms setuid programs."""
    _syscall()
    libc = _libc
    assert libc is not None
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _error("prctl(PR_SET_NO_NEW_PRIVS)")
    numbers = _NUMBERS[platform.machine()]
    if _syscall()(ctypes.c_long(numbers[2]), ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)) < 0:
        raise _error("landlock_restrict_self")


def _error(step: str) -> LandlockError:
    code = ctypes.get_errno()
    return LandlockError(code, f"{step} failed: {os.strerror(code)}")

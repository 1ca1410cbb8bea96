"""Starting one command inside the sandbox: the function that runs in the child
:class:`subprocess.Popen` forks (Landlock and namespaces), or a ``bwrap`` command line.

The Landlock path (the child is already in a session of its own, its output on the tool's pipe)::

    A  join the session's network namespace (network off) · unshare(user?, mount, pid)
    │  · protected paths bound read-only · waits for B, exits with its status
    └─ B  PID 1 of the new namespace: its own /proc · Landlock · reaps orphans
       └─ C  the shell, started with posix_spawn (a vfork: no third copy of pi-host)

When C exits, B says how many processes it left running and exits; the kernel then kills
everything left in the namespace, so nothing outlives the command. Without namespaces (a kernel
or policy that forbids them) A is a child subreaper instead: it starts C, waits for it, then kills
every process that was re-parented to it.

A failure in the child is written to the command's output as one line and the command exits 126,
so the tool reports it instead of hanging or dying with a bare traceback.
"""

from __future__ import annotations

import ctypes
import gc
import os
import shutil
import signal
from dataclasses import dataclass, field
from typing import Any

from pi_sandbox import landlock, namespaces
from pi_sandbox.policy import DEVICES, Policy, prepare_protected

PR_SET_CHILD_SUBREAPER = 36
FAILED = 126
NEEDED = namespaces.CLONE_NEWNS | namespaces.CLONE_NEWPID


@dataclass
class Capabilities:
    """What this machine offers, probed once (:mod:`.probe`)."""

    landlock_abi: int = 0
    namespaces: bool = False
    bwrap: str | None = None
    platform: str = "linux"


@dataclass
class Plan:
    """One command's sandbox, prepared in the parent."""

    policy: Policy
    caps: Capabilities
    ns_flags: int = 0
    network: namespaces.Network | None = None
    """The session's network namespace, joined instead of making one (network off)."""
    protected: list[tuple[bytes, int]] = field(default_factory=list)
    ruleset_fd: int = -1


def landlock_network(policy: Policy, caps: Capabilities, use_netns: bool) -> str:
    """How Landlock should treat TCP: not at all when a network namespace cuts everything."""
    if policy.network == "on" or (policy.network == "off" and use_netns):
        return "on"
    if caps.landlock_abi < 4:
        return "on"  # nothing to enforce with; the caller reported it
    return policy.network


def wants_netns(policy: Policy, caps: Capabilities) -> bool:
    return caps.namespaces and (
        policy.network == "off" or (policy.network == "ports" and caps.landlock_abi < 4)
    )


def prepare(policy: Policy, caps: Capabilities, network: namespaces.Network | None = None) -> Plan:
    """``network``: the session's kept network namespace when :func:`wants_netns` (else one is
    made for the command)."""
    plan = Plan(policy=policy, caps=caps)
    use_netns = wants_netns(policy, caps)
    if caps.namespaces:
        plan.ns_flags = namespaces.CLONE_NEWNS | namespaces.CLONE_NEWPID
        if use_netns and network is not None:
            plan.network = network  # its user namespace (without root) comes with it
        else:
            if use_netns:
                plan.ns_flags |= namespaces.CLONE_NEWNET
            if os.geteuid() != 0:
                plan.ns_flags |= namespaces.CLONE_NEWUSER
        if policy.mode == "workspace-write":
            plan.protected = [(os.fsencode(p), namespaces.mount_flags(p)) for p in prepare_protected(policy)]
    writable = [] if policy.mode == "read-only" else list(policy.writable_roots)
    ruleset = landlock.Ruleset(
        abi=caps.landlock_abi,
        writable=writable,
        writable_files=[d for d in DEVICES if os.path.exists(d)],
        network=landlock_network(policy, caps, use_netns),
        ports=list(policy.ports),
    )
    plan.ruleset_fd = ruleset.build()
    return plan


def preexec(plan: Plan, argv: list[str], env: dict[str, str]) -> Any:
    """The function :class:`subprocess.Popen` runs in its child (A). It never returns: the shell
    is started with ``posix_spawn`` (a ``vfork``, far cheaper than forking pi-host once more) by
    the process that will wait for it, and A exits with the shell's status."""
    if plan.ns_flags and plan.ns_flags & NEEDED != NEEDED:
        # Mounting /proc or binding paths outside a mount namespace of our own would change the
        # whole machine's mounts: never start without both.
        raise ValueError("a sandbox with namespaces needs its own mount and PID namespaces")
    program = shutil.which(argv[0], path=env.get("PATH")) if "/" not in argv[0] else argv[0]
    if program is None:
        raise FileNotFoundError(f"Cannot run the shell: {argv[0]} not found")
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)  # bound now: nothing is looked up after fork
    namespaces.warm()
    landlock.warm()
    restrict = landlock.restrict_self
    write, _exit = os.write, os._exit
    fork = libc.fork  # this child has one thread: Python's fork bookkeeping has nothing to do

    def spawn() -> int:
        os.close(plan.ruleset_fd)
        os.closerange(3, 1 << 20)  # what Popen's close_fds would have done before exec
        return os.posix_spawn(program, argv, env)

    def child() -> None:
        # A collection here would walk pi-host's heap and copy the pages it touches (copy-on-write);
        # this child lives for one command.
        gc.disable()
        step = "start"
        try:
            if plan.ns_flags:
                step = "namespaces"
                if plan.network is not None:
                    plan.network.join()
                namespaces.unshare(plan.ns_flags, uid, gid)
                namespaces.make_private()
                for path, keep in plan.protected:
                    namespaces.bind_read_only(path, keep)
                if plan.ns_flags & namespaces.CLONE_NEWNET:
                    namespaces.loopback_up()
                pid = fork()
                if pid < 0:
                    raise OSError(ctypes.get_errno(), "fork failed")
                if pid:
                    _wait_and_exit(pid, reap_all=False)
                step = "/proc"
                namespaces.mount_proc()
                step = "landlock"
                restrict(plan.ruleset_fd)
                step = "starting the shell"
                _init(spawn())
            else:
                step = "subreaper"
                if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
                step = "landlock"
                restrict(plan.ruleset_fd)
                step = "starting the shell"
                _wait_and_exit(spawn(), reap_all=True)
        except BaseException as exc:  # noqa: BLE001 (nothing may escape a forked child)
            write(2, f"pi-host sandbox: could not start the command ({step}: {exc})\n".encode())
        _exit(FAILED)

    return child


def _close_all() -> int:
    """Drop every descriptor (the output pipe, Popen's error pipe) so that only the command
    holds them: the parent learns of the exec and of the end of output from the command alone.
    Returns a copy of the output, kept to say what was stopped (closed before exiting)."""
    out = os.dup(1)
    os.closerange(0, out)
    os.closerange(out + 1, 1 << 20)
    return out


def _report(out: int, stopped: int) -> None:
    if stopped:
        noun = "process" if stopped == 1 else "processes"
        os.write(
            out,
            f"\n[sandbox: stopped {stopped} {noun} the command left running; nothing outlives a command]\n".encode(),
        )


def _code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _wait_and_exit(child: int, reap_all: bool) -> None:
    """A: wait for ``child`` (and, as a subreaper, whatever is re-parented meanwhile); then, as
    a subreaper, kill every process left; exit with the child's status. Never returns."""
    out = _close_all()
    code = FAILED
    try:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                code = _code(status)
                break
        stopped: set[int] = set()
        while reap_all:
            for pid in _children():
                stopped.add(pid)
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        _report(out, len(stopped))
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code)


def _children() -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                found += [int(p) for p in handle.read().split()]
    except OSError:
        pass
    return found


def _init(child: int) -> None:
    """B, PID 1 of the namespace: reap orphans until the shell exits, then exit with its status
    (the kernel then kills the rest of the namespace). Never returns."""
    out = _close_all()
    code = FAILED
    try:
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                code = _code(status)
                break
        _report(out, _left_running())
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code)


def _left_running() -> int:
    """Processes still alive in this PID namespace besides its init (zombies reaped first)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit() and entry != "1":
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if handle.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                        count += 1
            except (OSError, IndexError):
                pass
    return count


def bwrap_argv(bwrap: str, policy: Policy, argv: list[str]) -> list[str]:
    """The same rules with bubblewrap (no Landlock): the whole tree read-only, the writable roots
    bound read-write over it, the protected paths read-only again, fresh /dev, /proc and PIDs."""
    out = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    if policy.network != "on":
        out.append("--unshare-net")  # bwrap has no port allowlist: a list means no network here
    if policy.mode == "workspace-write":
        for root in policy.writable_roots:
            if os.path.isdir(root) and root not in ("/dev", "/proc"):
                out += ["--bind", root, root]
        for path in prepare_protected(policy):
            out += ["--ro-bind", path, path]
    if os.path.isdir("/dev/shm") and policy.mode == "workspace-write":
        out += ["--tmpfs", "/dev/shm"]
    return [*out, "--chdir", policy.cwd, "--", *argv]

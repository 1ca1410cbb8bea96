"""A real terminal for end-to-end tests: a program running in a detached tmux pane.

    with Terminal([sys.executable, "-c", "print(input('name? '))"], env={...}, cwd=tmp) as term:
        term.wait_for("name?")
        term.send("Ada")
        term.press("Enter")
        assert term.wait_exit() == 0

Every :class:`Terminal` starts its own tmux server on a private socket in a temporary directory
(``tmux -S <tmp>/tmux.sock -f <tmp>/tmux.conf``): the user's tmux server and ``~/.tmux.conf``
are never touched. The server is configured for programs like pi (see pi's ``docs/tmux.md``):
extended keys on (so ``S-Enter``/``C-Enter``/``M-Enter`` reach the program as distinct keys),
no status line (the pane is exactly ``width`` x ``height``), ``escape-time 0``, a long history
and ``remain-on-exit`` (the pane and its last screen stay readable after the program exits).

The program runs through a small ``/bin/sh`` wrapper script, ``env -i K=V ... argv`` followed by
``echo $? > status``: the program gets exactly ``env`` (plus ``TERM=xterm-256color`` unless
``env`` sets ``TERM``), not the tmux server's environment, and its exit status is read from that
file (tmux 3.3's own ``#{pane_dead_status}`` is unreliable: now and then the server never reaps
the child). As in any shell, a program killed by signal N exits with status 128 + N. The wrapper
traps (not ignores) INT/QUIT/TERM, so the program still gets default signal handling but the
wrapper survives a C-c to write the status. :attr:`pid` is the program's process id.

API: ``send(text)`` (literal), ``press(*keys)`` (tmux key names), ``paste(text)``,
``resize(w, h)``, ``screen(ansi=False, joined=False)``, ``scrollback(...)``, ``cursor()``,
``raw_mode()``, ``wait_for(pattern, timeout=15, scrollback=True)``, ``wait_gone(pattern)``,
``wait_until(predicate)``, ``exit_status()``, ``wait_exit(timeout)``, ``alive``, ``pid``,
``tmux(*args)`` (any tmux command on this server), ``close()`` / context manager; module
helpers ``tmux_available()``, ``cpu_seconds(pid)`` (process tree), ``descendants(pid)``.
``config`` appends lines to the generated tmux.conf.

Commands go through one tmux control-mode client (``tmux -C attach``) kept open for the life of
the terminal, so a ``capture-pane`` costs tens of microseconds instead of spawning a tmux client
process (about 2-3 ms each); :meth:`screen` can therefore be polled every few milliseconds. The
control client has no size of its own and does not resize the window; pane output notifications
are switched off (``refresh-client -f no-output``).
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

TMUX = shutil.which("tmux") or "/usr/bin/tmux"

CONFIG = """\
set -g default-terminal xterm-256color
set -g status off
set -g remain-on-exit on
set -g history-limit 100000
set -g default-size {width}x{height}
set -s escape-time 0
set -s extended-keys on
set -g focus-events off
set -g allow-rename off
set -g automatic-rename off
"""


def pi_env(home: os.PathLike[str] | str, agent: os.PathLike[str] | str, **extra: str) -> dict[str, str]:
    """The environment a terminal test runs ``pi`` in: a temporary home and agent dir, a
    256-colour UTF-8 terminal, no telemetry, this checkout on ``PYTHONPATH``."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PI_TELEMETRY": "0",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    env.update(extra)
    return env


def tmux_available() -> bool:
    """True when a usable tmux (3.2 or newer: control-mode flags, extended keys) is installed."""
    try:
        out = subprocess.run([TMUX, "-V"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    match = re.search(r"(\d+)\.(\d+)", out)
    return bool(match) and (int(match[1]), int(match[2])) >= (3, 2)


class TmuxError(RuntimeError):
    pass


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (field 3, the state, is index 0)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            raw = handle.read()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def child_pids(pid: int) -> list[int]:
    """Direct children of ``pid`` (scans ``/proc``), oldest first."""
    children = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields is not None and int(fields[1]) == pid:
                children.append((int(fields[19]), int(name)))
    return [child for _, child in sorted(children)]


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields is not None:
                parents.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


def cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of ``pid`` and its live descendants, plus the children they have
    already waited for (``cutime``/``cstime``)."""
    ticks = 0
    for process in descendants(pid):
        fields = _stat_fields(process)
        if fields is not None:
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


class _Control:
    """One ``tmux -C attach`` client: commands in on stdin, ``%begin``/``%end`` blocks out."""

    def __init__(self, base: list[str], session: str) -> None:
        self.proc = subprocess.Popen(
            [*base, "-C", "attach-session", "-t", session],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.blocks: queue.Queue[tuple[bool, list[bytes]] | None] = queue.Queue()
        self.lock = threading.Lock()
        self.exited = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        self._take(10)  # the block answering the attach itself

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        current: list[bytes] | None = None
        number = b""
        for line in stdout:
            if current is None:
                if line.startswith(b"%begin "):
                    current, number = [], line.split()[2]
                elif line.startswith(b"%exit"):
                    self.exited.set()
                continue  # other notifications (%session-changed, %window-add...) are ignored
            parts = line.split()
            if len(parts) >= 3 and parts[0] in (b"%end", b"%error") and parts[2] == number:
                self.blocks.put((parts[0] == b"%end", current))
                current = None
            else:
                current.append(line)
        self.exited.set()
        self.blocks.put(None)

    def _take(self, timeout: float) -> tuple[bool, list[bytes]]:
        try:
            block = self.blocks.get(timeout=timeout)
        except queue.Empty:
            raise TmuxError("tmux control client did not answer") from None
        if block is None:
            self.blocks.put(None)
            raise TmuxError("tmux control client exited")
        return block

    def run(self, args: Sequence[str], timeout: float = 10) -> bytes:
        line = " ".join(_quote(arg) for arg in args).encode() + b"\n"
        with self.lock:
            if self.exited.is_set():
                raise TmuxError("tmux control client exited")
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except OSError as exc:
                raise TmuxError(f"tmux control client: {exc}") from None
            ok, lines = self._take(timeout)
        output = b"".join(lines)
        if not ok:
            raise TmuxError(f"tmux {' '.join(args)}: {output.decode(errors='replace').strip()}")
        return output

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _quote(arg: str) -> str:
    """Quote one argument for the tmux command parser (control mode reads command lines)."""
    if "\n" in arg or "\r" in arg:
        raise ValueError("a tmux control-mode command cannot contain a line break")
    if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


class Terminal:
    """``argv`` running in a fresh detached tmux session of ``width`` x ``height`` cells."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        width: int = 100,
        height: int = 30,
        config: str = "",
    ) -> None:
        if not argv:
            raise ValueError("argv is empty")
        self.argv = [str(arg) for arg in argv]
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("TERM", "xterm-256color")
        self.cwd = str(cwd or os.getcwd())
        self.width, self.height = width, height
        self.dir = tempfile.mkdtemp(prefix="pi-term-")
        if len(self.dir) > 80:  # a unix socket path is limited to 107 bytes
            shutil.rmtree(self.dir)
            self.dir = tempfile.mkdtemp(prefix="pi-term-", dir="/tmp")
        self.socket = os.path.join(self.dir, "tmux.sock")
        conf = os.path.join(self.dir, "tmux.conf")
        with open(conf, "w") as handle:
            handle.write(CONFIG.format(width=width, height=height) + config)
        wrapper = os.path.join(self.dir, "run.sh")
        self._status_file = os.path.join(self.dir, "status")
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in self.env.items() if "=" not in k)
        with open(wrapper, "w") as handle:
            handle.write(
                "#!/bin/sh\n"
                "trap : INT QUIT TERM\n"
                f"cd {shlex.quote(self.cwd)} || exit 126\n"
                f"/usr/bin/env -i -- {assignments} {' '.join(shlex.quote(a) for a in self.argv)}\n"
                f"echo $? > {shlex.quote(self._status_file)}.tmp\n"
                f"mv {shlex.quote(self._status_file)}.tmp {shlex.quote(self._status_file)}\n"
            )
        os.chmod(wrapper, 0o700)
        self._base = [TMUX, "-S", self.socket, "-f", conf]
        self.session = "t"
        self.target = f"{self.session}:0.0"
        self._control: _Control | None = None
        self._closed = False
        self._tty: str | None = None
        server_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.env.get("HOME", self.dir),
            "TMPDIR": self.dir,
            "LANG": self.env.get("LANG", "C.UTF-8"),
            "LC_ALL": self.env.get("LC_ALL", "C.UTF-8"),
        }
        started = subprocess.run(
            [
                *self._base,
                "-u",
                "new-session",
                "-d",
                "-s",
                self.session,
                "-x",
                str(width),
                "-y",
                str(height),
                "-c",
                self.cwd,
                "/bin/sh " + shlex.quote(wrapper),
            ],
            env=server_env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if started.returncode != 0:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise TmuxError(f"tmux new-session failed: {started.stderr.strip()}")
        try:
            self._control = _Control(self._base, self.session)
            self._control.run(["refresh-client", "-f", "no-output"])
            self.shell_pid = int(self.display("#{pane_pid}"))
            self.pid = self._program_pid()
        except BaseException:
            self.close()
            raise

    # --- tmux plumbing -----------------------------------------------------------------------

    def tmux(self, *args: str, timeout: float = 10) -> str:
        """Run one tmux command on this terminal's server; its output as text."""
        if self._control is None:
            raise TmuxError("terminal is closed")
        return self._control.run(args, timeout=timeout).decode("utf-8", errors="replace")

    def display(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.target, fmt).rstrip("\n")

    # --- input -------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        """Type ``text`` literally (``send-keys -l``; control characters such as ``\\n`` or
        ``\\x1b`` go as raw bytes with ``send-keys -H``). Key names are not interpreted: use
        :meth:`press` for Enter (which sends ``\\r``, not ``\\n``), Escape, C-c..."""
        for run in re.findall(r"[\x00-\x1f\x7f]+|[^\x00-\x1f\x7f]+", text):
            if run[0] < " " or run[0] == "\x7f":
                self.tmux("send-keys", "-t", self.target, "-H", *(f"{ord(c):02x}" for c in run))
            else:
                self.tmux("send-keys", "-t", self.target, "-l", "--", run)

    def press(self, *keys: str) -> None:
        """Press tmux-named keys in order: ``Enter``, ``Escape``, ``C-c``, ``M-Enter``, ``S-Enter``,
        ``BSpace``, ``Up``, ``M-Up``, ``Tab``, ``BTab``, ``PageUp``, ``F1``..."""
        for key in keys:
            self.tmux("send-keys", "-t", self.target, key)

    def paste(self, text: str) -> None:
        """Paste ``text`` as the terminal would (bracketed when the program asked for it)."""
        self.tmux("set-buffer", "-b", "paste", "--", text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "paste", "-t", self.target)

    def resize(self, width: int, height: int) -> None:
        self.tmux("resize-window", "-t", self.session, "-x", str(width), "-y", str(height))
        self.width, self.height = width, height

    # --- output ------------------------------------------------------------------------------

    def screen(self, ansi: bool = False, joined: bool = False) -> str:
        """The visible screen, one line per row (trailing blanks trimmed by tmux); with ``ansi``
        the colours and attributes as escape sequences (``capture-pane -e``); with ``joined``
        lines the program let wrap at the right edge joined back into one (``-J``)."""
        return self.tmux(*self._capture(ansi, joined))

    def scrollback(self, ansi: bool = False, joined: bool = False) -> str:
        """Everything tmux kept: the history that scrolled off the top, then the visible screen."""
        return self.tmux(*self._capture(ansi, joined), "-S", "-")

    def _capture(self, ansi: bool, joined: bool) -> list[str]:
        return [
            "capture-pane",
            "-p",
            "-t",
            self.target,
            *(["-e"] if ansi else []),
            *(["-J"] if joined else []),
        ]

    def raw_mode(self) -> bool:
        """True once the program switched its terminal out of cooked mode (``ICANON`` and
        ``ECHO`` off): from then on the kernel no longer echoes typed keys, the program does."""
        import termios

        if self._tty is None:
            self._tty = self.display("#{pane_tty}")
        try:
            fd = os.open(self._tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            lflag = termios.tcgetattr(fd)[3]
        except termios.error:
            return False
        finally:
            os.close(fd)
        return not lflag & (termios.ICANON | termios.ECHO)

    def cursor(self) -> tuple[int, int]:
        """``(column, row)`` of the cursor, both from 0."""
        x, y = self.display("#{cursor_x} #{cursor_y}").split()
        return int(x), int(y)

    def wait_until(
        self,
        predicate: Callable[[str], Any],
        timeout: float = 15,
        interval: float = 0.03,
        scrollback: bool = False,
        what: str = "condition",
    ) -> str:
        """Poll the screen (or the whole scrollback) until ``predicate(text)`` is truthy; the
        text it accepted. On timeout, or as soon as the program has exited without the condition
        holding on its final screen, an AssertionError with the last screen."""
        deadline = time.monotonic() + timeout
        while True:
            exited = self.exit_status() is not None
            text = self.scrollback() if scrollback else self.screen()
            if predicate(text):
                return text
            if exited or time.monotonic() >= deadline:
                raise AssertionError(
                    f"{'gave up' if exited else f'timed out after {timeout:g} s'} waiting for {what}; "
                    f"{self._state()}last screen:\n{self._framed(self.screen())}"
                )
            time.sleep(interval)

    def wait_for(
        self,
        pattern: str | re.Pattern[str],
        timeout: float = 15,
        interval: float = 0.03,
        scrollback: bool = True,
    ) -> str:
        """Wait until ``pattern`` (a plain substring, or a compiled regex searched with
        ``re.search``) shows up: on the screen, or in the history above it when ``scrollback``
        (the default; pass False to require it on the visible screen). Returns the captured text
        that matched (screen, or history + screen)."""
        if isinstance(pattern, re.Pattern):
            regex = pattern
            matches: Callable[[str], Any] = regex.search
            what = f"/{regex.pattern}/"
        else:
            text = pattern
            matches = lambda screen: text in screen  # noqa: E731
            what = repr(text)
        return self.wait_until(matches, timeout, interval, scrollback, what)

    def wait_for_wrapped(self, text: str, timeout: float = 15) -> str:
        """Wait until ``text`` shows, allowing the terminal to have wrapped it anywhere (a long
        path): compared with all whitespace removed, in the scrollback and the screen."""
        squeezed = "".join(text.split())
        return self.wait_until(
            lambda screen: squeezed in "".join(screen.split()), timeout, 0.03, True, repr(text)
        )

    def wait_gone(self, pattern: str | re.Pattern[str], timeout: float = 15, interval: float = 0.03) -> str:
        """Wait until ``pattern`` is no longer on the visible screen; that screen."""
        if isinstance(pattern, re.Pattern):
            regex = pattern
            return self.wait_until(
                lambda s: not regex.search(s), timeout, interval, what=f"/{regex.pattern}/ gone"
            )
        text = pattern
        return self.wait_until(lambda s: text not in s, timeout, interval, what=f"{text!r} gone")

    # --- process -----------------------------------------------------------------------------

    def exit_status(self) -> int | None:
        """None while the program runs; its exit status once it exited (128 + N: signal N)."""
        try:
            with open(self._status_file) as handle:
                return int(handle.read().strip())
        except (OSError, ValueError):
            return None

    @property
    def alive(self) -> bool:
        return self.exit_status() is None

    def wait_exit(self, timeout: float = 15) -> int:
        """Wait for the program to exit; its exit status (the pane and screen stay readable)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.exit_status()
            if status is not None:
                return status
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"program still running after {timeout:g} s; last screen:\n{self._framed(self.screen())}"
                )
            time.sleep(0.02)

    def close(self) -> None:
        """Kill the program and the private tmux server; remove the temporary directory."""
        if self._closed:
            return
        self._closed = True
        subprocess.run([*self._base, "kill-server"], capture_output=True, timeout=10)
        if self._control is not None:
            self._control.close()
            self._control = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:
                pass

    # --- helpers -----------------------------------------------------------------------------

    def _program_pid(self, timeout: float = 5) -> int:
        """The wrapper shell's child (``env``, which execs the program)."""
        deadline = time.monotonic() + timeout
        while True:
            children = child_pids(self.shell_pid)
            if children:
                return children[0]
            if self.exit_status() is not None or time.monotonic() >= deadline:
                return self.shell_pid
            time.sleep(0.002)

    def _state(self) -> str:
        try:
            status = self.exit_status()
        except TmuxError:
            return "(tmux gone) "
        return "" if status is None else f"program exited with status {status}; "

    def _framed(self, text: str) -> str:
        rows = text.split("\n")
        if rows and rows[-1] == "":
            rows.pop()
        bar = "+" + "-" * self.width + "+"
        return "\n".join([bar, *(f"|{row.ljust(self.width)}|" for row in rows), bar])

"""The JSONL session store: pi's v3 files, append-only, one writer at a time.

* A new session stays in memory until it holds a user or assistant message; then the header and
  every buffered entry are written at once with exclusive create (§6.6), so the first prompt is on
  disk before the first answer.
* Each later entry is one ``os.write`` of a complete line on an ``O_APPEND`` descriptor, right when
  it is appended (no user-space buffer). A write that fails half-way is cut back off the file so a
  torn line never sits in front of later entries.
* The file is locked (``flock``, exclusive) for as long as the store is open: a second pi-host
  process opening the same session gets a clear error instead of growing a second leaf in it.
* Before each append the path is checked against the open file: one deleted, cut short or replaced
  by another program is written again whole at the path, with one line saying so (:mod:`.guard`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_host.lib.sessions.store import (
    SESSION_VERSION,
    SessionOpenError,
    SessionWriteError,
    TreeStore,
    new_header,
    stderr_warn,
)
from pi_host.lib.sessions.stubs import Stubs
from pi_host.lib.sessions.tree import fresh_id
from pi_host.lib.sessions.validate import EntrySource
from pi_session_jsonl import jsonl
from pi_session_jsonl.files import NotARegularFile, open_regular
from pi_session_jsonl.paths import ensure_dir, session_file_name

if TYPE_CHECKING:
    from pi_session_jsonl.reading import StubFile

FILE_MODE = 0o600


def _lock(fd: int, path: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionOpenError(
            f"Session file is in use by another pi-host process: {path} (use --fork to continue it as a copy)"
        ) from None
    except OSError as exc:
        # Some network filesystems have no flock; appends are still whole-line writes.
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            os.close(fd)
            raise SessionOpenError(f"Cannot lock session file {path}: {exc.strerror}") from None


class JsonlStore(TreeStore):
    def __init__(
        self,
        cwd: str,
        session_dir: str,
        *,
        header: dict[str, Any] | None = None,
        entries: list[dict[str, Any]] | None = None,
        session_id: str | None = None,
        path: str | None = None,
        fd: int | None = None,
        warn: Callable[[str], None] | None = None,
        source: EntrySource | None = None,
        stubs: Stubs | None = None,
        stub_file: StubFile | None = None,
    ) -> None:
        super().__init__(
            cwd, session_id, header=header, entries=entries, warn=warn, source=source, stubs=stubs
        )
        self.session_dir = session_dir
        self.session_file = path or os.path.join(
            session_dir, session_file_name(self.header["timestamp"], self.session_id)
        )
        self._fd = fd
        self._flushed = fd is not None
        self._stub_file = stub_file
        self._rewrite_failed = False
        # The file's size after our last write: a smaller file was cut short by someone else.
        self._written = os.fstat(fd).st_size if fd is not None else 0

    # --- opening ------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: str,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        path: str | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> JsonlStore:
        """A new session; its file appears with the first user/assistant message."""
        store = cls(cwd, session_dir, session_id=session_id, path=path, warn=warn)
        if parent_session:
            store.header["parentSession"] = parent_session
        return store

    @classmethod
    def open_file(
        cls,
        path: str,
        cwd: str | None = None,
        session_dir: str | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> JsonlStore:
        """Open an existing file (or start a new session at that exact path when it is missing).

        The session's cwd is the one in the file's header; ``cwd`` is for new files only.
        """
        path = os.path.abspath(path)
        cwd = os.path.abspath(cwd or os.getcwd())
        session_dir = session_dir or os.path.dirname(path)
        if not os.path.lexists(path):
            return cls.create(cwd, session_dir, path=path, warn=warn)
        if not os.path.exists(path):
            raise SessionOpenError(f"Cannot open session {path}: it is a broken symbolic link")
        fd = _open_for_append(path)
        _lock(fd, path)
        try:
            return cls._load(fd, path, cwd, session_dir, warn)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def _load(
        cls, fd: int, path: str, cwd: str, session_dir: str, warn: Callable[[str], None] | None
    ) -> JsonlStore:
        # (A file in /proc says size 0 and has content: only a file that reads empty is empty.)
        if os.fstat(fd).st_size == 0 and not os.pread(fd, 1, 0):
            # An existing empty file becomes a new session at that path (§6.7).
            store = cls(cwd, session_dir, path=path, fd=fd, warn=warn)
            try:
                store._write(jsonl.encode(store.header))
            except SessionWriteError as exc:
                store._fd = None
                raise SessionOpenError(str(exc)) from None
            return store
        # (Imported here: a --no-session run imports this module but reads no file.)
        from pi_session_jsonl.reading import read_session, warn_long_lines

        try:
            loaded = read_session(fd, path, stubs=True)
        except jsonl.BadSessionFile as exc:
            raise SessionOpenError(str(exc)) from None
        except OSError as exc:
            raise SessionOpenError(f"Cannot read session file {path}: {exc.strerror}") from None
        if loaded.header is None:
            raise SessionOpenError(f"Not a pi session file (no session header): {path}")
        store_warn = warn or stderr_warn
        jsonl.warn_malformed(loaded, path, store_warn)
        warn_long_lines(loaded, store_warn)
        old_version = loaded.version
        # Migration sees every parsed entry, usable or not, and the rewrite keeps them all; the
        # tree leaves the unusable ones out afterwards (TreeStore), so nothing else is rewritten.
        if jsonl.migrate(loaded, fresh_id):
            fd = _rewrite_migrated(fd, path, loaded, old_version)
            label = jsonl.version_label(old_version)
            store_warn(f"migrated {path} from session format {label} to v{SESSION_VERSION}")
            loaded.rewritten(path)
        elif loaded.missing_final_newline:
            try:
                jsonl.write_all(fd, b"\n")  # later appends must start on a fresh line
            except OSError as exc:
                loaded.close()
                raise SessionOpenError(f"Cannot write to session file {path}: {exc.strerror}") from None
        header_cwd = loaded.header.get("cwd")
        if isinstance(header_cwd, str) and header_cwd:
            cwd = header_cwd
        return cls(
            cwd,
            session_dir,
            header=loaded.header,
            entries=loaded.entries,
            path=path,
            fd=fd,
            warn=warn,
            source=loaded,
            stubs=loaded.stubs,
            stub_file=loaded.file,
        )

    # --- writing ------------------------------------------------------------------------------

    def _persist(self, entry: dict[str, Any]) -> None:
        if not self._flushed:
            if not self._needs_file(entry):
                return
            self._create_file()
            return
        self._write(jsonl.encode(entry), entry)

    def _needs_file(self, entry: dict[str, Any]) -> bool:
        message = entry.get("message") if entry["type"] == "message" else None
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            return True
        return self.tree.has_conversation()

    def _create_file(self) -> None:
        assert self.session_file is not None
        try:
            ensure_dir(os.path.dirname(self.session_file))
        except OSError as exc:
            raise SessionWriteError(
                f"Cannot create session directory {os.path.dirname(self.session_file)}: {exc.strerror}"
            ) from None
        data = b"".join([jsonl.encode(self.header), *(jsonl.encode(e) for e in self.tree.entries())])
        try:
            # (Readable too: a file deleted under us is copied back from this descriptor.)
            fd = os.open(self.session_file, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, FILE_MODE)
        except FileExistsError:
            raise SessionWriteError(
                f"Session file already exists, not overwriting it: {self.session_file}"
            ) from None
        except OSError as exc:
            raise SessionWriteError(
                f"Cannot create session file {self.session_file}: {exc.strerror}"
            ) from None
        _lock(fd, self.session_file)
        self._fd = fd
        try:
            jsonl.write_all(fd, data)
        except OSError as exc:
            os.close(fd)
            self._fd = None
            os.unlink(self.session_file)
            raise SessionWriteError(
                f"Cannot write session file {self.session_file}: {exc.strerror}"
            ) from None
        self._written = len(data)
        self._flushed = True

    def _write(self, data: bytes, entry: dict[str, Any] | None = None) -> None:
        """Append ``data`` (the line of ``entry``, already in the tree, when it is one)."""
        fd = self._fd
        if fd is None:
            raise SessionWriteError(f"Session file is closed: {self.session_file}")
        fd = self._check_file(fd, entry)
        size = -1
        try:
            size = os.fstat(fd).st_size
            jsonl.write_all(fd, data)
            self._written = size + len(data)
        except OSError as exc:
            if size >= 0:
                try:
                    os.ftruncate(fd, size)  # never leave a torn line in front of later entries
                except OSError:
                    pass
            raise SessionWriteError(
                f"Cannot write to session file {self.session_file}: {exc.strerror}"
            ) from None

    def _check_file(self, fd: int, entry: dict[str, Any] | None) -> int:
        """The descriptor to append to: this one, or, when the path no longer names the file it
        writes (deleted, cut short, replaced), a new file holding the whole session there."""
        from pi_session_jsonl import guard

        path = self.session_file
        assert path is not None
        try:
            problem = guard.what_changed(path, fd, self._written)
        except OSError:
            return fd  # cannot tell (a folder became unreadable): append as before
        if problem is None:
            return fd

        def written() -> list[dict[str, Any]]:
            return [each for each in self.tree.entries() if each is not entry]  # (not yet written)

        try:
            rewritten = guard.write_again(path, fd, self._written, problem, self.header, written)
        except OSError as exc:
            # Keep the session running on the file still open (tried again at the next append);
            # said once, not at every append.
            if not self._rewrite_failed:
                self._rewrite_failed = True
                self.warn(
                    f"session file {path} was {problem} while the session was running and cannot be "
                    f"written again ({exc.strerror}); still writing to the file it was"
                )
            return fd
        self._rewrite_failed = False
        self._fd, self._written = rewritten.fd, rewritten.size
        os.close(fd)
        self.warn(guard.message(path, problem, rewritten))
        return rewritten.fd

    @property
    def is_persisted(self) -> bool:
        """True once the file exists on disk."""
        return self._flushed

    def close(self) -> None:
        stub_file, self._stub_file = getattr(self, "_stub_file", None), None
        if stub_file is not None:
            stub_file.close()
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        os.close(fd)  # closing the descriptor releases the lock

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # --- fork / clone -------------------------------------------------------------------------

    def _switch_file(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        self.close()
        self.header = header
        self.session_id = header["id"]
        self.session_file = os.path.join(
            self.session_dir, session_file_name(header["timestamp"], self.session_id)
        )
        self._flushed = False
        self.tree.load(entries)
        if self.tree.has_conversation():
            self._create_file()


def _open_for_append(path: str) -> int:
    try:
        return open_regular(path, os.O_RDWR | os.O_APPEND)
    except NotARegularFile as exc:
        raise SessionOpenError(f"Cannot open session {path}: it is {exc.kind}, not a regular file") from None
    except PermissionError:
        raise SessionOpenError(f"Session file is not writable (permission denied): {path}") from None
    except OSError as exc:
        raise SessionOpenError(f"Cannot open session file {path}: {exc.strerror}") from None


def _rewrite_migrated(fd: int, path: str, loaded: jsonl.LoadedFile, old_version: float) -> int:
    """Write the migrated file atomically, keeping the original as ``<file>.v<N>.bak``."""
    backup = f"{path}.{jsonl.version_label(old_version)}.bak"
    try:
        if os.path.exists(backup):
            os.unlink(backup)
        try:
            os.link(path, backup)
        except OSError:
            shutil.copy2(path, backup)
        mode = os.fstat(fd).st_mode & 0o777
        jsonl.write_atomic(path, loaded.header or {}, loaded.entries, mode)
    except OSError as exc:
        raise SessionOpenError(f"Cannot migrate session file {path}: {exc.strerror}") from None
    new_fd = _open_for_append(path)
    try:
        fcntl.flock(new_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(new_fd)
        raise SessionOpenError(f"Session file is in use by another pi-host process: {path}") from None
    os.close(fd)
    return new_fd


def fork_file(
    source: str,
    cwd: str,
    session_dir: str,
    session_id: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> JsonlStore:
    """Copy a session into a new file for ``cwd`` (new id, ``parentSession`` = source, §6.8)."""
    source = os.path.abspath(source)
    try:
        fd = open_regular(source, os.O_RDONLY)
    except NotARegularFile as exc:
        raise SessionOpenError(f"Cannot fork {source}: it is {exc.kind}, not a regular file") from None
    except OSError as exc:
        raise SessionOpenError(f"Cannot fork: cannot read {source}: {exc.strerror}") from None
    from pi_session_jsonl.reading import read_session, warn_long_lines

    try:
        loaded = read_session(fd, source)
    except jsonl.BadSessionFile:
        raise SessionOpenError(f"Cannot fork: not a pi session file: {source}") from None
    except OSError as exc:
        raise SessionOpenError(f"Cannot fork: cannot read {source}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if loaded.header is None:
        raise SessionOpenError(f"Cannot fork: source session file is empty or invalid: {source}")
    jsonl.warn_malformed(loaded, source, warn or stderr_warn)
    warn_long_lines(loaded, warn or stderr_warn)
    # Entries are copied as they are, usable or not (pi copies them verbatim); the new store's
    # tree leaves the unusable ones out and names them by their line in the copy.
    jsonl.migrate(loaded, fresh_id)
    header = new_header(cwd, session_id, parent_session=source)
    ensure_dir(session_dir)
    path = os.path.join(session_dir, session_file_name(header["timestamp"], header["id"]))
    try:
        out = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, FILE_MODE)
    except OSError as exc:
        raise SessionOpenError(f"Cannot create {path}: {exc.strerror}") from None
    _lock(out, path)
    try:
        jsonl.write_all(out, b"".join([jsonl.encode(header), *(jsonl.encode(e) for e in loaded.entries)]))
    except OSError as exc:
        os.close(out)
        os.unlink(path)
        raise SessionOpenError(f"Cannot write {path}: {exc.strerror}") from None
    loaded.rewritten(path)
    return JsonlStore(
        cwd,
        session_dir,
        header=header,
        entries=loaded.entries,
        path=path,
        fd=out,
        warn=warn,
        source=loaded,
    )


def is_locked_elsewhere(path: str) -> bool:
    """True when another open store holds this file (best effort)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
    finally:
        os.close(fd)

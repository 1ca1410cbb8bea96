"""Writing a page whole or not at all.

Opening the destination with ``"w"`` empties it before the first byte is written, so any failure
after that (a full disk, a file size limit, text no UTF-8 encoder takes) used to leave a 0-byte
file where the previous export was. The page is encoded first and written to a temporary file
next to the destination, which then replaces it in one rename.
"""

from __future__ import annotations

import errno
import os
import stat

from pi_host.lib.wire import well_formed


def write_page(target: str, page: str) -> None:
    """Write ``page`` (UTF-8; each lone surrogate becomes U+FFFD, as Node writes a JavaScript
    string) to ``target``. A symlink is written through; an existing file keeps its mode. On
    failure the previous file is untouched and no temporary file is left. Raises ``OSError``."""
    data = well_formed(page).encode("utf-8")
    real = os.path.realpath(target)
    try:
        info = os.stat(real)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        # A device or FIFO (``/dev/stdout``) is written as before: renaming over it would replace it.
        with open(real, "wb") as handle:
            handle.write(data)
        return
    if info is not None and not os.access(real, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), target)
    directory, name = os.path.split(real)
    temp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    # 0o666 less the umask, as open() would create the file; an existing file's mode is kept.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        try:
            if info is not None:
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, real)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise

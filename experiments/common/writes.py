"""Where results reach the disk: the commands write their files through these helpers.

A full disk (ENOSPC, or a spent quota: EDQUOT) then ends a command with one line
(:class:`~envs.core.errors.DiskFullError`, exit code 2) and damages nothing already written: a
whole file is written under a temporary name and renamed over the old one only once complete
(:func:`write_atomic`), and rows appended as they come land whole or not at all
(:class:`AppendFile` cuts a half-written append away). Rerun after freeing space.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import BinaryIO

from envs.core.errors import DiskFullError

DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def _write(handle: BinaryIO, data: bytes) -> None:
    """Every byte of ``data`` to ``handle`` (the one primitive: tests make the disk full here)."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        view = view[written if written is not None else len(view):]


def is_disk_full(exc: BaseException) -> bool:
    """True for an OSError that says the disk or the quota is full."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


def disk_full_error(path: str | Path, exc: OSError | None = None) -> DiskFullError:
    """The one line a full disk ends a command with."""
    reason = (exc.strerror if exc is not None and exc.strerror else "no space left on device").lower()
    return DiskFullError(f"{reason} while writing {path}; files written before are "
                         "intact: free some space and rerun")


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through ``path.tmp`` and a rename: the old file,
    if any, stays whole until the new one is. A full disk removes the temporary file and raises
    DiskFullError."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            _write(handle, data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if is_disk_full(exc):
            raise disk_full_error(path, exc) from None
        raise
    return path


def copy_atomic(source: str | Path, path: str | Path) -> Path:
    """Copy the file ``source`` to ``path`` as :func:`write_atomic` writes (a reader of ``path``
    never sees half a file; a full disk raises DiskFullError and leaves the old copy)."""
    return write_atomic(path, Path(source).read_bytes())


class AppendFile:
    """A file written as whole appends (rows of games as they end); each append lands entirely or,
    on a full disk, not at all (the file is cut back to the append's start: DiskFullError)."""

    def __init__(self, path: str | Path, append: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab" if append else "wb", buffering=0)

    def append(self, text: str) -> None:
        start = self._file.tell()
        try:
            _write(self._file, text.encode("utf-8"))
        except OSError as exc:
            os.ftruncate(self._file.fileno(), start)
            self._file.seek(start)
            if is_disk_full(exc):
                raise disk_full_error(self.path, exc) from None
            raise

    def close(self) -> None:
        self._file.close()

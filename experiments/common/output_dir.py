"""Check an output folder (``--out``) before any work is done, so a bad path fails in one line.

Every command that writes results calls :func:`prepare_out_dir` after its options are validated and
before it plays a game: a path under a file, an unwritable folder or a read-only file system is
reported at once (ConfigError: exit code 2), and nothing is left half-written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from envs.core.errors import ConfigError


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (None when ``path`` exists)."""
    missing = None
    for candidate in (path, *path.parents):
        if candidate.exists():
            return missing
        missing = candidate
    return missing


def _remove_created(path: Path, created: Path | None) -> None:
    """Remove the empty folders this check made, from ``path`` up to ``created``."""
    if created is None:
        return
    for folder in (path, *path.parents):
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == created:
            return


def prepare_out_dir(path: str | Path | None, option: str = "--out") -> Path | None:
    """Create ``path`` (with its parents) and prove a file can be written there; None passes through.

    Raises ConfigError naming ``option`` and the path when a parent is a file, ``path`` is a file,
    or the folder cannot be created or written (read-only folder or file system)."""
    if path is None:
        return None
    path = Path(path)
    for candidate in (path, *path.parents):
        if candidate.exists() and not candidate.is_dir():
            where = "is a file" if candidate == path else f"is under {candidate}, which is a file"
            raise ConfigError(f"{option} {path} {where}, not a folder")
    created = _first_missing(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot create the folder ({exc.strerror or exc})") from exc
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        _remove_created(path, created)
        raise ConfigError(f"{option} {path}: the folder is not writable ({exc.strerror or exc})") from exc
    return path

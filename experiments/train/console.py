"""The training console: the project's own lines on the terminal, library messages in a log file.

Ray, RLlib, gymnasium and torch print warnings a newcomer reads as errors, through Python's
logging and warnings (to ``sys.stderr`` when they emit) or, for Ray's C++ core worker, straight to
file descriptor 2. While :func:`library_log` runs, descriptor 2 is ``OUT/library.log`` (the Ray
processes started meanwhile inherit it), so all of that lands in the log, and the project writes its
progress bars and lines to :func:`console` (the terminal) or to stdout (``print``, rich), which is
left alone. :func:`fit_line` keeps a progress line within the terminal's width.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

LOG_NAME = "library.log"
SEPARATOR = "  "
_terminal: TextIO | None = None


def console() -> TextIO:
    """Where the project's stderr lines go: the terminal while :func:`library_log` runs, else sys.stderr."""
    return _terminal if _terminal is not None else sys.stderr


@contextmanager
def library_log(out: Path) -> Iterator[Path]:
    """Send library output to ``out/library.log`` for the duration (see the module docstring)."""
    global _terminal
    path = out / LOG_NAME
    sys.stdout.flush()
    sys.stderr.flush()
    log = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115  closed in the finally below
    saved_fd, saved_show, saved_terminal = os.dup(2), warnings.showwarning, _terminal
    _terminal = _open_terminal(sys.stderr)
    handler = logging.StreamHandler(log)  # loggers without a handler of their own
    logging.getLogger().addHandler(handler)
    os.dup2(log.fileno(), 2)

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        log.write(warnings.formatwarning(message, category, filename, lineno, line))

    warnings.showwarning = show
    try:
        yield path
    finally:
        sys.stderr.flush()
        _terminal.flush()
        log.flush()
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        warnings.showwarning = saved_show
        logging.getLogger().removeHandler(handler)
        if _terminal is not sys.stderr:
            _terminal.close()
        _terminal = saved_terminal
        log.close()


def _open_terminal(stderr: TextIO) -> TextIO:
    """A stream on what descriptor 2 is now (the terminal), or ``stderr`` itself when it does not
    write to descriptor 2 (a test's captured stream)."""
    try:
        if stderr.fileno() != 2:
            return stderr
    except (AttributeError, OSError, io.UnsupportedOperation):
        return stderr
    return open(os.dup(2), "w", encoding=stderr.encoding or "utf-8", errors="replace",  # noqa: SIM115
                buffering=1)


def fit_line(fields: Sequence[str], width: int) -> str:
    """``fields`` joined, most important first: a field that would pass ``width`` is left out (the
    first one is cut instead)."""
    line = ""
    for field in fields:
        candidate = f"{line}{SEPARATOR}{field}" if line else field
        if len(candidate) <= width:
            line = candidate
        elif not line:
            line = field[:width]
    return line

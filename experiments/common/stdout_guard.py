"""Keep stdout for the one JSON document a ``--json`` command prints.

Ray (its C++ core and Python loggers), numba and tqdm may write to file descriptor 1 while a
command runs, e.g. "A worker died or was killed while running a task" before a retry. Inside
:func:`stdout_to_stderr` descriptor 1 (and ``sys.stdout``) point at stderr, so that noise and any
child process started meanwhile write there; the real stdout comes back on exit.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stdout_to_stderr(active: bool = True) -> Iterator[None]:
    """Route descriptor 1 and ``sys.stdout`` to stderr while the block runs (no-op if not active)."""
    if not active:
        yield
        return
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real descriptor 1 (an embedding host): route sys.stdout only
        saved = None
    old_stdout = sys.stdout
    if saved is not None:
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = old_stdout
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)

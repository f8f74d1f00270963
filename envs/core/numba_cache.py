"""Where numba keeps its compiled-code cache: one folder per version of the project's sources.

numba's own cache (``cache=True``) is invalidated when the file of a compiled function changes,
but not when a function it calls from another file does: after an edit (or a ``git pull``) to,
say, ``envs/cartographers/kernels.py``, a cached greedy playout in ``agents/greedy`` would keep
running the old scoring code. :func:`configure_numba_cache` points ``numba.config.CACHE_DIR`` at
``.numba_cache/<hash of every .py file under envs, agents and experiments>`` in the checkout (or
``~/.cache/meeplelab/numba/<hash>`` when the checkout is read-only), so any source change starts
a fresh cache. A ``NUMBA_CACHE_DIR`` set by the user is left alone. ``make clean-cache`` removes
the old folders.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

from envs.core.install import cache_dir

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("envs", "agents", "experiments")
_configured: list[str] = []


def source_hash(root: Path = ROOT) -> str:
    """A short hash of the relative path and contents of every .py file under :data:`PACKAGES`."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def configure_numba_cache() -> str | None:
    """Set numba's cache folder for this version of the sources (once per process); returns it,
    or None when the user chose one with ``NUMBA_CACHE_DIR``. Must run before the project's
    ``@njit(cache=True)`` functions are defined: every package's ``__init__`` calls it."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if _configured:
        return _configured[0]
    key = source_hash()
    folder = None
    for base in (cache_dir(".numba_cache"), Path.home() / ".cache" / "meeplelab" / "numba"):
        try:
            (base / key).mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(base / key, os.W_OK):
            folder = str(base / key)
            break
    if folder is None:  # nowhere writable: numba's default (next to the sources)
        return None
    numba.config.CACHE_DIR = folder
    os.environ["NUMBA_CACHE_DIR"] = folder  # subprocesses and Ray workers of this run share it
    _configured.append(folder)
    return folder

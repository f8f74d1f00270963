"""Checkpoint folders a kill cannot tear: written under a temporary name, then renamed into place.

:func:`write_folder` fills ``checkpoints/.tmp-NAME`` (the state file last) and renames it to
``checkpoints/NAME``; a folder of that name already there (the same iteration saved again) is first
renamed to ``.old-NAME`` and removed after. A SIGKILL at any moment therefore leaves every
``NAME`` folder complete, plus at most one temporary folder. :func:`recover` (on ``--resume``) finishes
or discards what a kill left: a complete temporary folder takes the place of ``NAME`` (it is the newest
save of that name), an incomplete one is removed with one line, and a ``NAME`` folder that fails the
check all the same (damaged after it was written) is moved aside to ``.torn-NAME`` with one line.
A full disk while a folder is written removes the temporary folder and ends the command with one
line naming the checkpoint (:class:`envs.core.errors.DiskFullError`); the earlier ones stay whole.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from envs.core.errors import DiskFullError
from experiments.common.writes import disk_full_error, is_disk_full
from experiments.train.console import console

TMP, OLD, TORN = ".tmp-", ".old-", ".torn-"


def is_hidden(path: Path) -> bool:
    """A temporary, replaced or torn folder (never a checkpoint to resume from)."""
    return path.name.startswith(".")


def state_is_complete(path: Path, state_file: str, *others: str) -> bool:
    """``path/state_file`` parses as a JSON object and every file of ``others`` exists."""
    try:
        state = json.loads((path / state_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and all((path / name).is_file() for name in others)


def write_folder(final: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on an empty temporary folder beside ``final``, then rename it to ``final``."""
    tmp, old = final.with_name(TMP + final.name), final.with_name(OLD + final.name)
    for leftover in (tmp, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    tmp.mkdir(parents=True)
    try:
        write(tmp)
    except OSError as exc:
        if not (isinstance(exc, DiskFullError) or is_disk_full(exc)):
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        raise disk_full_error(final, exc) from None
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def say_on_stderr(line: str) -> None:
    print(line, file=console(), flush=True)


def recover(root: Path, complete: Callable[[Path], bool],
            say: Callable[[str], None] = say_on_stderr) -> None:
    """Finish or discard the checkpoint writes a kill interrupted under ``root`` (see the module
    docstring); one line per checkpoint skipped."""
    if not root.is_dir():
        return
    for tmp in sorted(root.glob(TMP + "*")):
        final = root / tmp.name[len(TMP):]
        if complete(tmp):  # killed just before the rename: it is the newest save of that name
            if final.exists():
                shutil.rmtree(final)
            tmp.rename(final)
        else:
            say(f"skipped the incomplete checkpoint {final} (the run was stopped while writing it)")
            shutil.rmtree(tmp, ignore_errors=True)
    for old in sorted(root.glob(OLD + "*")):
        final = root / old.name[len(OLD):]
        if not final.exists() and complete(old):
            old.rename(final)
        else:
            shutil.rmtree(old, ignore_errors=True)
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and not is_hidden(folder) and not complete(folder):
            aside = folder.with_name(TORN + folder.name)
            if aside.exists():
                shutil.rmtree(aside)
            folder.rename(aside)
            say(f"skipped the torn checkpoint {folder} (moved to {aside.name})")

"""The Dorfromantik campaign log (decision 9): one JSON object per line, appended, never rewritten.

A record holds the game's date, the player names, the points per category and the total (what the
seed's score sheet asks for). The score-row table of the campaign sheet is not public, so the user
supplies it (:func:`score_row`); it is never hard-coded here.

Safety: a record is validated and serialised *before* the file is opened; the whole line goes out in
one ``write`` on a file opened for appending, then ``fsync``. A failed write therefore never
truncates earlier games. If the previous line was cut off (a crash mid-write), :func:`append_result`
refuses to append until the user repairs the file, so damage is never buried under new lines.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from envs.core.errors import ConfigError, DataFileError
from envs.core.textfile import read_text

REQUIRED = {"date": str, "players": list, "categories": dict, "total": int}


def validate_record(record: Any, where: str = "record") -> dict[str, Any]:
    """Check a campaign record's fields and types; raise ConfigError (or DataFileError) naming ``where``."""
    error = DataFileError if where != "record" else ConfigError
    if not isinstance(record, dict):
        raise error(f"{where}: a campaign record must be a JSON object")
    for key, kind in REQUIRED.items():
        if key not in record:
            raise error(f"{where}: missing field {key!r}")
        value = record[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise error(f"{where}: field {key!r} must be {kind.__name__}, got {type(value).__name__}")
    if not record["players"] or not all(isinstance(p, str) and p for p in record["players"]):
        raise error(f"{where}: players must be a non-empty list of names")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in record["categories"].values()):
        raise error(f"{where}: every category must be an integer")
    return record


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """All records of a campaign log in order (a missing file is an empty campaign).
    A malformed line raises DataFileError naming the file and the line number."""
    path = Path(path)
    if not path.exists():
        return []
    records = []
    text = read_text(path, "campaign log", DataFileError)
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):  # as open() splits
        if not line.strip():
            continue
        where = f"{path}:{number}"
        if not line.endswith("\n"):
            raise DataFileError(f"{where}: the last line is incomplete (an interrupted write?)")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFileError(f"{where}: not valid JSON ({exc.msg})") from exc
        records.append(validate_record(record, where))
    return records


def append_result(path: str | Path, result: dict[str, Any]) -> int:
    """Append one game's record to the log and return its game number (1 for the first game).

    The record gets ``game_number`` when it has none. The existing log is read and validated first:
    appending to a damaged log raises DataFileError and writes nothing."""
    path = Path(path)
    record = dict(validate_record(result))
    existing = read_log(path)
    record.setdefault("game_number", len(existing) + 1)
    line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        data = line.encode("utf-8")
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)
    return int(record["game_number"])


def score_row(total: int, rows: list[int]) -> int | None:
    """The campaign sheet's row for a game total: the largest row value not above ``total``
    (the seed: 128 points go on the 120 row). ``rows`` is the user's table; None when the total is
    below every row."""
    if not rows or not all(isinstance(r, int) and not isinstance(r, bool) for r in rows):
        raise ConfigError("score rows must be a non-empty list of integers")
    below = [r for r in rows if r <= total]
    return max(below) if below else None


def load_rows(path: str | Path) -> list[int]:
    """Read a user-supplied score-row table: a JSON list of integers, or one integer per line."""
    path = Path(path)
    text = read_text(path, "score-row table", DataFileError)
    try:
        rows = json.loads(text) if text.lstrip().startswith("[") else \
            [int(line) for line in text.split() if line.strip()]
    except (ValueError, json.JSONDecodeError) as exc:
        raise DataFileError(f"{path}: score rows must be integers ({exc})") from exc
    if not isinstance(rows, list) or not rows or not all(isinstance(r, int) for r in rows):
        raise DataFileError(f"{path}: score rows must be a non-empty list of integers")
    return rows

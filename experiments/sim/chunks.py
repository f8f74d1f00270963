"""A simulation directory's chunks on disk: files, their records, verification and the run lock.

Chunk ``i`` is two files: ``chunk_0000i.parquet`` (one row per game and seat) and its record
``chunk_0000i.json`` (seed range, games, rows, SHA-256 of the Parquet bytes, and per-seat
aggregates the final summary is built from). Both are written to temporary names and renamed,
Parquet first, so a chunk counts as finished only once its record exists; :func:`verify_chunk`
re-reads the bytes on resume and names anything that does not match (missing, truncated, altered,
another chunk's file). :class:`RunLock` keeps a second ``simulate`` out of a directory in use.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from envs.core.errors import ConfigError
from envs.core.textfile import parse_json, read_text
from experiments.common.writes import write_atomic
from experiments.eval.stats import Moments

LOCK_NAME = ".simulate.lock"


def chunk_path(out_dir: Path, index: int) -> Path:
    return Path(out_dir) / f"chunk_{index:05d}.parquet"


def record_path(out_dir: Path, index: int) -> Path:
    return Path(out_dir) / f"chunk_{index:05d}.json"


def seat_aggregates(columns: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Per seat: total moments, category sums and win sum (None for solo games)."""
    seat = np.asarray(columns["seat"])
    out = []
    for s in range(int(seat.max()) + 1):
        mine = seat == s
        totals = np.asarray(columns["total"], dtype=np.float64)[mine]
        out.append({
            "total": Moments.of(totals).__dict__,
            "categories": {k[4:]: float(np.asarray(v, dtype=np.float64)[mine].sum())
                           for k, v in columns.items() if k.startswith("cat_")},
            "win": float(np.asarray(columns["win"], dtype=np.float64)[mine].sum())
            if "win" in columns else None,
        })
    return out


def encode_chunk(columns: dict[str, Any], index: int, seeds: list[int]) -> tuple[bytes, dict[str, Any]]:
    """The Parquet bytes of one chunk's columns and its record (runs in the worker)."""
    table = pa.table(columns)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    data = sink.getvalue()
    record = {"index": index, "first_seed": seeds[0], "last_seed": seeds[-1], "games": len(seeds),
              "rows": table.num_rows, "sha256": hashlib.sha256(data).hexdigest(),
              "seats": seat_aggregates(columns)}
    return data, record


def write_chunk(out_dir: Path, data: bytes, record: dict[str, Any]) -> None:
    """Parquet file, then its record, each through a temporary file and a rename."""
    index = record["index"]
    write_atomic(chunk_path(out_dir, index), data)
    write_atomic(record_path(out_dir, index), json.dumps(record, sort_keys=True) + "\n")


def read_record(out_dir: Path, index: int) -> dict[str, Any] | None:
    """A chunk's record, or None when it is missing or unreadable."""
    try:
        record = parse_json(read_text(record_path(out_dir, index), "chunk record"), "chunk record")
    except ConfigError:
        return None
    return record if isinstance(record, dict) else None


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class ChunkCheck:
    """The verdict on one chunk on disk: ``problem`` is None when it can be trusted."""

    index: int
    problem: str | None
    record: dict[str, Any] | None = None


def verify_chunk(out_dir: Path, index: int, seeds: list[int],
                 digests_elsewhere: dict[str, int] | None = None) -> ChunkCheck:
    """Check chunk ``index`` against its record and the seeds it must hold.

    ``digests_elsewhere`` (checksum -> chunk index, from the other records) lets a file copied
    from another chunk be named as such."""
    path = chunk_path(out_dir, index)
    record = read_record(out_dir, index)
    if not path.exists():
        return ChunkCheck(index, "missing" if record is None else "Parquet file missing")
    if record is None:
        return ChunkCheck(index, "no record (written by an interrupted or older run)")
    wanted = (seeds[0], seeds[-1], len(seeds))
    if (record.get("first_seed"), record.get("last_seed"), record.get("games")) != wanted:
        return ChunkCheck(index, f"record is for seeds {record.get('first_seed')}-{record.get('last_seed')}, "
                                 f"not {seeds[0]}-{seeds[-1]}")
    digest = file_digest(path)
    if digest != record.get("sha256"):
        other = (digests_elsewhere or {}).get(digest)
        if other is not None and other != index:
            return ChunkCheck(index, f"holds chunk {other}'s file")
        return ChunkCheck(index, _damage(path, record))
    return ChunkCheck(index, None, record)


def _damage(path: Path, record: dict[str, Any]) -> str:
    """Why a file whose checksum does not match is wrong (truncated, other rows, altered)."""
    size = path.stat().st_size
    if size == 0:
        return "empty file"
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except Exception:  # pyarrow raises several types for a torn file
        return f"unreadable Parquet ({size} bytes, truncated?)"
    if rows != record.get("rows"):
        return f"{rows} rows instead of {record.get('rows')}"
    return "contents altered (checksum differs)"


class RunLock:
    """An exclusive ``flock`` on ``DIR/.simulate.lock`` for the duration of a run.

    The kernel drops it when the process ends, however it ends, so a crash never leaves a
    stale lock; a second run into the same directory is refused with one line."""

    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / LOCK_NAME
        self._handle: Any = None

    def __enter__(self) -> RunLock:
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise ConfigError(f"another simulate (pid {holder}) is writing to {self.path.parent}; "
                              "wait for it to finish, then rerun to resume, or use another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

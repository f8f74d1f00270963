"""A full disk during ``simulate``, ``eval`` and ``replay``: one clear line, nothing already written is
damaged, and a rerun after space is freed completes the same results. No test can mount a small
tmpfs here (no root), so the disk fills at the project's write layer
(:func:`experiments.common.writes._write`, through which every result file is written)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from envs.core.errors import DiskFullError
from envs.core.registry import make_game
from experiments.cli.main import run
from experiments.common import writes
from experiments.common.runner import play_game
from experiments.common.writes import AppendFile, copy_atomic, write_atomic
from experiments.replay.records import record_from_result, write_record
from experiments.sim.simulate import MANIFEST, SimulationSpec, run_simulation
from tests.experiments.cli.test_errors import assert_one_line_error, run_cli

REAL_WRITE = writes._write


class Disk:
    """The disk as the write layer sees it: ``room`` bytes left (None: plenty), or full only for
    files whose name ends with ``full_for``; a write that does not fit lands in part, then ENOSPC."""

    def __init__(self) -> None:
        self.room: int | None = None
        self.full_for: str | None = None

    def write(self, handle, data) -> None:
        data = bytes(data)
        if self.full_for is not None and str(handle.name).endswith(self.full_for):
            REAL_WRITE(handle, data[:len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if self.room is None or len(data) <= self.room:
            self.room = None if self.room is None else self.room - len(data)
            return REAL_WRITE(handle, data)
        REAL_WRITE(handle, data[:self.room])
        self.room = 0
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def free(self) -> None:
        self.room = self.full_for = None


@pytest.fixture
def disk(monkeypatch) -> Disk:
    disk = Disk()
    monkeypatch.setattr(writes, "_write", disk.write)
    return disk


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


# ---- the helpers ------------------------------------------------------------------------------

def test_a_whole_file_is_replaced_only_once_complete(tmp_path, disk):
    path = tmp_path / "summary.json"
    write_atomic(path, "old\n")
    disk.room = 3
    with pytest.raises(DiskFullError) as info:
        write_atomic(path, "new and longer\n")
    assert str(info.value) == (f"no space left on device while writing {path}; files written before are "
                               "intact: free some space and rerun")
    assert path.read_text() == "old\n" and leftovers(tmp_path) == []
    disk.free()
    write_atomic(path, "new and longer\n")
    assert path.read_text() == "new and longer\n"


def test_a_copy_keeps_the_old_file_whole_on_a_full_disk(tmp_path, disk):
    source, target = tmp_path / "iter_002.pt", tmp_path / "best" / "policy.pt"
    target.parent.mkdir()
    target.write_bytes(b"generation one")
    source.write_bytes(b"generation two, larger")
    disk.room = 5
    with pytest.raises(DiskFullError, match="while writing .*policy.pt"):
        copy_atomic(source, target)
    assert target.read_bytes() == b"generation one" and leftovers(tmp_path) == []
    disk.free()
    copy_atomic(source, target)
    assert target.read_bytes() == b"generation two, larger"


def test_an_append_lands_whole_or_not_at_all(tmp_path, disk):
    rows = AppendFile(tmp_path / "games.csv")
    rows.append("a,b\n")
    rows.append("1,2\n")
    disk.room = 5
    with pytest.raises(DiskFullError):
        rows.append("3,4\n5,6\n")
    assert (tmp_path / "games.csv").read_text() == "a,b\n1,2\n"
    disk.free()
    rows.append("3,4\n")
    rows.close()
    assert (tmp_path / "games.csv").read_text() == "a,b\n1,2\n3,4\n"


# ---- eval ---------------------------------------------------------------------------------------

EVAL = ["eval", "dice-race", "--agents", "random,prefer", "--games", "12", "--seed", "4", "--no-progress"]


def games(folder: Path) -> pd.DataFrame:
    """games.csv without the timing columns (they differ run to run)."""
    frame = pd.read_csv(folder / "games.csv")
    return frame[[c for c in frame.columns if "_ms" not in c and "seconds" not in c]]


def means(folder: Path) -> dict[str, float]:
    summary = json.loads((folder / "summary.json").read_text())
    return {agent: entry["mean"] for agent, entry in summary["agents"].items()}


@pytest.fixture(scope="module")
def eval_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference")
    assert run([*EVAL, "--out", str(out)]) == 0
    return out


def test_eval_on_a_full_disk_keeps_every_finished_game(capsys, tmp_path, disk, eval_reference):
    capsys.readouterr()
    lines = (eval_reference / "games.csv").read_text().splitlines(keepends=True)
    disk.room = len("".join(lines[:11])) + 10  # the header, about ten games' rows and a bit more
    code, _, err = run_cli(capsys, [*EVAL, "--out", str(tmp_path)])
    assert_one_line_error(code, err, f"no space left on device while writing {tmp_path / 'games.csv'}")
    assert (tmp_path / "games.csv").read_text().endswith("\n")  # whole rows only: a cut one is cut away
    kept = games(tmp_path)
    assert 5 <= len(kept) < len(lines) - 1
    pd.testing.assert_frame_equal(kept, games(eval_reference)[:len(kept)])
    assert not (tmp_path / "summary.json").exists() and leftovers(tmp_path) == []
    disk.free()
    code, _, err = run_cli(capsys, [*EVAL, "--out", str(tmp_path)])
    assert code == 0, err
    pd.testing.assert_frame_equal(games(tmp_path), games(eval_reference))
    assert means(tmp_path) == means(eval_reference)


def test_eval_report_on_a_full_disk_leaves_the_last_report_whole(capsys, tmp_path, disk, eval_reference):
    assert run_cli(capsys, [*EVAL, "--out", str(tmp_path)])[0] == 0
    before = (tmp_path / "summary.json").read_bytes()
    disk.full_for = "summary.json.tmp"
    code, _, err = run_cli(capsys, [*EVAL, "--out", str(tmp_path)])
    assert_one_line_error(code, err, f"while writing {tmp_path / 'summary.json'}", "free some space")
    assert (tmp_path / "summary.json").read_bytes() == before and leftovers(tmp_path) == []
    disk.free()
    assert run_cli(capsys, [*EVAL, "--out", str(tmp_path)])[0] == 0
    assert means(tmp_path) == means(eval_reference)


# ---- simulate -----------------------------------------------------------------------------------

SPEC = SimulationSpec(game="dice-race", agents=["random", "random"], games=40, seed=9, chunk=10,
                      options={"players": 2})
SIMULATE = ["simulate", "dice-race", "--agent", "random", "--players", "2", "--games", "40", "--seed", "9",
            "--chunk", "10", "--workers", "1", "--json"]


def chunk_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("chunk_*"))}


def test_simulate_on_a_full_disk_resumes_to_the_same_chunks(ray_session, capsys, tmp_path, disk):
    reference = tmp_path / "reference"
    run_simulation(SPEC, reference, workers=1, progress=False)
    out = tmp_path / "out"
    files = chunk_files(reference)
    two = sum(len(files[f"chunk_0000{i}.{kind}"]) for i in (0, 1) for kind in ("parquet", "json"))
    disk.room = (reference / MANIFEST).stat().st_size + two + len(files["chunk_00002.parquet"]) // 2
    code, _, err = run_cli(capsys, [*SIMULATE, "--out", str(out)])
    problems = [line for line in err.splitlines() if not line.startswith("simulate: ")]  # where it plays
    assert_one_line_error(code, "\n".join(problems), "no space left on device while writing", "rerun")
    written = chunk_files(out)
    assert sorted(written) == sorted(f"chunk_0000{i}.{k}" for i in (0, 1) for k in ("json", "parquet"))
    assert all(written[name] == files[name] for name in written) and leftovers(out) == []  # nothing torn
    disk.free()
    code, _, err = run_cli(capsys, [*SIMULATE, "--out", str(out)])
    assert code == 0, err
    assert chunk_files(out) == files


# ---- replay, and a library's own write ----------------------------------------------------------

def test_replay_on_a_full_disk_keeps_the_last_page(capsys, tmp_path, disk):
    record = write_record(record_from_result("cartographers", {}, play_game(make_game("cartographers"),
                                                                             ["random"], 2)),
                          tmp_path / "game.jsonl")
    page = tmp_path / "game.html"
    page.write_text("the last page\n")
    disk.room = 1000
    code, _, err = run_cli(capsys, ["replay", str(record)])
    assert_one_line_error(code, err, f"no space left on device while writing {page}")
    assert page.read_text() == "the last page\n" and leftovers(tmp_path) == []
    disk.free()
    assert run_cli(capsys, ["replay", str(record)])[0] == 0
    assert "replay-data" in page.read_text()


def test_a_full_disk_in_a_library_write_is_one_line_too(capsys, monkeypatch, tmp_path):
    """``train`` writes checkpoints with torch and Ray: their ENOSPC reaches the CLI as an OSError."""
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "policy.pt"))

    monkeypatch.setattr("experiments.replay.html.write_replay", full)
    code, _, err = run_cli(capsys, ["replay", str(tmp_path / "x.jsonl")])
    assert_one_line_error(code, err, f"while writing {tmp_path / 'policy.pt'}")

"""A full disk during ``ladder``, ``solo-eval`` and ``tune-greedy``: one DiskFullError line, no file
left half-written or under a temporary name, the files written before whole, and a rerun after space is
freed completes. The disk fills at the project's write layer (:func:`experiments.common.writes._write`),
as in tests/experiments/common/test_writes.py."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from experiments.common import writes
from tests.experiments.cli.test_errors import assert_one_line_error, run_cli
from tests.experiments.common.test_writes import Disk, leftovers


@pytest.fixture
def disk(monkeypatch) -> Disk:
    disk = Disk()
    monkeypatch.setattr(writes, "_write", disk.write)
    return disk


def files(folder: Path, *names: str) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names}


# ---- ladder ---------------------------------------------------------------------------------------

LADDER = ["ladder", "dice-race", "--players", "1", "--agents", "random,prefer:action=2", "--no-progress"]
LADDER_FILES = ("ladder.md", "ladder.csv", "ladder.png", "summary.json")


def test_ladder_on_a_full_disk_keeps_the_last_ladder_and_the_finished_part(capsys, tmp_path, disk):
    out = tmp_path / "ladder"
    assert run_cli(capsys, [*LADDER, "--seeds", "0-4", "--out", str(out)])[0] == 0
    first = files(out, *LADDER_FILES)
    # a second part: its games and its meta file are written, then the disk is full at ladder.csv
    disk.full_for = "ladder.csv.tmp"
    code, _, err = run_cli(capsys, [*LADDER, "--seeds", "5-9", "--out", str(out)])
    assert_one_line_error(code, err, f"no space left on device while writing {out / 'ladder.csv'}",
                          "free some space and rerun")
    assert leftovers(out) == []
    now = files(out, *LADDER_FILES)
    assert now["ladder.csv"] == first["ladder.csv"]  # the old ladder, whole
    assert now["summary.json"] == first["summary.json"] and now["ladder.png"] == first["ladder.png"]
    assert "seeds 0..9" in now["ladder.md"].decode()  # written (whole) before the disk filled
    part = out / "parts" / "5-9"
    assert json.loads((part / "ladder_part.json").read_text())["seeds"] == [5, 9]
    # a full disk while a part is marked complete: no meta file, so a rerun plays that part again
    disk.full_for = "ladder_part.json.tmp"
    code, _, err = run_cli(capsys, [*LADDER, "--seeds", "10-14", "--out", str(out)])
    assert_one_line_error(code, err, f"while writing {out / 'parts' / '10-14' / 'ladder_part.json'}")
    assert not (out / "parts" / "10-14" / "ladder_part.json").exists() and leftovers(out) == []
    assert files(out, *LADDER_FILES) == now
    disk.free()
    code, _, err = run_cli(capsys, [*LADDER, "--seeds", "10-14", "--out", str(out)])
    assert code == 0, err
    assert "10-14 is complete" not in err
    table = pd.read_csv(out / "ladder.csv")
    assert set(table.seeds) == {15} and json.loads((out / "summary.json").read_text())["games"] == 15


# ---- solo-eval ------------------------------------------------------------------------------------

SOLO = ["solo-eval", "--game", "dice-race", "--agents", "random,prefer:action=2", "--games", "12",
        "--no-progress", "--json"]
SOLO_FILES = ("games.csv", "card_pairs.csv", "cards.csv", "combinations.csv", "report.md", "summary.json")


def origin(name: str, data: bytes, old: dict[str, bytes], new: dict[str, bytes]) -> str:
    """Which run wrote a solo-eval file: "old" (seeds 0..11), "new" (seeds 100..111) or "neither" (a torn
    or mixed file). The CSV files are the same bytes every run; report.md and summary.json hold
    timings, so they are told apart by their seeds (and must parse whole)."""
    if name.endswith(".csv"):
        return "new" if data == new[name] else "old" if data == old[name] else "neither"
    text = data.decode()
    if name.endswith(".json"):
        text = json.loads(text)["seeds"]
    elif not text.endswith("![paired differences](paired_differences.png)\n"):
        return "neither"
    return "new" if "seeds 100..111" in text else "old" if "seeds 0..11" in text else "neither"


def test_solo_eval_on_a_full_disk_keeps_the_last_report(capsys, tmp_path, disk):
    out = tmp_path / "solo"
    assert run_cli(capsys, [*SOLO, "--seed", "0", "--out", str(out)])[0] == 0
    before = files(out, *SOLO_FILES)
    disk.full_for = "report.md.tmp"  # after the CSV files and the plots, before summary.json
    code, _, err = run_cli(capsys, [*SOLO, "--seed", "100", "--out", str(out)])
    assert_one_line_error(code, err, f"no space left on device while writing {out / 'report.md'}")
    assert leftovers(out) == []
    games = pd.read_csv(out / "games.csv")
    assert sorted(games.seed.unique()) == list(range(100, 112)) and len(games) == 24  # the new games, whole
    cut_short = files(out, *SOLO_FILES)
    disk.free()
    assert run_cli(capsys, [*SOLO, "--seed", "100", "--out", str(out)])[0] == 0
    rerun = files(out, *SOLO_FILES)
    for name in SOLO_FILES[1:]:
        assert before[name] != rerun[name], name  # the two runs' files can be told apart
        written = name.endswith(".csv")  # written whole before the disk filled; the rest kept whole
        assert origin(name, cut_short[name], before, rerun) == ("new" if written else "old"), name
        assert origin(name, rerun[name], before, rerun) == "new", name


# ---- tune-greedy ----------------------------------------------------------------------------------

TUNE = ["tune-greedy", "cartographers", "--seeds", "0-5", "--rounds", "1", "--factors", "0,2",
        "--no-progress"]


def trial_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_tune_greedy_on_a_full_disk_keeps_whole_trials_and_the_last_result(capsys, tmp_path, disk):
    reference = tmp_path / "reference"
    assert run_cli(capsys, [*TUNE, "--out", str(reference)])[0] == 0
    lines = (reference / "trials.csv").read_bytes().splitlines(keepends=True)
    assert len(lines) > 6
    # the disk fills in the middle of the fourth trial's row
    out = tmp_path / "out"
    disk.room = len(b"".join(lines[:4])) + len(lines[4]) // 2
    code, _, err = run_cli(capsys, [*TUNE, "--out", str(out)])
    assert_one_line_error(code, err, f"no space left on device while writing {out / 'trials.csv'}")
    assert (out / "trials.csv").read_bytes() == b"".join(lines[:4])  # the header and three whole rows
    assert not (out / "result.json").exists() and leftovers(out) == []
    disk.free()
    assert run_cli(capsys, [*TUNE, "--out", str(out)])[0] == 0
    assert trial_rows(out / "trials.csv") == trial_rows(reference / "trials.csv")
    before = (out / "result.json").read_bytes()
    # the disk fills while result.json is replaced: the last one stays whole, the trials are all there
    disk.full_for = "result.json.tmp"
    code, _, err = run_cli(capsys, [*TUNE, "--start", "progress", "--out", str(out)])
    assert_one_line_error(code, err, f"while writing {out / 'result.json'}", "free some space")
    assert (out / "result.json").read_bytes() == before and leftovers(out) == []
    rows = trial_rows(out / "trials.csv")
    assert rows and rows != trial_rows(reference / "trials.csv")  # the new search's trials, whole
    assert json.loads(before)["start"] == "default"

"""Campaign log: record contents, append-only safety, malformed logs, the score-row table."""

from __future__ import annotations

import json
import os

import pytest

from envs.core.errors import ConfigError, DataFileError
from envs.dorfromantik.campaign import append_result, load_rows, read_log, score_row
from envs.dorfromantik.game import DorfromantikGame


def finished_game(players: int = 2):
    game = DorfromantikGame(players=players)
    state = game.new_game(4)
    game.rollout_returns(state, 4)
    return game, state


def test_record_has_date_players_categories_total(tmp_path):
    game, state = finished_game()
    record = game.campaign_record(state, ["Aiko", "Ben"], date="2026-11-29")
    assert record["date"] == "2026-11-29" and record["players"] == ["Aiko", "Ben"]
    cats = record["categories"]
    assert record["total"] == cats["tasks"] + cats["flags"] + cats["longest_rail"] + cats["longest_river"]
    assert cats["tasks"] == sum(cats[f"tasks_{t}"] for t in ("forest", "field", "village", "rail", "river"))
    log = tmp_path / "campaign.jsonl"
    assert append_result(log, record) == 1
    assert append_result(log, record) == 2
    back = read_log(log)
    assert [r["game_number"] for r in back] == [1, 2] and back[0]["total"] == record["total"]
    with pytest.raises(ConfigError):
        game.campaign_record(state, ["only one"])


def test_128_goes_on_the_120_row():
    rows = list(range(0, 300, 10))
    assert score_row(128, rows) == 120
    assert score_row(120, rows) == 120
    assert score_row(119, rows) == 110
    assert score_row(5, [10, 20]) is None
    with pytest.raises(ConfigError):
        score_row(50, [])


def test_rows_file(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([0, 40, 80, 120, 160]))
    assert score_row(128, load_rows(path)) == 120
    path.write_text("0\n40\nabc\n")
    with pytest.raises(DataFileError):
        load_rows(path)


def test_malformed_log_names_the_line(tmp_path):
    log = tmp_path / "c.jsonl"
    good = {"date": "2026-01-01", "players": ["A"], "categories": {"tasks": 3}, "total": 3}
    log.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(DataFileError, match=r"c\.jsonl:2"):
        read_log(log)
    log.write_text(json.dumps(good) + "\n" + json.dumps({**good, "total": "many"}) + "\n")
    with pytest.raises(DataFileError, match=r":2: field 'total'"):
        read_log(log)


def test_failed_append_never_truncates(tmp_path, monkeypatch):
    log = tmp_path / "c.jsonl"
    good = {"date": "2026-01-01", "players": ["A"], "categories": {"tasks": 3}, "total": 3}
    append_result(log, good)
    before = log.read_bytes()
    with pytest.raises(ConfigError):
        append_result(log, {**good, "total": None})            # invalid record: nothing written
    assert log.read_bytes() == before

    def broken_write(fd, data):
        raise OSError("disk full")

    monkeypatch.setattr(os, "write", broken_write)
    with pytest.raises(OSError):
        append_result(log, good)
    monkeypatch.undo()
    assert log.read_bytes() == before
    # a cut-off last line blocks further appends instead of being buried
    log.write_bytes(before + b'{"date": "2026-01-02", "pla')
    with pytest.raises(DataFileError, match="incomplete"):
        append_result(log, good)
    assert log.read_bytes() == before + b'{"date": "2026-01-02", "pla'

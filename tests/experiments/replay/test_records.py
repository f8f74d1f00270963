"""Game records: a replay reproduces every position, a record that does not replay is refused
with one line naming where, agents' explanations never change their choices, and recording
never changes a command's results."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from envs.core.registry import make_game
from experiments.cli.main import run
from experiments.common.runner import play_game
from experiments.replay.records import (
    RecordError,
    canonical_fields,
    check_file,
    read_record,
    record_from_result,
    replay,
    write_record,
)

CASES = [
    ("cartographers", {}, ["greedy"]),
    ("cartographers", {"players": 3}, ["random", "greedy", "random"]),
    ("cascadia", {}, ["greedy"]),
    ("cascadia", {"players": 4}, ["random", "greedy", "random", "greedy"]),
    ("dorfromantik", {}, ["greedy"]),
    ("dorfromantik", {"players": 2}, ["random", "greedy"]),
]


def _arrays(state) -> dict:
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in canonical_fields(state).items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray)
                                        else a[k] == b[k] for k in a)


@pytest.fixture(scope="module")
def small_record(tmp_path_factory):
    """A 2-player Cascadia record on disk (random vs greedy: explanations for seat 1 only)."""
    game = make_game("cascadia", players=2)
    result = play_game(game, ["random", "greedy"], 5, explain=True)
    path = tmp_path_factory.mktemp("rec") / "game.jsonl"
    write_record(record_from_result("cascadia", {"players": 2}, result), path)
    return path


@pytest.mark.parametrize("name,options,agents", CASES, ids=lambda v: str(v))
def test_replay_reproduces_every_position(tmp_path, name, options, agents):
    game = make_game(name, **options)
    played, seats = [], []

    def seen(state, seat, action):
        played.append(_arrays(state))
        seats.append(seat)

    result = play_game(game, agents, 11, keep_final_state=True, explain=True, on_step=seen)
    path = write_record(record_from_result(name, options, result), tmp_path / "g.jsonl")
    record = read_record(path)
    assert record.header["players"] == game.num_players() and len(record.decisions) == len(result.actions)
    replayed = []
    final = replay(record, on_decision=lambda line, before, after: replayed.append(_arrays(before)))
    assert len(replayed) == len(played)
    assert all(_same(a, b) for a, b in zip(played, replayed, strict=True))
    assert _same(_arrays(final), _arrays(result.final_state))
    assert record.end["totals"] == [int(t) for t in result.totals]
    assert [d["seat"] for d in record.decisions] == seats and set(seats) == set(range(game.num_players()))
    last = record.decisions[-1]["scores"]
    assert [s["total"] for s in last] == record.end["totals"]
    greedy_seats = {i for i, a in enumerate(agents) if a == "greedy"}
    for line in record.decisions:
        if line["seat"] in greedy_seats:
            assert line["explanation"]["kind"] == "greedy"
            assert line["explanation"]["chosen"] == line["action"]
        else:
            assert "explanation" not in line


@pytest.mark.parametrize("spec", ["greedy", "mcts:simulations=6,prior=greedy",
                                  "mcts:simulations=40,engine=compiled"])
def test_explanations_never_change_choices(spec):
    game = make_game("cartographers")
    plain = play_game(game, [spec], 3)
    explained = play_game(game, [spec], 3, explain=True)
    assert explained.actions == plain.actions and explained.totals == plain.totals
    views = [e for e in explained.explanations if e is not None]
    assert len(views) == len(explained.actions)
    assert all(v["chosen"] == a for v, a in zip(views, explained.actions, strict=True))
    searched = [v for v in views if "simulations" in v]
    if spec.startswith("mcts"):
        assert searched
        assert all(v["candidates"][0]["visits"] >= v["candidates"][-1]["visits"] for v in searched)


def test_cascadia_turn_search_explains_its_turns():
    game = make_game("cascadia", players=2)
    spec = "mcts:engine=compiled,rollout=greedy,simulations=8"
    plain = play_game(game, [spec, "greedy"], 2)
    explained = play_game(game, [spec, "greedy"], 2, explain=True)
    assert explained.actions == plain.actions
    views = [e for e, a in zip(explained.explanations, explained.actions, strict=True) if e is not None]
    assert any("simulations" in v for v in views) and any(v.get("planned") for v in views)


def _rewrite(path, tmp_path, edit) -> str:
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines = edit(lines)
    out = tmp_path / "edited.jsonl"
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(out)


def _refusal(path) -> str:
    with pytest.raises(RecordError) as err:
        check_file(path)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_a_good_record_replays(small_record):
    assert len(check_file(small_record).decisions) > 0


def test_edited_action_is_refused_at_its_decision(small_record, tmp_path):
    def to_other_legal(lines):
        # decision 0 is seat 0's market choice: another slot is legal but a different game
        lines[1]["action"] = (lines[1]["action"] + 1) % 4
        return lines

    message = _refusal(_rewrite(small_record, tmp_path, to_other_legal))
    assert "decision 0" in message and ("score" in message or "position" in message)

    def to_illegal(lines):
        lines[6]["action"] = 10**6
        return lines

    message = _refusal(_rewrite(small_record, tmp_path, to_illegal))
    assert "decision 5" in message and "illegal action 1000000" in message


def test_edited_score_and_seat_are_refused(small_record, tmp_path):
    def score(lines):
        lines[10]["scores"][1]["total"] += 1
        return lines

    assert "decision 9: seat 1's score total" in _refusal(_rewrite(small_record, tmp_path, score))

    def seat(lines):
        lines[4]["seat"] = 1 - lines[4]["seat"]
        return lines

    assert "decision 3: recorded for seat" in _refusal(_rewrite(small_record, tmp_path, seat))


def test_truncated_and_missing_decisions_are_refused(small_record, tmp_path):
    assert "truncated" in _refusal(_rewrite(small_record, tmp_path, lambda lines: lines[:-3]))
    message = _refusal(_rewrite(small_record, tmp_path, lambda lines: lines[:8] + lines[9:]))
    assert "decision 7 is numbered 8" in message
    broken = tmp_path / "cut.jsonl"
    broken.write_text(small_record.read_text()[:-20])
    assert "is not JSON" in _refusal(broken)


def test_other_version_and_other_game_are_refused(small_record, tmp_path):
    def version(lines):
        lines[0]["version"] = 2
        return lines

    assert "format version 2" in _refusal(_rewrite(small_record, tmp_path, version))

    def game(lines):
        lines[0]["game"] = "dorfromantik"
        lines[0]["options"] = {"players": 2}
        return lines

    message = _refusal(_rewrite(small_record, tmp_path, game))
    assert "start position differs" in message or "decision 0" in message
    not_a_record = tmp_path / "x.jsonl"
    not_a_record.write_text('{"seed": 1}\n')
    assert "not a meeplelab game record" in _refusal(not_a_record)


def test_play_record_writes_a_replayable_file(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    args = ["play", "dorfromantik", "--agent", "greedy", "--seed", "4", "--quiet"]
    assert run(args) == 0
    plain = capsys.readouterr().out
    assert run(args + ["--record", str(path)]) == 0
    recorded = capsys.readouterr().out
    assert recorded.startswith(plain.rstrip("\n")) and "wrote the game record" in recorded
    record = check_file(path)
    assert record.header["agents"] == ["greedy"] and record.decisions[0]["explanation"]["kind"] == "greedy"


def _results(directory) -> pd.DataFrame:
    frame = pd.read_csv(directory / "games.csv")
    return frame.drop(columns=[c for c in frame.columns if c.startswith(("decision_ms", "game_seconds"))])


def test_eval_records_never_change_results(tmp_path, capsys):
    args = ["eval", "cartographers", "--players", "2", "--agents", "random,greedy", "--games", "3",
            "--seed", "20", "--no-progress", "--out"]
    assert run(args + [str(tmp_path / "plain")]) == 0
    assert run(args + [str(tmp_path / "rec"), "--record", "3", "--record-seeds", "22"]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(_results(tmp_path / "plain"), _results(tmp_path / "rec"))
    files = sorted((tmp_path / "rec" / "records").glob("*.jsonl"))
    # 3 seeds x 2 seatings: the first 3 games (seed 20 both lineups, seed 21 lineup 0) and seed 22's two
    assert [f.name for f in files] == ["seed_20_lineup_0.jsonl", "seed_20_lineup_1.jsonl",
                                       "seed_21_lineup_0.jsonl", "seed_22_lineup_0.jsonl",
                                       "seed_22_lineup_1.jsonl"]
    rows = _results(tmp_path / "plain")
    for f in files:
        record = check_file(f)
        seed, lineup = record.header["seed"], int(f.stem.split("_")[-1])
        mine = rows[(rows.seed == seed) & (rows.lineup == lineup)].sort_values("seat")
        assert record.header["labels"] == mine.agent.tolist()
        assert record.end["totals"] == mine.total.astype(int).tolist()


def test_record_options_are_checked_before_playing(tmp_path, capsys):
    assert run(["eval", "cartographers", "--agents", "random", "--games", "1", "--record", "1"]) == 2
    assert "give --out" in capsys.readouterr().err
    assert run(["eval", "cartographers", "--agents", "random", "--games", "1", "--out", str(tmp_path),
                "--record-seeds", "3,x"]) == 2
    assert "--record-seeds: 'x'" in capsys.readouterr().err


@pytest.mark.slow
def test_simulate_records_never_change_results(tmp_path, capsys, ray_session):
    """Starts Ray (about 20 s on two cores)."""
    args = ["simulate", "dorfromantik", "--agent", "greedy", "--games", "4", "--chunk", "2", "--workers", "1",
            "--json", "--out"]
    assert run(args + [str(tmp_path / "plain")]) == 0
    assert run(args + [str(tmp_path / "rec"), "--record", "1", "--record-seeds", "3"]) == 0
    capsys.readouterr()
    for chunk in sorted((tmp_path / "plain").glob("chunk_*.parquet")):
        assert chunk.read_bytes() == (tmp_path / "rec" / chunk.name).read_bytes()
    files = sorted(p.name for p in (tmp_path / "rec" / "records").glob("*.jsonl"))
    assert files == ["seed_0.jsonl", "seed_3.jsonl"]
    frame = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / "plain").glob("chunk_*.parquet")))
    for name in files:
        record = check_file(tmp_path / "rec" / "records" / name)
        assert record.end["totals"] == frame[frame.seed == record.header["seed"]].total.astype(int).tolist()

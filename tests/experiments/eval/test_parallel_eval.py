"""eval and solo-eval with --workers (here first, then Ray tasks) play the games of a one-process run."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from experiments.cli.main import cli
from experiments.eval.config import build_spec
from experiments.eval.evaluate import CHUNK_SECONDS, chunk_size, run_evaluation

TIMING = ["decision_ms_mean", "decision_ms_max", "game_seconds"]


def test_two_workers_play_the_same_games_as_one(ray_session, tmp_path):
    spec = build_spec("dice-race", "random,prefer:action=2,prefer:action=1", 12, 3, 2)
    one = run_evaluation(spec, progress=False)
    two = run_evaluation(spec, out_dir=tmp_path, progress=False, workers=2)
    pd.testing.assert_frame_equal(one.rows.drop(columns=TIMING), two.rows.drop(columns=TIMING))
    on_disk = pd.read_csv(tmp_path / "games.csv").sort_values(["seed", "lineup", "seat"], ignore_index=True)
    assert len(on_disk) == len(one.rows) == 12 * 6 * 2
    assert (on_disk.total.to_numpy() == one.rows.total.to_numpy()).all()


def test_an_eval_that_moves_to_ray_half_way_plays_the_same_games(ray_session, monkeypatch, capsys):
    import experiments.eval.evaluate as evaluate_module

    spec = build_spec("dice-race", "random,prefer:action=2", 6, 3, 2)
    one = run_evaluation(spec, progress=False)
    monkeypatch.setattr(evaluate_module.HereFirst, "move_to_ray", lambda self, left: self.count >= 2)
    two = run_evaluation(spec, progress=False, workers=2)
    assert "eval: 10 games left at" in capsys.readouterr().err
    pd.testing.assert_frame_equal(one.rows.drop(columns=TIMING), two.rows.drop(columns=TIMING))


def test_solo_eval_with_workers_matches_and_replays_the_best_game(ray_session):
    args = ["solo-eval", "--game", "dice-race", "--agents", "random,prefer:action=2", "--games", "16",
            "--no-progress", "--json"]
    one = json.loads(CliRunner().invoke(cli, args, catch_exceptions=False).stdout)
    two = json.loads(CliRunner().invoke(cli, [*args, "--workers", "2"], catch_exceptions=False).stdout)
    for key in ("mean_score", "mean_evaluation", "ci95_evaluation", "titles"):
        assert one[key] == two[key]
    assert one["cards"] == two["cards"] and one["pairs"] == two["pairs"]
    shown = CliRunner().invoke(cli, [*args[:-1], "--workers", "2", "--show-map"],
                               catch_exceptions=False).output
    assert "best game: seed" in shown and "turn 6" in shown


def test_ray_tasks_of_long_games_stay_short():
    assert chunk_size(278, 2) == 35  # about four tasks per worker when the cost is unknown
    assert chunk_size(278, 2, seconds_per_game=0.1) == 35  # quick games: the same
    assert chunk_size(278, 2, seconds_per_game=30.0) == int(CHUNK_SECONDS // 30.0)  # a minute a task
    assert chunk_size(278, 2, seconds_per_game=600.0) == 1
    assert chunk_size(3, 8) == 1

"""``meeplelab tune-greedy``: the paired coordinate search, the command's files, and its errors."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from agents.base import make_agent
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.cli.main import run
from experiments.eval.tune_greedy import coordinate_search, greedy_model, greedy_spec, parse_factors

OFFSETS = np.random.default_rng(0).normal(0, 10, size=30)  # per-seed levels: cancel in paired gains


def _quadratic(w: np.ndarray) -> np.ndarray:
    """Noise-free scores with the optimum at (3, 0): every seed gains the same from a change."""
    return OFFSETS - (w[0] - 3.0) ** 2 - w[1] ** 2


def test_search_keeps_each_move_that_gains_and_multiplies_the_best_value_so_far():
    rows = []
    result = coordinate_search(_quadratic, ("a", "b"), np.array([1.0, 1.0]), factors=(0.0, 2.0), rounds=2,
                               on_trial=rows.append)
    played = [(r["round"], r["weight"], r["value"], r["accepted"]) for r in rows]
    assert played == [(0, "a", 0.0, False), (0, "a", 2.0, True), (0, "b", 0.0, True),
                      (1, "a", 0.0, False), (1, "a", 4.0, False)]  # 2 x 2 = 4 ties 2: no gain
    assert result.weights.tolist() == [2.0, 0.0] and result.changed() == {"a": 2.0, "b": 0.0}
    assert result.mean == pytest.approx(float(_quadratic(np.array([2.0, 0.0])).mean()))
    assert result.start_mean == pytest.approx(float(_quadratic(np.array([1.0, 1.0])).mean()))


def test_integer_weights_step_by_one_and_a_noisy_gain_is_not_kept():
    result = coordinate_search(_quadratic, ("a", "b"), np.array([1.0, 0.0]), factors=(2.0,), rounds=3,
                               integers=("a",))
    assert result.weights.tolist() == [3.0, 0.0]  # 1 -> 2 -> 3, one step per round
    noise = np.random.default_rng(1).normal(0, 5, size=(64, 30))
    calls = iter(range(64))

    def noisy(w: np.ndarray) -> np.ndarray:  # a small true gain under large per-trial noise
        return OFFSETS + 0.1 * w[0] + noise[next(calls)]

    kept = coordinate_search(noisy, ("a",), np.array([1.0]), factors=(2.0,), rounds=1, z=2.0)
    assert kept.trials[0]["gain"] < 2.0 * kept.trials[0]["se"] and kept.weights.tolist() == [1.0]


def test_a_round_that_keeps_nothing_ends_the_search():
    rows = []
    result = coordinate_search(_quadratic, ("a", "b"), np.array([3.0, 0.0]), factors=(0.5, 2.0), rounds=3,
                               on_trial=rows.append)
    assert {r["round"] for r in rows} == {0} and len(rows) == 2  # b = 0 has no move; a's two are worse
    assert result.weights.tolist() == [3.0, 0.0]


def test_spec_names_the_preset_and_the_changed_weights():
    names = ("x", "y", "z")
    tuned, start = np.array([1.0, 0.5, 2.0]), np.array([1.0, 1.0, 2.0])
    assert greedy_spec(names, tuned, start, "default") == "greedy:y=0.5"
    assert greedy_spec(names, np.ones(3), np.ones(3), "progress") == "greedy:preset=progress"
    assert greedy_spec(names, np.ones(3), np.ones(3), "default") == "greedy"


@pytest.mark.parametrize("game,args", [("cascadia", ["--players", "2"]), ("dorfromantik", []),
                                       ("cartographers", ["--start", "progress"])])
def test_command_writes_trials_and_a_result_whose_spec_plays_the_tuned_weights(tmp_path, game, args):
    out = tmp_path / game
    code = run(["tune-greedy", game, *args, "--seeds", "0-5", "--rounds", "1", "--factors", "0,2",
                "--check-seeds", "100-105", "--no-progress", "--out", str(out)])
    assert code == 0
    result = json.loads((out / "result.json").read_text())
    with open(out / "trials.csv") as handle:
        trials = list(csv.DictReader(handle))
    model = greedy_model(game, int(args[1]) if args[:1] == ["--players"] else None)
    assert len(trials) >= len(model.names) and {t["weight"] for t in trials} <= set(model.names)
    assert result["tuned_mean"] >= result["start_mean"]
    weights = np.array([result["weights"][n] for n in model.names])
    assert result["tuned_mean"] == pytest.approx(float(model.score(weights, 0, 6).mean()))  # reproducible
    kept = [t for t in trials if t["accepted"] == "True"]
    assert set(result["changed"]) == {t["weight"] for t in kept}
    agent_game = make_game(game, players=2) if game == "cascadia" else make_game(game)
    assert np.array_equal(make_agent(result["spec"], agent_game).weights, weights)
    check = result["check"]
    assert check["seeds"] == "100-105" and check["ci95"][0] <= check["gain"] <= check["ci95"][1]


@pytest.mark.parametrize("args,message", [
    (["chess"], "unknown game 'chess'"),
    (["cartographers", "--players", "3"], "solo"),
    (["cascadia", "--metric", "evaluation"], "base or total"),
    (["dorfromantik", "--seeds", "0-9", "--check-seeds", "5-20"], "overlap"),
    (["dorfromantik", "--factors", "1,-2"], ">= 0"),
    (["dorfromantik", "--seeds", "3-3"], "at least two seeds"),
    (["cascadia", "--start", "clever"], "unknown preset 'clever'"),
])
def test_bad_input_names_the_problem(tmp_path, capsys, args, message):
    assert run(["tune-greedy", *args, "--no-progress", "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_an_out_folder_under_a_file_is_one_line(tmp_path, capsys):
    taken = tmp_path / "results.txt"
    taken.write_text("kept\n")
    out = taken / "tuned"
    assert run(["tune-greedy", "dorfromantik", "--seeds", "0-1", "--no-progress", "--out", str(out)]) == 2
    assert f"--out {out} is under {taken}, which is a file, not a folder" in capsys.readouterr().err
    assert taken.read_text() == "kept\n"


def test_parse_factors():
    assert parse_factors("0, 0.5,2") == (0.0, 0.5, 2.0)
    with pytest.raises(ConfigError, match="comma-separated"):
        parse_factors("a,b")

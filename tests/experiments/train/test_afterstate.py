"""meeplelab train --algo afterstate: self-play returns, the returns fit, configs and a tiny run."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from agents.base import make_agent
from agents.learned import dorfromantik as D
from agents.learned.fit import fit_returns
from agents.learned.model import save_model
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.common.runner import play_game
from experiments.train.distill import run_distill
from experiments.train.distill_config import load_config, validate_config
from tests.experiments.train.test_ppo import scalars
from tests.paths import CONFIGS, REPO_ROOT


def tiny_config(**sections) -> dict:
    raw = {"name": "tiny-afterstate", "game": "dorfromantik",
           "label": {"games": 4, "width": 3, "targets": "returns", "explore": 0.2, "chunk_games": 2},
           "run": {"iterations": 2, "workers": 1, "eval_games": 3, "first_seed": 300_000}}
    for key, value in sections.items():
        raw[key] = {**raw.get(key, {}), **value}
    return validate_config(raw)


def test_returns_are_the_points_scored_from_each_decision_on(tmp_path):
    game = make_game("dorfromantik")
    rows = D.return_games(game, [300_001], D.greedy_theta(), explore=0.0, width=4, seed=3)
    final = rows["scores"][0]
    assert rows["target"][0] == final  # nothing scored before the first placement
    assert np.all(np.diff(rows["target"]) <= 0)  # Dorfromantik's total never falls
    assert rows["target"][-1] >= 0 and rows["features"].shape == (rows["target"].size, D.N_FEATURES)
    # without exploration the game is the linear policy's game
    theta = D.greedy_theta()
    theta[:, 0] += 0.5
    policy = D.return_games(game, [300_001], theta, explore=0.0)["scores"][0]
    save_model(tmp_path, "dorfromantik", {}, theta, D.DEFAULT_PRESET, {})
    assert policy == play_game(game, [f"learned:{tmp_path}"], 300_001).totals[0]


@pytest.mark.parametrize("players", [1, 2])
def test_cartographers_returns_follow_the_seasons_and_the_policy(tmp_path, players):
    from agents.learned import cartographers as C

    game = make_game("cartographers", players=players)
    theta = C.greedy_theta()
    theta[:, 5] += 0.3
    rows = C.return_games(game, [300_004], theta, explore=0.0)
    assert rows["target"][:players].tolist() == rows["scores"][0].tolist()  # nothing recorded yet
    assert rows["features"].shape == (rows["target"].size, C.N_FEATURES)
    save_model(tmp_path, "cartographers", {"players": players}, theta, C.DEFAULT_PRESET, {})
    played = play_game(game, [f"learned:{tmp_path}"] * players, 300_004).totals
    assert rows["scores"][0].tolist() == played
    explored = C.return_games(game, [300_004], theta, explore=0.5, seed=1)
    assert explored["scores"][0].tolist() != played and \
        C.return_games(game, [300_004], theta, explore=0.5, seed=1)["target"].tolist() == \
        explored["target"].tolist()


def test_exploring_self_play_is_reproducible_and_explores():
    game = make_game("dorfromantik")
    one = D.return_games(game, [300_002, 300_003], D.greedy_theta(), explore=0.5, width=6, seed=7)
    two = D.return_games(game, [300_002, 300_003], D.greedy_theta(), explore=0.5, width=6, seed=7)
    for key in one:
        assert np.array_equal(one[key], two[key]), key
    plain = D.return_games(game, [300_002, 300_003], D.greedy_theta(), explore=0.0, width=6, seed=7)
    assert not np.array_equal(one["scores"], plain["scores"])
    with pytest.raises(ConfigError, match="explore"):
        D.return_games(game, [1], D.greedy_theta(), explore=1.5)


def test_the_returns_fit_finds_the_direction_that_predicts_the_returns():
    rng = np.random.default_rng(0)
    n, d = 4000, 6
    x = rng.normal(size=(n, d))
    phase = rng.integers(2, size=n)
    truth = np.array([[1.0, -2.0, 0.5, 0.0, 0.0, 3.0], [0.0, 1.0, 1.0, -1.0, 2.0, 0.0]])
    y = np.einsum("ij,ij->i", x, truth[phase]) + 10.0 * phase + rng.normal(scale=0.5, size=n)
    rows = {"group": np.arange(n), "phase": phase, "features": x.astype(np.float32), "target": y}
    theta0 = np.zeros((2, d))
    theta0[:, 0] = 1.0
    theta, report = fit_returns(rows, theta0)
    assert np.allclose(theta, truth, atol=0.05)  # the intercept (10 per phase) is dropped
    assert report.held_out_gain > 1.0 and report.ridge < np.inf
    noise = {**rows, "target": rng.normal(size=n)}  # nothing to learn: the held-out error says so
    _, flat = fit_returns(noise, theta0)
    assert flat.held_out_gain < 0.01


@pytest.mark.parametrize("change, fragment", [
    ({"label": {"targets": "rollouts"}}, "label.targets must be one of playouts, returns"),
    ({"label": {"explore": 1.5}}, "label.explore must be a probability"),
    ({"label": {"explore": True}}, "label.explore must be a probability"),
])
def test_bad_afterstate_configs_fail_in_one_line(change, fragment):
    with pytest.raises(ConfigError, match=fragment):
        tiny_config(**change)


def test_games_without_self_play_returns_are_refused():
    with pytest.raises(ConfigError, match="not available for cascadia"):
        validate_config({"game": "cascadia", "label": {"targets": "returns"}})


def test_shipped_afterstate_configs_are_valid():
    paths = sorted((CONFIGS / "afterstate").glob("*.yaml"))
    assert paths
    for path in paths:
        config = load_config(path)
        assert config["game"] in path.stem and config["label"]["targets"] == "returns"


def test_tiny_afterstate_run_checkpoints_logs_and_plays(tmp_path):
    state = run_distill(tiny_config(), tmp_path, progress=False)
    assert state["iteration"] == 1 and [e["iteration"] for e in state["evaluations"]] == [0, 1]
    assert state["evaluations"][1]["rows"] > state["evaluations"][0]["rows"] > 0  # every game so far
    assert len(scalars(tmp_path)["distill/diff"]) == 2
    agent = make_agent(f"learned:{tmp_path}", make_game("dorfromantik"))
    assert agent.theta.shape == (D.N_PHASES, D.N_FEATURES)
    assert not np.array_equal(agent.theta, D.greedy_theta())
    (tmp_path / "again").mkdir()
    again = run_distill(tiny_config(), tmp_path / "again", progress=False)  # the same seed, the same model
    assert again["best"]["diff"] == state["best"]["diff"]


def test_the_cli_keeps_afterstate_and_distill_configs_apart(tmp_path):
    cli = [sys.executable, "-m", "experiments.cli", "train", "dorfromantik", "--out", str(tmp_path / "run")]
    config = str(CONFIGS / "afterstate" / "dorfromantik.yaml")
    wrong = subprocess.run([*cli, "--algo", "distill", "--config", config], cwd=REPO_ROOT,
                           capture_output=True, text=True)
    assert wrong.returncode == 2
    assert "label.targets returns is a config for --algo afterstate, not --algo distill" in wrong.stderr

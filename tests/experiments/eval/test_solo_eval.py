"""meeplelab solo-eval: on the dice-race test game (fast, exact) and on solo Cartographers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from envs.core.errors import ConfigError
from experiments.cli.main import cli

REQUIRED = ("games", "mean_score", "mean_threshold", "mean_evaluation", "ci95_evaluation")


def _invoke(args: list[str]):
    result = CliRunner().invoke(cli, args)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result


def test_dice_solo_eval_report(tmp_path):
    out = tmp_path / "solo"
    result = _invoke(["solo-eval", "--game", "dice-race", "--agents", "random,prefer:action=2",
                      "--games", "30", "--seed", "5", "--out", str(out), "--json", "--no-progress"])
    summary = json.loads(result.output)
    games = pd.read_csv(out / "games.csv")
    assert all(key in summary for key in REQUIRED) and summary["agent"] == "random"
    assert len(summary["ci95_evaluation"]) == 2
    for name, agent in summary["agents"].items():
        mine = games[games.agent == name]
        assert agent["games"] == 30
        assert agent["mean_evaluation"] == pytest.approx((mine.total - mine.x_threshold).mean())
        assert agent["mean_evaluation"] == pytest.approx(agent["mean_score"] - agent["mean_threshold"])
        assert agent["share_at_or_above_0"] == pytest.approx((mine.x_evaluation >= 0).mean())
        assert sum(agent["titles"].values()) == 30
        lo, hi = agent["ci95_evaluation"]
        assert lo < agent["mean_evaluation"] < hi
        # per card: every game has 2 cards, and a card's mean matches the games that had it
        cards = summary["cards"][name]
        assert sum(c["games"] for c in cards.values()) == 60
        for card, entry in cards.items():
            had = mine[(mine.edict_A == card) | (mine.edict_B == card)]
            assert entry["games"] == len(had)
            assert entry["mean_evaluation"] == pytest.approx(had.x_evaluation.mean())
    # same seeds, same cards: the thresholds are paired exactly
    by_agent = games.pivot(index="seed", columns="agent", values="x_threshold")
    assert (by_agent["random"] == by_agent["prefer(action=2)"]).all()
    assert summary["pairs"][0]["n"] == 30
    for name in ("report.md", "summary.json", "cards.csv", "combinations.csv", "evaluation.png", "scores.png",
                 "paired_differences.png"):
        assert (out / name).stat().st_size > 0, name
    combos = pd.read_csv(out / "combinations.csv")
    assert combos.groupby("agent").games.sum().tolist() == [30, 30]
    pairs = pd.read_csv(out / "card_pairs.csv")  # two cards per game: one pair per game
    assert pairs.groupby("agent").games.sum().tolist() == [30, 30]
    for name in ("report.md", "evaluation.png"):
        assert (out / name).read_bytes()[:4] in (b"# So", b"\x89PNG")
    assert "## Per scoring card" in (out / "report.md").read_text()


def test_single_agent_flat_keys_and_table_output():
    result = _invoke(["solo-eval", "--game", "dice-race", "--agent", "prefer:action=1", "--games", "10",
                      "--no-progress", "--show-map"])
    assert "title distribution" in result.output and "Middle Way" in result.output  # a card row
    assert "best game: seed" in result.output and "turn 6" in result.output
    summary = json.loads(_invoke(["solo-eval", "--game", "dice-race", "--agent", "prefer:action=1",
                                  "--games", "10", "--no-progress", "--json"]).output)
    assert summary["mean_score"] == 18.0 and summary["games"] == 10 and summary["pairs"] == []


def test_solo_eval_errors_name_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="not both"):
        CliRunner().invoke(cli, ["solo-eval", "--agent", "random", "--agents", "random"],
                           catch_exceptions=False)
    with pytest.raises(ConfigError, match="unknown agent 'alphazero'"):
        CliRunner().invoke(cli, ["solo-eval", "--game", "dice-race", "--agents", "random,alphazero",
                                 "--out", str(tmp_path)], catch_exceptions=False)
    assert not (tmp_path / "games.csv").exists()  # refused before any game was played


def test_cartographers_solo_eval(tmp_path):
    from envs.core.registry import make_game
    from experiments.eval.solo_eval import title_table

    titles = {t for _, t in title_table(make_game("cartographers"))}
    result = _invoke(["solo-eval", "--agents", "random,greedy", "--games", "4", "--seed", "0", "--out",
                      str(tmp_path), "--json", "--no-progress"])
    summary = json.loads(result.output)
    assert all(key in summary for key in REQUIRED) and summary["games"] == 4
    games = pd.read_csv(tmp_path / "games.csv")
    assert len(games) == 8 and set(games.x_title) <= titles
    assert (games.x_evaluation == games.total - games.x_threshold).all()
    # common random numbers: both agents got the same four scoring cards on every seed
    cards = games.set_index(["seed", "agent"])[["edict_A", "edict_B", "edict_C", "edict_D"]].unstack("agent")
    for edict in "ABCD":
        assert (cards[f"edict_{edict}"]["random"] == cards[f"edict_{edict}"]["greedy"]).all()
    for agent in ("random", "greedy"):
        per_card = summary["cards"][agent]
        assert sum(c["games"] for c in per_card.values()) == 16
        assert all(c["mean_card_points"] is not None for c in per_card.values())
    # the per-card points add up to the edict categories of the score sheet
    mine = games[games.agent == "greedy"]
    edict_points = sum(mine[[c for c in games.columns if c.startswith("cat_") and c.endswith(f"_{e}")]]
                       .sum(axis=1) for e in "ABCD")
    def category_sum(suffix: str) -> pd.Series:
        return mine[[c for c in games.columns if c.startswith("cat_") and c.endswith(suffix)]].sum(axis=1)

    coins, monsters = category_sum("_coins"), category_sum("_monsters")
    assert np.array_equal(edict_points + coins + monsters, mine.total)


def test_cartographers_common_random_numbers_until_first_different_choice():
    from envs.core.registry import make_game
    from experiments.common.runner import play_game

    game = make_game("cartographers")

    def trace(agent: str, seed: int):
        states, actions = [], []

        def hook(state, seat, action):
            states.append({k: np.copy(v) for k, v in vars(state).items() if isinstance(v, np.ndarray)})
            actions.append(action)

        play_game(game, [agent], seed, on_step=hook)
        return states, actions

    for seed in (0, 1):
        states_a, actions_a = trace("random", seed)
        states_b, actions_b = trace("greedy", seed)
        first = next(i for i, (x, y) in enumerate(zip(actions_a, actions_b, strict=False)) if x != y)
        for i in range(first + 1):
            assert all(np.array_equal(states_a[i][k], states_b[i][k]) for k in states_a[i]), (seed, i)

"""``meeplelab decision-time``: agents timed on the same positions."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from agents.base import make_agent
from envs.core.registry import make_game
from envs.core.rng import numpy_generator
from experiments.cli.main import run
from experiments.eval.decision_time import ratio_interval, sample_positions, time_agents


def test_positions_are_every_nth_decision_of_the_source_games_and_repeat_from_their_seed():
    game = make_game("dorfromantik")
    positions = sample_positions(game, "greedy", seed=3, count=5, every=4)
    again = sample_positions(game, "greedy", seed=3, count=5, every=4)
    assert len(positions) == 5
    placed = [int(game.observation(p, 0).sum()) for p in positions]
    assert placed == [int(game.observation(p, 0).sum()) for p in again]
    assert len(set(placed)) == 5, "positions four decisions apart differ"
    first = game.new_game(3)
    assert np.array_equal(game.observation(positions[0], 0), game.observation(first, 0))


def test_every_agent_decides_every_position_as_it_would_alone_in_alternating_order():
    game = make_game("cartographers")
    positions = sample_positions(game, "random", seed=0, count=3, every=7)
    timings = time_agents(game, ["greedy", "random"], positions)
    assert [(t.position, t.agent) for t in timings] == [
        (0, "greedy"), (0, "random"), (1, "random"), (1, "greedy"), (2, "greedy"), (2, "random")]
    greedy = make_agent("greedy", game)
    for t in timings:
        assert t.cpu_seconds >= 0.0 and t.wall_seconds > 0.0
        if t.agent == "greedy":
            state = positions[t.position].copy()
            rng = numpy_generator(t.position, "decision-time")
            assert t.action == greedy.act(state, game.legal_mask(state), rng)


def test_ratio_interval_is_the_ratio_of_means_with_a_bootstrap_interval():
    base = np.array([1.0, 2.0, 3.0, 4.0])
    assert ratio_interval(2.0 * base, base) == (2.0, 2.0, 2.0)
    ratio, low, high = ratio_interval(np.array([1.0, 4.0, 3.0, 8.0]), base)
    assert ratio == pytest.approx(1.6) and low < ratio < high


def test_the_command_prints_each_agent_and_writes_one_row_per_position_and_agent(tmp_path, capsys):
    assert run(["decision-time", "dorfromantik", "--agents", "greedy,random", "--positions", "4",
                "--every", "2", "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "4 positions (one decision in 2 of greedy games from seed 0)" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith(("greedy ", "random "))}
    assert "1.000 [1.000, 1.000]" in lines["greedy"] and set(lines) == {"greedy", "random"}
    with open(tmp_path / "timings.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8 and {r["agent"] for r in rows} == {"greedy", "random"}


@pytest.mark.parametrize("args,message", [
    (["chess", "--agents", "greedy"], "unknown game 'chess'"),
    (["dorfromantik", "--agents", "greedy,grandmaster"], "grandmaster"),
    (["dorfromantik", "--agents", "greedy", "--every", "0"], "--positions and --every must be at least 1"),
])
def test_bad_input_is_one_line(capsys, args, message):
    assert run(["decision-time", *args, "--no-progress"]) == 2
    assert message in capsys.readouterr().err

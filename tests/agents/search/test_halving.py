"""Sequential halving (agents/search/halving.py) and the ``halving=true`` option of the compiled turn
searches: budget, choice, deadline, determinism, no peeking, option errors."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.search import halving
from agents.search.halving import run_halving, run_uniform
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.agents.peeking import decisions_on_twins, twin_states
from tests.agents.search.test_turn import _midgame

HALVING = "mcts:engine=compiled,rollout=greedy,simulations=40,widening=1/0.5,halving=true"


def _noisy_candidates(means: list[float], noise: float, calls: list[tuple[int, int]]):
    """play(k, seed): mean k plus noise that depends on the future only (paired) and a little on k."""
    def play(k: int, seed: int) -> np.ndarray:
        calls.append((k, seed))
        rng = np.random.default_rng([seed % 2**32, k])
        shared = np.random.default_rng(seed % 2**32).normal(0.0, noise)
        return np.array([means[k] + shared + rng.normal(0.0, 0.1)])
    return play


def test_halving_finds_the_best_candidate_and_spends_the_budget_on_the_finalists():
    means = [0.0, 0.5, 3.0, 1.0, 2.5, -1.0, 0.2, 0.1]
    calls: list[tuple[int, int]] = []
    stream = np.array([12345], dtype=np.uint64)
    best, sums, counts, played = run_halving(8, 96, 1, 0, stream, _noisy_candidates(means, 5.0, calls))
    assert best == 2
    assert played == len(calls) <= 96
    # 3 rounds of 32 playouts: 8 x 4 futures, then 4 x 8 more, then 2 x 16 more
    assert sorted(counts.tolist()) == [4, 4, 4, 4, 12, 12, 28, 28]
    assert counts[2] == counts[4] == 28  # the two best reach the final
    per_seed = {}
    for k, seed in calls:
        per_seed.setdefault(seed, set()).add(k)
    assert all(len(ks) in (8, 4, 2) for ks in per_seed.values())  # every survivor plays every future


def test_halving_ties_keep_the_prior_order_and_one_candidate_needs_no_playout():
    calls: list[tuple[int, int]] = []
    play = _noisy_candidates([1.0, 1.0, 1.0, 1.0], 0.0, calls)
    flat = lambda k, seed: np.array([1.0])  # noqa: E731 - every candidate equal
    best, _, counts, _ = run_halving(4, 16, 1, 0, np.array([1], dtype=np.uint64), flat)
    assert best == 0 and counts[0] == counts.max()
    best, _, _, played = run_halving(1, 16, 1, 0, np.array([1], dtype=np.uint64), play)
    assert (best, played, calls) == (0, 0, [])


def test_halving_stops_at_the_deadline_with_whole_futures_only(monkeypatch):
    clock = [0.0]  # a fake clock: every playout takes one second
    monkeypatch.setattr(halving.time, "perf_counter", lambda: clock[0])

    def slow(k: int, seed: int) -> np.ndarray:
        clock[0] += 1.0
        return np.array([float(k == 3)])

    # 6 candidates, 3 rounds; round 1 gives each candidate 1e6 // 3 // 6 futures: the deadline
    # (after 20 playouts) cuts the 4th future after two of its playouts
    best, _, counts, played = run_halving(6, 10**6, 1, 0, np.array([7], dtype=np.uint64), slow, deadline=20.0)
    assert played == 20 and counts.tolist() == [3] * 6 and best == 3
    clock[0] = 0.0
    best, _, counts, played = run_halving(6, 10**6, 1, 0, np.array([7], dtype=np.uint64), slow, deadline=4.0)
    assert played == 4 and counts.sum() == 0 and best == 0  # no whole future: the prior's first


def test_the_even_split_plays_every_candidate_on_the_same_futures():
    calls: list[tuple[int, int]] = []
    play = _noisy_candidates([0.0, 2.0, 1.0, 1.5], 5.0, calls)
    best, sums, counts, played = run_uniform(4, 14, 1, 0, np.array([3], dtype=np.uint64), play)
    assert best == 1 and played == 12 and counts.tolist() == [3, 3, 3, 3]  # 14 // 4 = 3 futures
    seeds = [seed for _, seed in calls]
    assert all(seeds[i:i + 4] == [seeds[i]] * 4 for i in range(0, 12, 4)) and len(set(seeds)) == 3


def test_cascadia_halving_search_budget_and_determinism():
    game, state = _midgame(1, 3)
    runs = []
    for _ in range(2):
        agent = make_agent(HALVING, game)
        action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(4))
        stats = agent.last_stats
        runs.append((action, stats["simulations"], stats["best_mean"]))
        # ceil(40 ** 0.5) = 7 candidates, 3 rounds (a round gets its share of what is left):
        # 7 x 1 future, then 4 x 4 more, then 2 x 8 more = 39 playouts; the finalists saw 13 futures
        assert stats["children"] == 7 and stats["simulations"] == 39 and stats["best_visits"] == 13
    assert runs[0] == runs[1]
    assert game.legal_mask(state)[runs[0][0]]


@pytest.mark.parametrize("players", [1, 4])
def test_cascadia_halving_search_does_not_read_the_hidden_future(players):
    game, state = _midgame(players, 30 + players)
    first, second = twin_states(game, state, np.random.default_rng(players))
    a, b = decisions_on_twins(game, lambda: make_agent(HALVING, game), first, second, players)
    assert a == b


def test_halving_option_errors_name_the_problem():
    cascadia = make_game("cascadia", players=1)
    with pytest.raises(ConfigError, match="halving must be true or false"):
        make_agent("mcts:engine=compiled,rollout=greedy,simulations=8,halving=3", cascadia)
    with pytest.raises(ConfigError, match="halving=true"):
        make_agent("mcts:simulations=8,halving=true", cascadia)
    with pytest.raises(ConfigError, match="halving=true"):
        make_agent("mcts:engine=compiled,rollout=greedy,simulations=8,halving=true",
                   make_game("dorfromantik"))


def test_a_bonus_joins_the_means_where_halving_ranks_them():
    """Candidates whose playouts differ by noise only: a bonus on candidate 2 carries it through every round;
    the same bonus against a real gap of 2 points does not."""
    bonus = np.array([0.0, 0.0, 0.5, 0.0])
    for seed in (7, 8, 9):
        tied = _noisy_candidates([1.0, 1.0, 1.0, 1.0], 0.0, [])
        assert run_halving(4, 32, 1, 0, np.array([seed], dtype=np.uint64), tied, bonus=bonus)[0] == 2
        gap = _noisy_candidates([3.0, 1.0, 1.0, 1.0], 0.0, [])
        assert run_halving(4, 32, 1, 0, np.array([seed], dtype=np.uint64), gap, bonus=bonus)[0] == 0
        for play, chosen in ((tied, 2), (gap, 0)):  # the even split ranks the same way
            assert run_uniform(4, 32, 1, 0, np.array([seed], dtype=np.uint64), play, bonus=bonus)[0] == chosen

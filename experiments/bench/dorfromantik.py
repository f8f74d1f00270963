"""Dorfromantik speed on one core: compiled random games, placement masks, env steps, and the ratio over
the plain-Python reference measured in the same run.

Rates are per CPU second of this (single-threaded) process (``time.process_time``), so other load on
a shared machine does not distort them; ``first_game_s`` is wall time."""

from __future__ import annotations

import time

import numpy as np

from agents.greedy import dorfromantik_kernels as GK
from agents.learned import dorfromantik_after as LA
from agents.learned import dorfromantik_kernels as LK
from agents.learned.dorfromantik import greedy_theta
from envs.core.rng import new_stream
from envs.dorfromantik import kernels as K
from envs.dorfromantik.env import DorfromantikEnv
from envs.dorfromantik.game import DorfromantikGame
from envs.dorfromantik.reference import play_random_reference


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _valuations(game: DorfromantikGame, positions: list, reps: int, learned: bool) -> tuple[float, float]:
    """Valuations of every legal placement per CPU second, by frontier cell and by its placement-by-placement
    reference: greedy's (``greedy_values``, the search playouts' inner step) or, with ``learned``, the
    linear policy's (``linear_values``, the learned playouts' step; the cost does not depend on the
    weights, so greedy's weights in every phase stand in for a model)."""
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values = np.zeros((K.MAX_FRONTIER, 6))
    weights = greedy_theta() if learned else GK.DEFAULT_WEIGHTS
    tables = (game._rot_edges, game._task_type, game._flag, weights)
    boards = [s.board() for s in positions]
    rates = []
    kernels = ((LA.linear_values, LK.linear_values_by_placement) if learned
               else (GK.greedy_values, GK.placement_values))
    for kernel in kernels:
        kernel(boards[0], *tables, mask, values)
        t0 = time.process_time()
        for _ in range(reps):
            for board in boards:
                kernel(board, *tables, mask, values)
        rates.append(_rate(reps * len(boards), time.process_time() - t0))
    return rates[0], rates[1]


def run_bench(quick: bool = False) -> dict:
    """Measure and return the figures (keys below); ``quick`` runs fewer repetitions."""
    start = time.perf_counter()
    game = DorfromantikGame()
    state = game.new_game(0)
    game.rollout_returns(state, 0)
    first_game_s = time.perf_counter() - start          # imports + numba (cache or compile) + one game

    args = (game._markers, game._rules, game._rot_edges, game._task_type, game._flag, 1)
    totals = np.zeros(20_000, np.int64)
    K.run_random_games(5, new_stream(1, "bench-warmup"), *args, totals)
    n_games = 2_000 if quick else 20_000
    t0 = time.process_time()
    K.run_random_games(n_games, new_stream(1, "bench"), *args, totals)
    compiled_games_per_s = _rate(n_games, time.process_time() - t0)
    mean_random_score = float(totals[:n_games].mean())

    n_greedy = 10 if quick else 60
    seeds_state = [game.new_game(seed) for seed in range(n_greedy + 1)]
    game.rollout_returns(seeds_state[-1], 0, "greedy")    # warm-up
    t0 = time.process_time()
    greedy_scores = [game.rollout_returns(s, i, "greedy")[0] for i, s in enumerate(seeds_state[:n_greedy])]
    compiled_greedy_games_per_s = _rate(n_greedy, time.process_time() - t0)

    n_ref = 2 if quick else 6
    t0 = time.process_time()
    for seed in range(n_ref):
        play_random_reference(seed)
    reference_games_per_s = _rate(n_ref, time.process_time() - t0)

    # placement masks on mid-game positions (about 30 tiles placed)
    positions = []
    for seed in range(20):
        s = game.new_game(seed)
        rng = np.random.default_rng(seed)
        for _ in range(30):
            legal = game.legal_placements(s)
            game.place_at(s, *legal[rng.integers(len(legal))])
        positions.append(s)
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    reps = 50 if quick else 500
    t0 = time.process_time()
    for _ in range(reps):
        for s in positions:
            K.legal_moves(s.cells, s.frontier, s.uf, s.meta, game._rot_edges, game._task_type, mask)
    kernel_masks_per_s = _rate(reps * len(positions), time.process_time() - t0)
    valuations_per_s, reference_valuations_per_s = _valuations(game, positions, reps, learned=False)
    learned_per_s, reference_learned_per_s = _valuations(game, positions, reps, learned=True)
    reps_py = 10 if quick else 50
    t0 = time.process_time()
    for _ in range(reps_py):
        for s in positions:
            game._compute_mask(s)          # uncached: the full Python path
    action_masks_per_s = _rate(reps_py * len(positions), time.process_time() - t0)

    env = DorfromantikEnv()
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    budget = 1.0 if quick else 4.0
    t0 = time.process_time()
    while time.process_time() - t0 < budget:
        obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        if done:
            obs, info = env.reset()
    env_steps_per_s = _rate(steps, time.process_time() - t0)

    return {
        "compiled_games_per_s": compiled_games_per_s,
        "reference_games_per_s": reference_games_per_s,
        "speedup_vs_reference": compiled_games_per_s / reference_games_per_s,
        "placement_masks_per_s": kernel_masks_per_s,
        "action_masks_per_s": action_masks_per_s,
        "env_steps_per_s": env_steps_per_s,
        "compiled_greedy_games_per_s": compiled_greedy_games_per_s,
        "greedy_valuations_per_s": valuations_per_s,
        "greedy_valuations_reference_per_s": reference_valuations_per_s,
        "greedy_valuation_speedup": valuations_per_s / reference_valuations_per_s,
        "learned_valuations_per_s": learned_per_s,
        "learned_valuations_reference_per_s": reference_learned_per_s,
        "learned_valuation_speedup": learned_per_s / reference_learned_per_s,
        "mean_random_score": mean_random_score,
        "mean_greedy_score": float(np.mean(greedy_scores)),
        "first_game_s": first_game_s,
        "games_timed": n_games,
    }

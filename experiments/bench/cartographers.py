"""Cartographers speed: the compiled engine against the plain reference, measured in the same run.

Figures (one core): whole random solo games inside numba (setup, every decision, four season
scorings), the legal-placement mask of a position (kernel vs ``reference.legal_placements`` for
the same card's shapes), each scoring card (kernel in a numba loop vs ``reference.score_card`` on
the same maps), env steps per second through ``gymnasium.make("meeplelab/Cartographers-v0")``,
and the time to the first finished game of a fresh process with an empty and with a warm numba
cache. On a shared machine wall-clock figures vary with the load, so the throughput figures are
also given per CPU second of this process (``*_cpu``), which is what measures the code, and the
first-game runs report the child's CPU seconds too (``first_game_cpu_s_*``).

``python -m experiments.bench.cartographers [--quick]`` prints the JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from numba import njit

from envs.cartographers import kernels as K
from envs.cartographers import reference as R
from envs.cartographers.game import CartographersGame

ROOT = Path(__file__).resolve().parents[2]
FIRST_GAME = (
    "import time; t0 = time.perf_counter()\n"
    "from envs.cartographers.game import CartographersGame\n"
    "g = CartographersGame()\n"
    "s = g.new_game(0)\n"
    "g.play_random(s, 0)\n"
    "assert g.is_over(s)\n"
    "print(time.perf_counter() - t0, time.process_time())\n"
)


@njit(cache=True)
def _score_loop(card: int, grids: np.ndarray, ruins: np.ndarray, reps: int) -> int:
    scratch = np.empty(K.SCRATCH, np.int32)
    total = 0
    for _ in range(reps):
        for i in range(grids.shape[0]):
            total += K.score_card_into(card, grids[i], ruins, scratch)
    return total


@njit(cache=True)
def _mask_loop(grid: np.ndarray, ruins: np.ndarray, bits: np.ndarray, starts: np.ndarray,
               require: bool, out: np.ndarray, reps: int) -> int:
    total = 0
    for _ in range(reps):
        for j in range(starts.shape[0] - 1):
            total += K.placement_mask(grid, ruins, bits, starts[j], starts[j + 1], require, out)
    return total


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _sample_maps(game: CartographersGame, n: int) -> np.ndarray:
    """Maps of random games stopped at random points (early, mid and late positions)."""
    rng = np.random.default_rng(0)
    grids = []
    for seed in range(n):
        s = game.new_game(seed)
        actions = game.play_random(s.copy(), seed)
        for a in actions[: rng.integers(1, len(actions) + 1)]:
            game.step(s, a)
        grids.append(s.grid[0].copy())
    return np.array(grids, dtype=np.int8)


def _first_game(cache_dir: str) -> tuple[float, float]:
    """(wall seconds of a fresh interpreter that plays one whole game, its CPU seconds)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FIRST_GAME], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"first-game subprocess failed: {out.stderr[-2000:]}")
    wall = time.perf_counter() - start
    return wall, float(out.stdout.split()[-1])


def _env_steps_per_s(steps: int) -> tuple[float, float] | tuple[None, None]:
    """Solo env steps/s through ``gymnasium.make``: (time inside ``env.step`` only, the whole
    loop including the random policy's pick from the mask and the resets)."""
    if not (ROOT / "envs" / "cartographers" / "env.py").exists():
        return None, None
    env = gym.make("meeplelab/Cartographers-v0")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    done_steps = 0
    in_step = 0.0
    start = time.perf_counter()
    while done_steps < steps:
        legal = np.flatnonzero(info["action_mask"] > 0)  # a bool view: nonzero on float32 is 8x slower
        action = int(legal[rng.integers(legal.size)])
        t0 = time.perf_counter()
        _, _, terminated, truncated, info = env.step(action)
        in_step += time.perf_counter() - t0
        done_steps += 1
        if terminated or truncated:
            _, info = env.reset(seed=done_steps)
    return done_steps / in_step, done_steps / (time.perf_counter() - start)


def run_bench(quick: bool = False) -> dict:
    """Measure and return the figures (``quick``: fewer repetitions, no cold-start runs)."""
    game = CartographersGame()
    tb = game.tb
    res: dict = {}

    # whole random solo games in the compiled loop
    n_games = 2000 if quick else 20000
    warm = np.zeros(10, dtype=np.int64)
    K.random_solo_games(tb, 10, 0, 14, True, True, warm)
    totals = np.zeros(n_games, dtype=np.int64)
    wall, cpu = _timed(lambda: K.random_solo_games(tb, n_games, 1, 14, True, True, totals))
    res["compiled_games_per_s"] = n_games / wall
    res["compiled_games_per_s_cpu"] = n_games / cpu
    res["random_solo_mean_score"] = float(totals.mean())

    # legal mask of a mid-game position: every orientation x anchor of Hamlet's two shapes
    maps = _sample_maps(game, 20 if quick else 60)
    hamlet = game.data.card_names.index("Hamlet")
    shapes = [int(tb.cards[hamlet, K.C_SHAPE + k]) for k in range(2)]
    starts = np.array([tb.shape_start[shapes[0]], tb.shape_start[shapes[0] + 1]], dtype=np.int32)
    starts2 = np.array([tb.shape_start[shapes[1]], tb.shape_start[shapes[1] + 1]], dtype=np.int32)
    out = np.zeros(tb.pl_bits.shape[0], dtype=bool)
    grid = maps[len(maps) // 2]
    reps = 2000 if quick else 20000

    def kernel_masks():
        _mask_loop(grid, tb.ruins, tb.pl_bits, starts, False, out, reps)
        _mask_loop(grid, tb.ruins, tb.pl_bits, starts2, False, out, reps)

    _mask_loop(grid, tb.ruins, tb.pl_bits, starts, False, out, 1)
    wall, _ = _timed(kernel_masks)
    res["mask_us"] = wall / reps * 1e6
    s = game.new_game(0)
    s.meta[K.M_CARD] = hamlet
    s.grid[0] = grid
    game.legal_mask(s)
    api_reps = 500 if quick else 3000
    wall, _ = _timed(lambda: [game.legal_mask(s) for _ in range(api_reps)])
    res["legal_mask_api_us"] = wall / api_reps * 1e6
    grid11, ruins11 = grid.reshape(11, 11), tb.ruins.reshape(11, 11)
    ref_reps = 3 if quick else 10
    wall, _ = _timed(lambda: [[R.legal_placements(grid11, ruins11, sh, False)
                               for sh in game.data.card_shapes[hamlet]] for _ in range(ref_reps)])
    res["mask_us_reference"] = wall / ref_reps * 1e6
    res["speedup_mask_vs_reference"] = res["mask_us_reference"] / res["mask_us"]

    # each scoring card, kernel (in a numba loop) vs reference, on the same maps
    names = game.data.scoring_names
    scoring_ns, scoring_ns_ref, ratios = {}, {}, []
    score_reps = 50 if quick else 500
    for card in range(16):
        _score_loop(card, maps, tb.ruins, 1)
        wall, _ = _timed(lambda card=card: _score_loop(card, maps, tb.ruins, score_reps))
        ns = wall / (score_reps * len(maps)) * 1e9
        rows = [m.reshape(11, 11) for m in maps]
        wall, _ = _timed(lambda card=card, rows=rows: [R.score_card(card, m, ruins11) for m in rows])
        ns_ref = wall / len(maps) * 1e9
        scoring_ns[names[card]] = ns
        scoring_ns_ref[names[card]] = ns_ref
        ratios.append(ns_ref / ns)
    res["scoring_ns"] = scoring_ns
    res["scoring_ns_reference"] = scoring_ns_ref
    res["speedup_scoring_vs_reference_min"] = float(min(ratios))
    res["speedup_scoring_vs_reference_median"] = float(np.median(ratios))
    res["speedup_vs_reference"] = float(min(res["speedup_mask_vs_reference"], min(ratios)))

    res["env_steps_per_s"], res["env_loop_steps_per_s"] = _env_steps_per_s(2000 if quick else 20000)

    if quick:
        for when in ("cold", "warm"):
            res[f"first_game_s_{when}"] = res[f"first_game_cpu_s_{when}"] = None
    else:
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            res["first_game_s_cold"], res["first_game_cpu_s_cold"] = _first_game(cache)
            res["first_game_s_warm"], res["first_game_cpu_s_warm"] = _first_game(cache)
    return res


if __name__ == "__main__":
    print(json.dumps(run_bench(quick="--quick" in sys.argv), indent=2))

"""Playout schedules of the compiled flat searches over paired futures: sequential halving (the
``halving=true`` option) and the even split.

A flat root search that spreads its playouts evenly wastes most of them on candidates that are
clearly worse after a few futures. Sequential halving (Karnin, Koren and Somekh, 2013) splits
the budget into ``ceil(log2(width))`` rounds of equal size; in each round every surviving
candidate plays the same fresh futures (paired, as in the uniform schedule), then the better
half by mean over all its futures so far survives. The last survivor is played. With the same
number of playouts the finalists are compared on many more futures than in a uniform split.

The searches call :func:`run_halving` or :func:`run_uniform` with a ``play(k, future_seed) ->
returns`` callback and their own chance stream, so this module knows nothing about any game.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from envs.core.rng import next_u64


def run_halving(width: int, budget: int, seats: int, player: int, stream: np.ndarray,
                play: Callable[[int, int], np.ndarray], deadline: float | None = None,
                bonus: np.ndarray | None = None) -> tuple[int, np.ndarray, np.ndarray, int]:
    """Sequential halving of candidates ``0..width-1`` (listed best-first by the prior: ties keep
    that order) within about ``budget`` playouts.

    ``play(k, seed)`` plays candidate ``k`` on the future drawn from ``seed`` and returns the final
    totals of every seat (float[seats]); the same seed gives every candidate the same future.
    ``player``'s mean total ranks the candidates. With a ``deadline`` (``time.perf_counter()``
    value) the search stops there; only futures that every survivor finished count. ``bonus``
    (float[width]) is added to every candidate's mean where they are ranked.

    Returns (chosen candidate, sums float[width, seats], futures per candidate int[width],
    playouts run)."""
    sums = np.zeros((width, seats))
    counts = np.zeros(width, dtype=np.int64)
    extra = np.zeros(width) if bonus is None else bonus
    survivors = list(range(width))
    rounds = max(1, math.ceil(math.log2(width))) if width > 1 else 0
    played = 0
    for r in range(rounds):
        per_round = max(0, budget - played) // (rounds - r)
        futures = max(1, per_round // len(survivors))
        timed_out = False
        for _ in range(futures):
            seed = int(next_u64(stream))
            this = np.zeros((len(survivors), seats))
            for i, k in enumerate(survivors):
                if deadline is not None and time.perf_counter() >= deadline:
                    timed_out = True
                    break
                this[i] = play(k, seed)
                played += 1
            if timed_out:
                break
            sums[survivors] += this
            counts[survivors] += 1
        if timed_out:
            break
        means = sums[survivors, player] / counts[survivors] + extra[survivors]
        ranked = sorted(range(len(survivors)), key=lambda i: (-means[i], survivors[i]))
        survivors = sorted(survivors[i] for i in ranked[:math.ceil(len(survivors) / 2)])
    if counts[survivors[0]] == 0:  # no future finished by every survivor: the prior's first
        return survivors[0], sums, counts, played
    means = sums[survivors, player] / counts[survivors] + extra[survivors]
    best = max(range(len(survivors)), key=lambda i: (means[i], -survivors[i]))
    return survivors[best], sums, counts, played


def run_uniform(width: int, budget: int | None, seats: int, player: int, stream: np.ndarray,
                play: Callable[[int, int], np.ndarray], deadline: float | None = None,
                bonus: np.ndarray | None = None) -> tuple[int, np.ndarray, np.ndarray, int]:
    """The even split: every candidate plays each of ``budget // width`` futures (until
    ``deadline``); arguments and result as :func:`run_halving`."""
    sums = np.zeros((width, seats))
    counts = np.zeros(width, dtype=np.int64)
    futures = max(1, budget // width) if budget is not None else 1 << 62
    played = 0
    for _ in range(futures):
        seed = int(next_u64(stream))
        this = np.zeros((width, seats))
        for k in range(width):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            this[k] = play(k, seed)
            played += 1
        else:
            sums += this
            counts += 1
            continue
        break
    means = sums[:, player] / np.maximum(counts, 1) + (0.0 if bonus is None else bonus)
    best = int(np.argmax(means)) if counts[0] else 0  # first of the best: ties keep the greedy order
    return best, sums, counts, played

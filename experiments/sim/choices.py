"""How the compiled loops choose, as the Python agents do (the k-th legal action of a mask is
:func:`envs.core.rng.kth_true`): :class:`agents.greedy.ValueGreedy`'s pick among equally valued
candidates."""

from __future__ import annotations

import numpy as np
from numba import njit

from envs.core.pcg import integers


@njit(cache=True)
def greedy_choice(actions: np.ndarray, values: np.ndarray, n: int, pcg_row: np.ndarray) -> int:
    """:meth:`agents.greedy.ValueGreedy.act` on candidates already legal: one of the actions valued
    within 1e-9 of the best, ``rng.integers(count)``-th in candidate order."""
    if n == 0:
        raise ValueError("no legal action: the game should be over")
    best = values[0]
    for i in range(1, n):
        best = max(best, values[i])
    count = 0
    for i in range(n):
        if values[i] >= best - 1e-9:
            count += 1
    k = integers(pcg_row, count)
    for i in range(n):
        if values[i] >= best - 1e-9:
            if k == 0:
                return actions[i]
            k -= 1
    return -1

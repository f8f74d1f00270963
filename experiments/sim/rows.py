"""A whole chunk's columns built from per-game arrays, as
:meth:`experiments.common.runner.GameRecord.seat_rows` would build them row by
row (same keys, order, values and Python types; no timing columns).

The compiled chunk loops fill arrays indexed ``[game, seat]``; this turns them into the column
lists ``simulate`` writes, without a Python object per game.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def shared_wins(totals: np.ndarray) -> np.ndarray:
    """``win`` per (game, seat) from the totals as :func:`experiments.common.runner.winners` rules: the
    seats at the best total (``math.isclose``) share one win."""
    best = totals.max(axis=1, keepdims=True)
    close = np.abs(totals - best) <= 1e-9 * np.maximum(np.abs(totals), np.abs(best))
    return win_shares(close | (totals == best))


def win_shares(winning: np.ndarray) -> np.ndarray:
    """``1 / (number of winners)`` for each winning (game, seat), else 0."""
    count = winning.sum(axis=1, keepdims=True)
    return np.where(winning, 1.0 / np.maximum(count, 1), 0.0)


def chunk_columns(index: int, seeds: list[int], labels: list[str], totals: np.ndarray,
                  decisions: np.ndarray, wins: np.ndarray | None, categories: dict[str, np.ndarray],
                  extras: dict[str, np.ndarray]) -> dict[str, list[Any]]:
    """The chunk's columns, one row per (game, seat), games in seed order.

    Arrays are ``[game, seat]``: ``totals`` and ``categories`` become floats, ``decisions`` and
    ``extras`` ints (strings kept; a ``[game]`` array is shared by every seat); ``wins`` is left out when None
    (solo games)."""
    games, players = len(seeds), len(labels)

    def flat(values: np.ndarray, dtype: type) -> list[Any]:
        values = np.asarray(values)
        if values.ndim == 1:
            values = np.repeat(values[:, None], players, axis=1)
        if values.dtype.kind in "OU":  # strings stay as they are
            return values.reshape(games * players).tolist()
        return values.astype(dtype).reshape(games * players).tolist()

    columns: dict[str, list[Any]] = {
        "chunk": [index] * (games * players),
        "seed": np.repeat(np.asarray(seeds, np.int64), players).tolist(),
        "seat": np.tile(np.arange(players, dtype=np.int64), games).tolist(),
        "agent": labels * games,
        "total": flat(totals, np.float64),
        "decisions": flat(decisions, np.int64),
    }
    if wins is not None:
        columns["win"] = flat(wins, np.float64)
    columns.update({f"cat_{k}": flat(v, np.float64) for k, v in categories.items()})
    columns.update({f"x_{k}": flat(v, np.int64) for k, v in extras.items()})
    return columns

"""Builders of hand-made Cascadia positions for the tests."""

from __future__ import annotations

import numpy as np

from envs.cascadia import kernels as K
from envs.cascadia import reference as R
from envs.cascadia.data import CELL_COORDS, NEIGHBORS, cell_of
from envs.cascadia.game import CascadiaGame, CascadiaState

ANIMAL = {"b": 0, "e": 1, "s": 2, "h": 3, "f": 4}


def empty_areas(game: CascadiaGame, seed: int = 0) -> CascadiaState:
    """A dealt game whose player areas are wiped clean (no starter)."""
    s = game.new_game(seed)
    s.tiles[:] = -1
    s.edges[:] = -1
    s.tokens[:] = -1
    s.front[:] = 0
    s.cells[:] = -1
    s.flist[:] = -1
    s.pinfo[:, K.P_NCELLS] = 0
    s.pinfo[:, K.P_NFRONT] = 0
    return s


def put(game: CascadiaGame, s: CascadiaState, p: int, q: int, r: int, kind: int = 0, rot: int = 0,
        token: str | int | None = None) -> int:
    """Place tile ``kind`` at (q, r) of seat p (and optionally a token, letters beshf); return the cell."""
    c = cell_of(q, r)
    K.place_tile(p, c, kind, rot, s.board_args(), NEIGHBORS, game.kind_edges)
    if token is not None:
        s.tokens[p, c] = ANIMAL[token] if isinstance(token, str) else token
    return c


def animals_board(game: CascadiaGame, layout: dict[tuple[int, int], str], p: int = 0,
                  s: CascadiaState | None = None) -> CascadiaState:
    """Seat p holds a mountain keystone at every position of ``layout`` with the given animal."""
    s = empty_areas(game) if s is None else s
    for (q, r), w in layout.items():
        put(game, s, p, q, r, 0, 0, w)
    return s


def wildlife(game: CascadiaGame, s: CascadiaState, p: int = 0) -> list[int]:
    return [int(v) for v in game.score_table(s)[p, :5]]


def to_reference(game: CascadiaGame, s: CascadiaState, p: int) -> R.Board:
    """The same area as a reference-module board."""
    board: R.Board = {}
    for k in range(int(s.pinfo[p, K.P_NCELLS])):
        c = int(s.cells[p, k])
        kind = int(s.tiles[p, c])
        mask = int(game.kind_info[kind, 0])
        token = int(s.tokens[p, c])
        board[(int(CELL_COORDS[c, 0]), int(CELL_COORDS[c, 1]))] = R.Hex(
            tuple(int(e) for e in s.edges[p, c]), frozenset(w for w in range(5) if mask >> w & 1),
            token if token >= 0 else None, bool(game.kind_info[kind, 1] >= 0))
    return board


def np_int(x) -> int:
    return int(np.asarray(x))

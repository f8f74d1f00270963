"""Exact endgame of the compiled Dorfromantik search (``exact_tiles=N``).

When the landscape stack holds at most ``N - 1`` tiles (``N = 1``: the drawn tile is the last
landscape tile, or a task tile drawn after it), the hidden future is small, so instead of sampling
it the search values **every** legal placement (rotations with the same edges are one placement)
by its exact expected final score:

* every chance event left is enumerated with its exact probability from what the player knows:
  the next landscape tile is each unseen landscape tile (set-aside ones included) with equal
  probability, the next task tile each unseen task tile, its marker each unseen marker value of its
  type with its share of that pile; a drawn tile with no legal position is set aside and the next
  draw is enumerated again (decision 5); the game ends when a landscape tile is needed and none is
  left. The real deck order is never read (only the unseen sets).
* the placement being decided is compared over all legal placements; every **later** placement
  (the last landscape tiles for ``N >= 2``, task tiles drawn when a completion or failure frees a
  slot) follows the **greedy** evaluation (``kernels.greedy_values``, first best in frontier order),
  so the value is exact for "this placement, then greedy", not an expectimax over later choices.

With ``N = 1`` a placement that ends the game is scored exactly; one that frees a task slot is
valued over every task tile and marker that can be drawn next, greedy continuation. A future of
more than :data:`OUTCOME_BUDGET` chance outcomes (counted exactly, the same on every run) is left to
the sampled search.
"""

from __future__ import annotations

import numpy as np

from agents.greedy import dorfromantik_kernels as GK
from envs.core.errors import ConfigError
from envs.dorfromantik import kernels as K

#: chance outcomes one decision may expand; past it the enumeration stops and the sampled search
#: decides (several tasks failing or completing at the end chain task draws of ~45 outcomes each)
OUTCOME_BUDGET = 3000
#: largest exact_tiles accepted: the landscape orders grow as (unseen + N - 1)! / unseen!
MAX_EXACT_TILES = 3


def parse_exact_tiles(value) -> int:
    """``exact_tiles`` as an int in 0..MAX_EXACT_TILES, or a ConfigError."""
    try:
        n = int(value)
        ok = not isinstance(value, bool) and float(value) == n
    except (TypeError, ValueError):
        ok = False
    if not ok or not 0 <= n <= MAX_EXACT_TILES:
        raise ConfigError(f"mcts: exact_tiles must be an integer in 0..{MAX_EXACT_TILES} (final placements "
                          f"solved exactly; 0 turns it off), got {value!r}")
    return n


def applies(meta: np.ndarray, exact_tiles: int) -> bool:
    """Whether the drawn tile is among the last ``exact_tiles`` landscape placements (or a task tile
    drawn after them)."""
    return exact_tiles > 0 and K.NUM_LAND - int(meta[K.M_LAND_POS]) <= exact_tiles - 1


class TooLarge(Exception):
    """The future is larger than :data:`OUTCOME_BUDGET` outcomes."""


class Endgame:
    """Exact expected final scores of placements (module doc) for one game's data."""

    def __init__(self, game, weights: np.ndarray = GK.DEFAULT_WEIGHTS):
        self.game = game
        self.weights = weights  # the greedy weights of the later placements
        self._mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
        self._values = np.zeros((K.MAX_FRONTIER, 6), np.float64)
        self._score = np.zeros(K.SCORE_SIZE, np.int64)
        self.outcomes = 0  # chance outcomes expanded (statistics)

    def values(self, state, pairs: np.ndarray) -> np.ndarray:
        """Exact expected final score of placing the drawn tile at each ``(cell, rot)`` of ``pairs``;
        raises :class:`TooLarge` past :data:`OUTCOME_BUDGET` chance outcomes."""
        g = self.game
        arrays = (state.cells, state.frontier, state.placed, state.uf, state.tasks, state.deck, state.meta)
        out = np.zeros(len(pairs))
        for i, (cell, rot) in enumerate(pairs):
            s = tuple(a.copy() for a in arrays)
            K.place(s[0], s[1], s[2], s[3], s[4], s[6], g._rot_edges, g._task_type, int(cell), int(rot))
            out[i] = self._expect(s)
        return out

    def _expect(self, s: tuple[np.ndarray, ...]) -> float:
        """Expected final score after a placement: enumerate the next draw (or score the end)."""
        meta, deck = s[6], s[5]
        if K.must_draw_task(meta):
            lo = K.DECK_TASK + int(meta[K.M_TASK_POS])
            tiles = deck[lo:K.DECK_MARKER]
            total = 0.0
            for tile in np.unique(tiles):
                p_tile = float(np.sum(tiles == tile)) / tiles.size
                t = int(self.game._task_type[tile]) - 1
                base = K.DECK_MARKER + 5 * t
                pile = deck[base + int(meta[K.M_MARKER_POS + t]):base + 5]
                for marker in np.unique(pile):
                    p = p_tile * float(np.sum(pile == marker)) / pile.size
                    c = tuple(a.copy() for a in s)
                    _swap_to(c[5], lo, K.DECK_MARKER, int(tile))
                    c[6][K.M_TASK_POS] += 1
                    m_lo = base + int(meta[K.M_MARKER_POS + t])
                    _swap_to(c[5], m_lo, base + 5, int(marker))
                    c[6][K.M_MARKER_POS + t] += 1
                    total += p * self._drawn(c, int(tile), int(marker))
            return total
        land_pos = int(meta[K.M_LAND_POS])
        if land_pos >= K.NUM_LAND:
            K.score_breakdown(s[0], s[2], s[3], meta, self.game._flag, self._score)
            return float(self._score[K.S_TOTAL])
        pool = np.concatenate([deck[:int(meta[K.M_UNSEEN])], deck[land_pos:K.NUM_LAND]])
        total = 0.0
        for tile in np.unique(pool):
            c = tuple(a.copy() for a in s)
            _swap_landscape(c[5], c[6], int(tile))
            c[6][K.M_LAND_POS] += 1
            total += float(np.sum(pool == tile)) / pool.size * self._drawn(c, int(tile), 0)
        return total

    def _drawn(self, s: tuple[np.ndarray, ...], tile: int, marker: int) -> float:
        """``tile`` drawn (with ``marker``): set it aside when it fits nowhere, else place it greedily."""
        g = self.game
        cells, frontier, placed, uf, tasks, _, meta = s
        self.outcomes += 1
        if self.outcomes > OUTCOME_BUDGET:
            raise TooLarge
        meta[K.M_DRAWN] = tile
        meta[K.M_MARKER] = marker
        if not K.any_fit(cells, frontier, meta, g._rot_edges, tile):
            meta[K.M_SET_ASIDE] += 1
            return self._expect(s)
        self._values[:] = -np.inf
        GK.greedy_values(K.DorfBoard(*s), g._rot_edges, g._task_type, g._flag, self.weights, self._mask,
                         self._values)
        n = int(meta[K.M_FRONT])
        k = int(np.argmax(np.where(self._mask[:n], self._values[:n], -np.inf)))
        K.place(cells, frontier, placed, uf, tasks, meta, g._rot_edges, g._task_type, int(frontier[k // 6]),
                k % 6)
        return self._expect(s)


def _swap_to(deck: np.ndarray, lo: int, hi: int, value: int) -> None:
    """Move one ``value`` of ``deck[lo:hi]`` to ``deck[lo]`` (the next draw)."""
    j = lo + int(np.flatnonzero(deck[lo:hi] == value)[0])
    deck[lo], deck[j] = deck[j], deck[lo]


def _swap_landscape(deck: np.ndarray, meta: np.ndarray, tile: int) -> None:
    """Make ``tile`` (unseen, possibly among the set-aside ones) the next landscape draw."""
    pos = int(meta[K.M_LAND_POS])
    j = int(np.flatnonzero(deck[:K.NUM_LAND] == tile)[0])
    deck[pos], deck[j] = deck[j], deck[pos]

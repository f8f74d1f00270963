"""Compiled search for Dorfromantik: the MCTS agent's fast path (``engine="compiled"``).

Every decision is one placement of the drawn tile, and the only hidden thing is the order of
the stacks (and the unseen markers). The search compares candidate placements by playing each
to the end on the same sampled futures:

1. **Candidates** (:func:`candidate_placements`): every legal placement valued by the greedy
   evaluation; rotations that give the same edges are one candidate. Order: the greedy choice;
   then, for each open task that no unseen tile can extend any more (a *hopeless* task, which
   holds one of the three task slots for the rest of the game), the best placement that ends it
   (closing its group fails it, and the next draw is a fresh task tile); then the best rotation
   of every other position, by value; then the rest by value.
2. **Paired futures**: future ``f`` is a 64-bit seed; a playout of candidate ``k`` on future
   ``f`` copies the state, resamples the hidden order from the sorted unseen sets
   (:func:`agents.search.placement_kernels.determinize_deck`), places the candidate and plays
   to the end with the compiled greedy policy (``rollout=greedy``) or uniformly at random
   (``rollout=random``). Every candidate is scored on the same futures, so their differences
   carry little of the deck-order noise. The score is shared (cooperative), so there is one
   value per playout.
3. **Progressive widening, anytime**: after ``n`` playouts at most ``ceil(k * (n + 1) ** alpha)``
   candidates are in play (``widening=k/alpha``; off: all of them). A new candidate is first
   played on every future opened so far, then each new future is played by every candidate. The
   search stops at ``simulations`` playouts or at ``time_limit`` seconds, whichever comes first.
4. **Choice**: the best mean over the futures every remaining candidate has finished (ties:
   greedy order), but the greedy choice stays unless the best beats it by at least
   :data:`MARGIN_SE` standard errors of their paired differences (and on at least two futures).
   Single playouts of this game are very noisy (a final score's SD is about 25 points early in
   a game, and two placements played on one future differ by about 30), so the best of several
   noisy means is usually a lucky one; on 24 positions of greedy games valued with 100 held-out
   futures per candidate, this rule raised the value of the chosen placement over greedy's by
   +1.2 points at 64 playouts (4 candidates; +1.0 without the margin, +0.8 with 8 candidates).

5. **Exact endgame** (``exact_tiles=N``, default :data:`DEFAULT_EXACT_TILES`; 0 turns it off): once
   at most ``N - 1`` landscape tiles are left in the stack, every legal placement is valued by its
   exact expected final score over every order of the unseen tiles (later placements greedy), and
   the best is played (ties: greedy order), with no sampling and no margin rule
   (:mod:`agents.search.placement_endgame`). A future of more than its outcome budget falls back to
   steps 1-4.

6. **A learned model** (``model=<folder>``, a linear candidate model of this game as
   ``learned:<folder>`` plays it, e.g. ``models/dorfromantik``): the candidates of step 1 are
   sorted by the model's value instead (stable), so its choice is candidate 0, the one that stays
   unless beaten; ``rollout=learned`` also plays the playouts with the model
   (:func:`agents.learned.dorfromantik_kernels.playout_linear`, about 2.3 times the cost of a
   greedy playout). The exact endgame is unchanged.

With ``simulations`` only, a decision is a function of the state and the seat's rng (tested);
with a time limit it depends on the machine's speed.
"""

from __future__ import annotations

import math
import time

import numpy as np

from agents.explain import forced_choice, search_statistics
from agents.greedy import dorfromantik_kernels as GK
from agents.greedy.dorfromantik import preset_weights
from agents.search import placement_kernels as DK
from agents.search.learned_model import linear_model
from agents.search.placement_endgame import Endgame, TooLarge, applies, parse_exact_tiles
from envs.core.errors import ConfigError
from envs.core.rng import new_stream, next_u64
from envs.dorfromantik import kernels as K

_SEED_BOUND = 2**62
#: final placements solved exactly by default (``exact_tiles``; 0: always the sampled search; the
#: dev-suite comparison of 0, 1 and 2 is in docs/results.md)
DEFAULT_EXACT_TILES = 1
#: the best candidate replaces the greedy choice only when ahead by this many standard errors
MARGIN_SE = 1.0


def candidate_placements(game, state, legal_mask: np.ndarray, weights: np.ndarray = GK.DEFAULT_WEIGHTS,
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidates in search order (module doc, step 1): actions, kernel (cell, rot) pairs and greedy
    values (with the greedy ``weights``)."""
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values = np.zeros((K.MAX_FRONTIER, 6), np.float64)
    GK.greedy_values(state.board(), game._rot_edges, game._task_type, game._flag, weights, mask, values)
    n = int(state.meta[K.M_FRONT])
    slots, rots = np.nonzero(mask[:n])
    cells = state.frontier[slots].astype(np.int64)
    cq, cr = game.window_centre(state)
    radius, side = game.window_radius, game.side
    wq = cells % K.GRID_SIDE - K.GRID_RADIUS - cq + radius
    wr = cells // K.GRID_SIDE - K.GRID_RADIUS - cr + radius
    inside = (wq >= 0) & (wq < side) & (wr >= 0) & (wr < side)
    actions = np.where(inside, (wr * side + wq) * 6 + rots, -1)
    keep = inside & legal_mask[np.maximum(actions, 0)]
    tile = int(state.meta[K.M_DRAWN])
    edges = game._rot_edges[tile]
    seen: set[tuple[int, bytes]] = set()
    rows = []
    for i in np.flatnonzero(keep):
        key = (int(cells[i]), edges[rots[i]].tobytes())
        if key not in seen:  # a rotation with the same edges is the same placement
            seen.add(key)
            rows.append(i)
    rows = np.array(rows, dtype=np.int64)
    order = rows[np.argsort(-values[slots[rows], rots[rows]], kind="stable")]
    first = [int(order[0])]
    hopeless = DK.hopeless_tasks(state.cells, state.placed, state.uf, state.tasks, state.deck, state.meta,
                                 game._rot_edges)
    if hopeless:
        out2 = np.zeros(2, np.int64)
        ends = np.array([DK.failed_tasks(state.cells, state.uf, state.tasks, state.meta, game._rot_edges,
                                         int(cells[i]), int(rots[i]), out2) for i in order])
        for k in range(int(state.meta[K.M_TASKS])):
            if hopeless >> k & 1:
                hits = np.flatnonzero(ends >> k & 1)
                if hits.size and int(order[hits[0]]) not in first:
                    first.append(int(order[hits[0]]))
    taken = set(first)
    cells_done = {int(cells[i]) for i in first}
    per_cell, rest = [], []
    for i in order:
        i = int(i)
        if i in taken:
            continue
        if int(cells[i]) in cells_done:
            rest.append(i)
        else:
            cells_done.add(int(cells[i]))
            per_cell.append(i)
    final = np.array(first + per_cell + rest, dtype=np.int64)
    pairs = np.stack([cells[final], rots[final].astype(np.int64)], axis=1)
    return actions[final].astype(np.int64), pairs, values[slots[final], rots[final]]


class TurnSearch:
    """The paired, progressively widened playout search of one :class:`agents.search.mcts.MCTSAgent`."""

    #: takes the ``exact_tiles`` option (the exact endgame)
    EXACT_ENDGAME = True
    #: takes ``greedy=<preset>`` (agents.greedy.dorfromantik.PRESETS): candidate ranking, playouts, endgame
    GREEDY_PRESETS = True
    #: takes ``model=<folder>`` (a learned linear model: the candidate order) and ``rollout=learned``
    LEARNED_MODEL = True

    def __init__(self, agent):
        self.agent = agent
        self.game = agent.game
        self.greedy = agent.rollout == "greedy"
        self._work = K.new_arrays()
        self._mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
        self._score = np.zeros(K.SCORE_SIZE, np.int64)
        opt = getattr(agent, "exact_tiles", None)
        self.exact_tiles = DEFAULT_EXACT_TILES if opt is None else parse_exact_tiles(opt)
        self.weights = preset_weights(agent.greedy)
        self._endgame = Endgame(self.game, self.weights)
        self.model = (None if agent.model is None
                      else linear_model(self.game, agent.model, "placement_values", "playout"))
        self.learned_playouts = agent.rollout == "learned"

    @staticmethod
    def check_options(rollout: str, max_depth: int | None, determinize_every: int, simulations: int | None,
                      ) -> None:
        """Root search only: no tree depth, a fresh future per playout."""
        if max_depth not in (None, 1) or determinize_every != 1:
            raise ConfigError("mcts: engine=compiled for dorfromantik is a root search over paired futures: "
                              "it takes no max_depth or determinize_every")

    def _play(self, state, pair: np.ndarray, seed: int) -> float:
        g, w = self.game, self._work
        if self.learned_playouts:
            return self.model.playout(state.board(), w, int(pair[0]), int(pair[1]), seed, self._score)
        return float(DK.playout(state.board(), w, int(pair[0]), int(pair[1]), np.uint64(seed), self.greedy,
                                g._rot_edges, g._task_type, g._flag, self.weights, self._mask, self._score))

    def act(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Search the current placement (see the module docstring) and return its action."""
        agent = self.agent
        legal = np.flatnonzero(legal_mask)
        if legal.size == 1:
            return forced_choice(agent, int(legal[0]))
        start = time.perf_counter()
        deadline = None if agent.time_limit is None else start + agent.time_limit
        actions, pairs, greedy_values = candidate_placements(self.game, state, legal_mask, self.weights)
        if self.model is not None:
            actions, pairs, greedy_values = learned_order(state, self.model, actions, pairs, greedy_values)
        if applies(state.meta, self.exact_tiles):
            try:
                return self._act_exact(state, actions, pairs, greedy_values, start)
            except TooLarge:
                pass
        n_cands = actions.size
        base = int(rng.integers(_SEED_BOUND)) ^ (agent.seed_offset * 0x9E3779B97F4A7C15 % _SEED_BOUND)
        stream = new_stream(base, "dorfromantik/search")
        seeds: list[int] = []
        values = np.zeros((n_cands, 16))
        counts = np.zeros(n_cands, dtype=np.int64)
        limit = agent.simulations if agent.simulations is not None else 1 << 62
        k_widen, alpha = agent.widening
        width, sims, stopped = 0, 0, False
        while sims < limit and not stopped and n_cands > 1:
            allowed = n_cands if k_widen <= 0 else min(n_cands, math.ceil(k_widen * (sims + 1) ** alpha))
            if width < allowed or not seeds:
                if width < allowed:
                    width += 1
                if not seeds:
                    seeds.append(int(next_u64(stream)))
            else:
                seeds.append(int(next_u64(stream)))
                if len(seeds) > values.shape[1]:
                    values = np.concatenate([values, np.zeros_like(values)], axis=1)
            for k in range(width):  # bring every candidate in play up to date with every future
                while counts[k] < len(seeds) and sims < limit:
                    f = int(counts[k])
                    values[k, f] = self._play(state, pairs[k], seeds[f])
                    counts[k] += 1
                    sims += 1
                    if deadline is not None and time.perf_counter() >= deadline:
                        stopped = True
                        break
                if stopped or sims >= limit:
                    break
        best, common, means = choose(values, counts, width)
        elapsed = time.perf_counter() - start
        agent.total_simulations += sims
        agent.total_seconds += elapsed
        agent.last_stats = {
            "simulations": sims, "seconds": elapsed, "sims_per_s": sims / elapsed if elapsed else 0.0,
            "children": width, "best_visits": common, "candidates": n_cands,
            "best_mean": float(means[best]) if common else math.nan,
            "greedy_mean": float(means[0]) if common else math.nan,
            "visits": {int(actions[i]): int(counts[i]) for i in range(width)},
        }
        if agent.explaining:  # visits: playouts per candidate; value: mean final score on the shared futures
            shown = np.zeros(width)
            if common:
                shown = np.where(np.isfinite(means[:width]), means[:width], 0.0)
            agent.last_explanation = search_statistics("mcts", actions[:width], counts[:width], shown,
                                                       int(actions[best]), sims)
        return int(actions[best])

    def _act_exact(self, state, actions: np.ndarray, pairs: np.ndarray, greedy_values: np.ndarray,
                   start: float) -> int:
        """The exact endgame (:mod:`agents.search.placement_endgame`): every legal placement valued
        by its exact expected final score; the best wins, ties to the higher greedy value, then the
        candidate order."""
        agent = self.agent
        self._endgame.outcomes = 0
        values = self._endgame.values(state, pairs)
        best = int(np.lexsort((np.arange(values.size), -greedy_values, -np.round(values, 9)))[0])
        elapsed = time.perf_counter() - start
        agent.total_seconds += elapsed
        agent.last_stats = {"simulations": 0, "seconds": elapsed, "exact": True,
                            "candidates": int(actions.size), "outcomes": self._endgame.outcomes,
                            "best_mean": float(values[best]), "greedy_mean": float(values[0])}
        if agent.explaining:
            agent.last_explanation = search_statistics("mcts", actions, np.ones(actions.size, np.int64),
                                                       values, int(actions[best]), 0)
        return int(actions[best])


def learned_order(state, model, actions: np.ndarray, pairs: np.ndarray, greedy_values: np.ndarray,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates sorted by the learned model's value, best first (stable): the model's choice
    becomes candidate 0, the one that stays unless another beats it (module doc, step 4)."""
    values = model.placement_values(state)
    slot_of = {int(cell): i for i, cell in enumerate(state.frontier[:int(state.meta[K.M_FRONT])])}
    learned = np.array([values[slot_of[int(cell)], int(rot)] for cell, rot in pairs])
    order = np.argsort(-learned, kind="stable")
    return actions[order], pairs[order], greedy_values[order]


def choose(values: np.ndarray, counts: np.ndarray, width: int) -> tuple[int, int, np.ndarray]:
    """(chosen candidate, futures compared, means): the best mean over the futures every candidate
    still in the race has played, kept only when it beats candidate 0 (greedy) by MARGIN_SE."""
    if width == 0 or counts[0] == 0:
        return 0, 0, np.zeros(1)
    top = int(counts[:width].max())
    racing = np.flatnonzero(counts[:width] >= max(1, top - 1))
    common = int(counts[racing].min())
    means = np.full(width, -np.inf)
    means[racing] = values[racing, :common].mean(axis=1)
    best = int(np.argmax(means))
    if best != 0:
        diff = values[best, :common] - values[0, :common]
        if common < 2 or diff.mean() < MARGIN_SE * diff.std(ddof=1) / math.sqrt(common):
            best = 0
    return best, common, means

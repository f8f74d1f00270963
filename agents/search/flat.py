"""Compiled flat search for Cartographers with greedy playouts (``engine=compiled,rollout=greedy``).

The root bandit of :mod:`agents.search.cartographers_root` plays random rollouts; this search instead
values each candidate decision by paired greedy playouts, as the Cascadia turn search does:

1. **Candidates**: every legal decision valued by the greedy agent's evaluation
   (:func:`agents.greedy.cartographers_kernels.score_candidates`, with the weights of the greedy
   preset ``greedy=default|progress``, which the playouts use too), best first (the greedy choice
   first; ties keep the listing order); the first ``ceil(k * budget ** alpha)`` are compared
   (``widening=k/alpha``; off: all).
2. **Paired futures**: a future is a 64-bit seed; a playout of candidate ``c`` on it resamples the
   hidden cards from their canonical order (:func:`agents.search.cartographers_root.determinize_into`),
   plays ``c`` and then the compiled greedy policy to the end, and returns every seat's final
   total. Every candidate sees the same futures, so their differences carry little card-order noise.
3. **Schedule**: an even split (every candidate plays ``simulations // width`` futures) or, with
   ``halving=true``, sequential halving (:mod:`agents.search.halving`).
4. **Choice**: the best mean total of the acting seat (max-n), ties to the greedy order.
5. **Exact last decision**: when every candidate ends the game (the last card of winter), nothing
   hidden is left to sample: every legal decision is valued by its exact final score, with no
   widening and no playouts.

``horizon=H`` cuts each playout when the season ``H`` seasons after the decision's begins (the
first seasons' decisions are the costliest to play out: the map is emptiest, with the most
placements to value); the seasons left are valued on the map at the cut, each as if it were scored
today (:func:`unscored_seasons`). A cut past winter plays the whole game.

``model=<folder>`` (a learned linear candidate model of Cartographers, as ``learned:<folder>`` plays
it, e.g. ``models/cartographers_solo``) sorts the candidates of step 1 by the model's value instead
(stable; decisions it does not value, the ambushes, keep the greedy order): the widening then
compares the model's best candidates, and ties go to the model's choice. ``rollout=learned`` (with
``model=``) has the model play the playouts after each candidate instead of greedy
(:func:`agents.learned.cartographers_kernels.linear_paired_playout`: the same futures, cut and
totals; a model decision costs about 5 greedy ones, so it buys fewer playouts per second).
``rollout_width=N`` has the model value only the N candidates greedy values best at each playout
decision (:func:`agents.learned.cartographers_kernels.reranked_candidate`): about a greedy decision's
cost plus N learned rows.

``screen=S/C`` widens the opening decisions (those whose map has at most C drawn cells; C = 0: the game's
first): the first half of the width keeps the order above, and every other candidate plays S paired futures,
the best of them by mean filling the second half (:func:`screen_candidates`); these playouts come on top of
the budget. On an empty map greedy's order ranks the best placements far down (on one first decision the
best five were at ranks 172-297 of 568, each 1.1-1.8 points above the best of the first 40).

``model_weight=λ`` (with ``model=``) ranks the candidates by their playout mean plus λ x (the model's
value - the model's value of its first choice), wherever the schedule ranks them.

``time_limit`` makes it anytime as in the Cascadia search: the first playout's duration caps the
budget, only futures that every compared candidate finished count, and with none the greedy
choice is played.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from agents.explain import forced_choice, record_search
from agents.greedy import cartographers_kernels as G
from agents.greedy.cartographers import preset_weights
from agents.greedy.cartographers_kernels import greedy_playout, step
from agents.search.cartographers_root import copy_state, determinize_into
from agents.search.halving import run_halving, run_uniform
from agents.search.learned_model import linear_model
from envs.cartographers.kernels import (
    FOREST,
    M_PHASE,
    M_SEASON,
    MONSTER_T,
    PHASE_OVER,
    SCRATCH,
    decision_map,
    monster_penalty,
    score_card_into,
    totals,
)
from envs.core.errors import ConfigError
from envs.core.rng import next_u64


@njit(cache=True)
def unscored_seasons(st, tb, p: int) -> float:
    """Seat ``p``'s points from the seasons not yet scored, as if each were scored on today's map:
    its two edicts, the coins held and the monster penalty (0 once the game is over)."""
    meta = st[6]
    if meta[M_PHASE] == PHASE_OVER:
        return 0.0
    grid, coins, edicts, seasons = st[0][p], st[1], st[5], tb[3]
    scratch = np.empty(SCRATCH, np.int32)
    monsters = monster_penalty(grid)
    points = 0.0
    for s in range(meta[M_SEASON], 4):
        points += score_card_into(edicts[seasons[s, 1]], grid, tb[0], scratch)
        points += score_card_into(edicts[seasons[s, 2]], grid, tb[0], scratch) + coins[p] - monsters
    return points


@njit(cache=True)
def paired_playout(st, det, work, tb, w: np.ndarray, action: int, seed: np.uint64, stop_season: int,
                   out: np.ndarray) -> None:
    """Final totals (``out``, float64[seats]) of ``action`` then greedy play to the end, on the
    future drawn from ``seed`` (the same seed gives every action the same hidden cards). With
    ``stop_season`` < 4 the playout stops when that season begins and the seasons left are valued
    by :func:`unscored_seasons` (0 after a whole game)."""
    stream = begin_playout(st, det, work, tb, action, seed)
    greedy_playout(work, tb, w, 0.0, stream, stop_season)
    playout_totals(work, tb, out)


@njit(cache=True)
def begin_playout(st, det, work, tb, action: int, seed: np.uint64) -> np.ndarray:
    """``work`` := ``st`` with the hidden cards resampled from ``seed`` (``det`` is scratch), then
    ``action`` played; returns the playout's chance stream (uint64[1]) for the policy that goes on."""
    stream = np.empty(1, np.uint64)
    stream[0] = seed
    determinize_into(st, det, stream)
    copy_state(det, work)
    step(work, tb, action)
    return stream


@njit(cache=True)
def playout_totals(work, tb, out: np.ndarray) -> None:
    """Every seat's total at the playout's end (``out``, float64[seats]): the seasons scored plus, at
    a cut, the seasons left valued by :func:`unscored_seasons`."""
    t = totals(work[8])
    for p in range(out.shape[0]):
        out[p] = t[p] + unscored_seasons(work, tb, p)


@njit(cache=True)
def last_decision_totals(st, det, work, tb, actions: np.ndarray, seed: np.uint64, out: np.ndarray) -> bool:
    """When every one of ``actions`` ends the game, write each one's exact final totals into
    ``out`` (float64[n, seats]) and return True; False (``out`` partly written) otherwise. The
    hidden cards are resampled first, so nothing depends on the real order (none is drawn)."""
    stream = np.empty(1, np.uint64)
    stream[0] = seed
    determinize_into(st, det, stream)
    for k in range(actions.shape[0]):
        copy_state(det, work)
        step(work, tb, actions[k])
        if work[6][M_PHASE] != PHASE_OVER:
            return False
        t = totals(work[8])
        for p in range(out.shape[1]):
            out[k, p] = t[p]
    return True


class TurnSearch:
    """Flat paired search for one :class:`agents.search.mcts.MCTSAgent` (see the module docstring)."""

    HALVING = True
    GREEDY_PRESETS = True
    HORIZON = True
    #: takes ``model=<folder>`` (a learned linear model: the candidate order)
    LEARNED_MODEL = True
    #: takes ``rollout_width=N`` with ``rollout=learned``
    ROLLOUT_WIDTH = True
    #: takes ``screen=S/C`` (every candidate screened at the opening decisions)
    SCREEN = True
    #: takes ``model_weight=λ`` (the model's candidate values added to the playout means)
    MODEL_WEIGHT = True

    def __init__(self, agent):
        self.agent = agent
        self.game = agent.game
        self.weights = preset_weights(agent.greedy)
        self._buf = np.empty((4096, 2), dtype=np.int32)
        self._actions = np.empty(G.MAX_CANDIDATES, dtype=np.int64)
        self._values = np.empty(G.MAX_CANDIDATES, dtype=np.float64)
        self.learned_playouts = agent.rollout == "learned"
        methods = ("candidate_values", "playout") if self.learned_playouts else ("candidate_values",)
        self.model = None if agent.model is None else linear_model(self.game, agent.model, *methods)

    @staticmethod
    def check_options(rollout: str, max_depth: int | None, determinize_every: int, simulations: int | None,
                      ) -> None:
        if max_depth not in (None, 1) or determinize_every != 1:
            raise ConfigError(f"mcts: engine=compiled,rollout={rollout} for cartographers is a flat search "
                              "over paired futures: it takes no max_depth or determinize_every")

    def candidates(self, state, legal_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Legal actions best first by the greedy evaluation (ties: listing order), and their values
        (with ``model=``: in the model's order, with the model's values; NaN where it values none)."""
        n = G.score_candidates(state.arrays(), self.game.tb, self.weights, self._buf, self._actions,
                               self._values)
        actions, values = self._actions[:n], self._values[:n]
        order = np.argsort(-values, kind="stable")
        keep = legal_mask[actions[order]]
        actions, values = actions[order][keep], values[order][keep]
        if self.model is not None:
            actions, values = learned_order(state, self.model, actions)
        return actions, values

    def act(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Search the current decision (see the module docstring) and return its action."""
        agent, game = self.agent, self.game
        legal = np.flatnonzero(legal_mask)
        if legal.size == 1:
            return forced_choice(agent, int(legal[0]))
        cands, learned = self.candidates(state, legal_mask)
        if cands.size == 0:  # the evaluation lists every legal decision; this guards a mismatch
            raise RuntimeError("cartographers flat search: no legal candidate")
        seats = game.num_players()
        player = game.current_player(state)
        seed = int(rng.integers(2**62)) ^ (agent.seed_offset * 0x9E3779B97F4A7C15 % 2**62)
        stream = np.array([seed], dtype=np.uint64)
        src = state.arrays()
        det = tuple(a.copy() for a in src)
        work = tuple(a.copy() for a in src)
        tb, w = game.tb, self.weights
        stop_season = 4 if agent.horizon is None else int(src[6][M_SEASON]) + agent.horizon

        def play(k: int, future: int) -> np.ndarray:
            out = np.zeros(seats)
            if self.learned_playouts:
                self.model.playout(src, det, work, int(cands[k]), future, stop_season, out,
                                   width=agent.rollout_width)
            else:
                paired_playout(src, det, work, tb, w, int(cands[k]), np.uint64(future), stop_season, out)
            return out

        start = time.perf_counter()
        exact = np.zeros((cands.size, seats))
        if last_decision_totals(src, det, work, tb, cands, np.uint64(seed), exact):
            return self._play_exact(cands, exact[:, player], start)
        deadline = None if agent.time_limit is None else start + agent.time_limit
        budget = agent.simulations
        if agent.time_limit is not None:  # no more playouts than the first one's duration says will fit
            play(0, int(next_u64(np.array([seed ^ 0x5A5A], dtype=np.uint64))))
            fit = max(1, int(agent.time_limit / max(time.perf_counter() - start, 1e-6)))
            budget = fit if budget is None else min(budget, fit)
        k_widen, alpha = agent.widening
        width = cands.size if k_widen <= 0 else min(cands.size, math.ceil(k_widen * budget ** alpha))
        width = max(width, 1)
        screened = 0
        if agent.screen is not None and width < cands.size and drawn_cells(src) <= agent.screen[1]:
            cands, screened = screen_candidates(cands, width, agent.screen[0], player, stream, play)
        bonus = None  # the model's values beside the means; a screen reorders the candidates, so none there
        if agent.model_weight > 0 and screened == 0 and np.isfinite(learned[:width]).all():
            bonus = agent.model_weight * (learned[:width] - learned[0])
        schedule = run_halving if agent.halving else run_uniform
        best, sums, counts, sims = schedule(width, budget, seats, player, stream, play, deadline, bonus)
        sims += screened
        means = sums[:, player] / np.maximum(counts, 1)
        record_search(agent, cands[:width], counts, means, best, sims, start)
        return int(cands[best])

    def _play_exact(self, cands: np.ndarray, values: np.ndarray, start: float) -> int:
        """The game's last decision: every legal candidate valued by its exact final score (ties:
        greedy order), no sampling."""
        best = int(np.argmax(values))
        record_search(self.agent, cands, np.ones(cands.size, dtype=np.int64), values, best, 0, start,
                      exact=True)
        return int(cands[best])


@njit(cache=True)
def drawn_cells(st) -> int:
    """Cells drawn on the current decision's map (terrain shapes and monsters; not mountains, ruins or
    wastelands): 0 at the game's first decision."""
    grid = st[0][decision_map(st[6])]
    count = 0
    for cell in range(grid.shape[0]):
        if FOREST <= grid[cell] <= MONSTER_T:
            count += 1
    return count


def screen_candidates(cands: np.ndarray, width: int, futures: int, player: int, stream: np.ndarray,
                      play) -> tuple[np.ndarray, int]:
    """The ``screen`` option: the first ``width // 2`` candidates (the prior's best) and the
    ``width - width // 2`` best of all the others by their mean over ``futures`` paired futures (drawn from
    ``stream``; ties keep the prior's order). Returns those candidates, then the rest, and the playouts
    run."""
    keep = width // 2
    sums = np.zeros(cands.size)
    for _ in range(futures):
        seed = int(next_u64(stream))
        for k in range(keep, cands.size):
            sums[k] += play(k, seed)[player]
    order = np.argsort(-sums[keep:], kind="stable")
    chosen = keep + order[:width - keep]
    rest = keep + order[width - keep:]
    return np.concatenate([cands[:keep], cands[chosen], cands[rest]]), futures * (cands.size - keep)


def learned_order(state, model, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``actions`` sorted by the learned model's value, best first (stable), and those values: the
    model's choice becomes candidate 0. Actions the model does not value go last (value -inf); when it
    values none (an ambush), ``actions`` keep their order with NaN values."""
    valued, learned = model.candidate_values(state)
    if valued.size == 0:
        return actions, np.full(actions.size, np.nan)
    value_of = dict(zip(valued.tolist(), learned.tolist(), strict=True))
    key = np.array([value_of.get(int(a), -np.inf) for a in actions])
    order = np.argsort(-key, kind="stable")
    return actions[order], key[order]

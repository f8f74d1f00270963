"""Compiled turn search for Cascadia: the MCTS agent's fast path (``engine="compiled"``).

A Cascadia turn is three decisions (market pair, tile position x rotation, token hex or the bag)
whose consequences are fully known to the player: only the refill that follows is hidden. So
this search acts on whole turns. At the first decision of a turn it

1. lists candidate turns with the greedy planner (:func:`agents.greedy.cascadia.plan_turn`):
   every market option (each pair; with a nature token every tile/token combination) x every
   frontier position with its best rotation and its best token hex; the greedy choice first,
   then the rest by planned value (weighted by :func:`agents.greedy.cascadia.turn_weights`: with
   ``greedy=endgame`` a seat's last turn by its exact score change), one candidate per (market
   option, position) with greedy's best rotation (``rotations=N``: its N best rotations, each with
   the token hex planned with it); token redraws (the optional three-of-a-kind one, nature-token ones) are
   not listed, as greedy never uses them;
2. keeps the first ``ceil(k * simulations ** alpha)`` of them (``widening=k/alpha``, the same
   progressive-widening rule as the Python tree, applied once at the root); with
   ``redraws=true`` the free three-of-a-kind redraw and the nature-token redraw of all four
   tokens are added where legal (:func:`redraw_turns`): a redraw's playouts draw the new tokens
   from the determinized bag and go on with the greedy turn; a chosen redraw is played and the
   turn is searched again on the tokens it revealed; with ``free_redraw=true`` the free
   three-of-a-kind redraw is simply taken whenever offered, and the turn searched on the new tokens;
   with ``playout_redraw=true`` every seat of the greedy playouts takes it too;
3. simulates every candidate on the same sampled futures (paired: the f-th playout of every
   candidate sees the f-th determinization), each time playing the turn and then the whole rest
   of the game with the compiled greedy policy for every seat (``play_greedy``), and backs up the
   final totals of every seat;
4. plays the candidate with the best mean total of the acting seat (max-n: each seat maximises
   its own score), ties to the greedy order; the turn's remaining decisions follow that plan.
   With ``objective=base`` the playouts and the last turn are valued by the acting seat's base
   score instead (wildlife, habitats and nature tokens, without the habitat majority bonuses: the
   score the 4-player strength tables report).

``model=<folder>`` (a learned linear candidate model of Cascadia, as ``learned:<folder>`` plays it,
e.g. ``models/cascadia_solo``) sorts the candidate turns of step 1 by the model's value instead
(stable; only at a turn's first decision, where the model values whole turns): the widening then
compares the model's best turns, and ties go to the model's choice. ``rollout=learned`` (with
``model=``) also plays the playouts with the model in every seat instead of greedy
(:meth:`agents.learned.cascadia.LinearPolicy.playouts`; a model playout costs about 20 times a greedy
one, so it buys fewer playouts per second).

On the game's last turn (every candidate ends the game) nothing hidden is left: every candidate
turn is valued by its exact final total (or base score), with no widening and no playouts.

Determinization (:func:`determinize_into`) mirrors ``CascadiaGame.determinize``: the unseen tiles
(stack and box) are sorted into a canonical order, then shuffled with the search's own stream,
and the chance stream for bag draws gets fresh bits, so the search never depends on the real
order. ``simulations`` is the number of playouts per turn (spread evenly over the candidates);
``time_limit`` makes it anytime: the first playout's duration caps how many candidates are compared,
a future counts once every candidate has played it, the search stops at the deadline (at most one
playout late) and, with no complete future, plays the greedy turn.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from agents.explain import forced_choice, record_search
from agents.greedy.cascadia import (
    FREE_REDRAW,
    NATURE_COST,
    plan_turn,
    play_greedy,
    preset_weights,
    token_values,
    turn_weights,
)
from agents.search.halving import run_halving
from agents.search.learned_model import linear_model
from envs.cascadia import kernels as K
from envs.core.errors import ConfigError
from envs.core.rng import next_u64, shuffle_prefix


@njit(cache=True)
def copy_state(src, dst) -> None:
    """Copy the 13 board arrays of ``src`` into ``dst`` (:class:`CascadiaBoard` records, same shapes)."""
    dst.tiles[:] = src.tiles
    dst.rots[:] = src.rots
    dst.edges[:] = src.edges
    dst.tokens[:] = src.tokens
    dst.front[:] = src.front
    dst.cells[:] = src.cells
    dst.flist[:] = src.flist
    dst.pinfo[:] = src.pinfo
    dst.market[:] = src.market
    dst.stack[:] = src.stack
    dst.bag[:] = src.bag
    dst.ctl[:] = src.ctl
    dst.rng[:] = src.rng


@njit(cache=True)
def determinize_into(src, dst, stream: np.ndarray) -> None:
    """Copy ``src`` into ``dst`` with the unseen tiles in a fresh order drawn from their canonical
    (sorted) order and a fresh chance stream: the result ignores the real hidden order."""
    copy_state(src, dst)
    stack = dst.stack
    pos = dst.ctl[K.C_STACK_POS]
    n = stack.shape[0] - pos
    unseen = np.sort(src.stack[pos:])
    shuffle_prefix(unseen, n, stream)
    stack[pos:] = unseen
    dst.rng[0] = next_u64(stream)


@njit(cache=True)
def apply_turn(work, turn: np.ndarray, nbr, kind_edges, kind_info) -> None:
    """Apply the candidate ``turn`` (up to 3 actions, -1 padded) to the state ``work``, stopping
    at the end of the game."""
    for i in range(turn.shape[0]):
        a = turn[i]
        if a < 0 or work.ctl[K.C_PHASE] == K.PHASE_OVER:
            break
        K.apply_on_board(a, work, nbr, kind_edges, kind_info)


@njit(cache=True)
def paired_playouts(st, det, work, cands, n_cands, futures, stream, tb, weights, sums,
                    column=K.CAT_TOTAL) -> None:
    """Add ``futures`` paired playouts of each of the first ``n_cands`` candidate turns
    (``cands[k]``: up to 3 actions, -1 padded) to ``sums[k, seat]`` (each seat's final score in
    ``column``: the total, or ``K.CAT_BASE`` for the base score). ``st``, ``det`` and ``work`` are
    :class:`envs.cascadia.kernels.CascadiaBoard` records (the position, then scratch for its
    determinization and the playout), ``tb`` the game's :class:`envs.cascadia.kernels.CascadiaTables`."""
    out = np.zeros((st.ctl[K.C_PLAYERS], K.NUM_CAT), np.int32)
    no_stream = np.zeros(1, np.uint64)
    for _ in range(futures):
        determinize_into(st, det, stream)
        for k in range(n_cands):
            copy_state(det, work)
            apply_turn(work, cands[k], tb.nbr, tb.kind_edges, tb.kind_info)
            play_greedy(work, tb, weights, 0.0, no_stream)
            add_final_scores(work, tb, out, sums, k, column)


@njit(cache=True)
def add_final_scores(work, tb, out, sums, k, column) -> None:
    """Add each seat's final score in ``column`` of the game over on ``work`` to ``sums[k]`` (``out``:
    int32[seats, K.NUM_CAT] scratch)."""
    K.score_all(work.edges, work.tokens, work.cells, work.pinfo, work.ctl, tb.nbr, tb.tables, tb.solo_min,
                tb.solo_points, out)
    for p in range(out.shape[0]):
        sums[k, p] += out[p, column]


@njit(cache=True)
def last_turn_totals(st, det, work, cands, stream, tb, out, column=K.CAT_TOTAL) -> bool:
    """When every candidate turn (``cands[k]``, -1 padded) ends the game, write each one's exact
    final score in ``column`` (the total, or ``K.CAT_BASE``) into ``out`` (float64[n, seats]) and
    return True; False otherwise. Played on a determinization, so the real hidden order is never
    read (and none is drawn)."""
    nbr, kind_edges, kind_info = tb.nbr, tb.kind_edges, tb.kind_info
    players = st.ctl[K.C_PLAYERS]
    totals = np.zeros((players, K.NUM_CAT), np.int32)
    determinize_into(st, det, stream)
    for k in range(cands.shape[0]):
        copy_state(det, work)
        apply_turn(work, cands[k], nbr, kind_edges, kind_info)
        if work.ctl[K.C_PHASE] != K.PHASE_OVER:
            return False
        K.score_all(work.edges, work.tokens, work.cells, work.pinfo, work.ctl, nbr, tb.tables, tb.solo_min,
                    tb.solo_points, totals)
        for p in range(players):
            out[k, p] = totals[p, column]
    return True


def candidate_turns(game, state, weights: np.ndarray, rotations: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Candidate plans for the rest of the current turn, best planned value first (the greedy
    choice first): int64[n, 3] actions (-1 padded) and their planned values. Each (market option,
    position) gives its ``rotations`` best-valued rotations of the tile (ties in rotation order; a
    tile with fewer distinct rotations gives all it has), each with the token planned with it."""
    g, s = game, state
    weights = turn_weights(weights, s.ctl)
    p = int(s.ctl[K.C_CUR])
    supply = int(s.ctl[K.C_SUPPLY])
    phase = int(s.ctl[K.C_PHASE])
    plans: list[tuple[float, int, int, int]] = []
    if phase == K.PHASE_TOKEN:
        cells = np.empty(K.MAX_CELLS, dtype=np.int32)
        vals = np.empty(K.MAX_CELLS)
        n = token_values(p, int(s.ctl[K.C_HAND_TOKEN]), s.board_args(), g.tb, supply, weights, cells, vals)
        plans = [(float(vals[i]), K.A_TOKEN + int(cells[i]), -1, -1) for i in range(n)]
        plans.append((0.0, K.A_RETURN, -1, -1))
    else:
        if phase == K.PHASE_MARKET:
            options = [(K.A_PAIR + i, i, i, 0.0) for i in range(4) if s.market[0, i] >= 0]
            if s.pinfo[p, K.P_NATURE] > 0:
                options += [(K.A_FREE + 4 * i + j, i, j, float(weights[NATURE_COST])) for i in range(4)
                            for j in range(4) if j != i and s.market[0, i] >= 0]
            hands = [(a, int(s.market[0, i]), int(s.market[1, j]), cost) for a, i, j, cost in options]
        else:
            hands = [(-1, int(s.ctl[K.C_HAND_TILE]), int(s.ctl[K.C_HAND_TOKEN]), 0.0)]
        values = np.empty(g.num_actions)
        tokens = np.empty(g.num_actions, dtype=np.int64)
        board = s.board_args()
        for market_action, kind, w, cost in hands:
            values.fill(-np.inf)
            plan_turn(p, kind, w, board, g.tb, supply, weights, values, tokens)
            per_cell = values[K.A_TILE:K.A_TOKEN].reshape(-1, 6)
            best_rots = np.argsort(-per_cell, axis=1, kind="stable")[:, :rotations]  # ties: rotation order
            for c in np.flatnonzero(np.isfinite(per_cell.max(axis=1))):
                for r in best_rots[c]:
                    if not np.isfinite(per_cell[c, r]):  # the tile has fewer distinct rotations
                        break
                    tile_action = K.A_TILE + 6 * int(c) + int(r)
                    plan = (market_action, tile_action, int(tokens[tile_action]))
                    if market_action < 0:
                        plan = plan[1:] + (-1,)
                    plans.append((float(per_cell[c, r]) - cost, *plan))
    order = sorted(range(len(plans)), key=lambda i: -plans[i][0])  # stable: ties keep listing order
    actions = np.array([plans[i][1:] for i in order], dtype=np.int64).reshape(-1, 3)
    values = np.array([plans[i][0] for i in order])
    return actions, values


def redraw_turns(legal_mask: np.ndarray) -> np.ndarray:
    """The token redraws ``redraws=true`` compares (int64[n, 3], -1 padded): the free
    three-of-a-kind redraw and the nature-token redraw of all four tokens, where legal. Each is a
    turn's first action only: its playouts go on with the greedy turn on the new tokens."""
    turns = [a for a in (K.A_THREE, K.A_REDRAW + 15) if legal_mask[a]]
    out = np.full((len(turns), 3), -1, dtype=np.int64)
    out[:, 0] = turns
    return out


class TurnSearch:
    """Whole-turn search for one :class:`agents.search.mcts.MCTSAgent` (see the module docstring)."""

    HALVING = True  # takes halving=true (agents.search.halving)
    REDRAWS = True  # takes redraws=true (token redraws as candidate turns)
    GREEDY_PRESETS = True  # takes greedy=<preset> (agents.greedy.cascadia.PRESETS)
    OBJECTIVES = {"total": K.CAT_TOTAL, "base": K.CAT_BASE}  # objective=NAME: the score column maximised
    ROLLOUT_WIDTH = True  # takes rollout_width=N with rollout=learned
    ROTATIONS = True  # takes rotations=N (each placement's N best rotations as candidate turns)
    LEARNED_MODEL = True  # takes model=<folder> (a learned linear model: the candidate order; with
    # rollout=learned also the playouts)

    def __init__(self, agent):
        self.agent = agent
        self.game = agent.game
        self.weights = preset_weights(agent.greedy)  # candidate ranking and playouts
        if agent.playout_redraw:  # every seat of the greedy playouts takes the free redraw
            self.weights[FREE_REDRAW] = 1.0
        self.column = self.OBJECTIVES[agent.objective]
        self._plan: list[int] = []
        self._plan_key: tuple[int, ...] | None = None
        self.learned_playouts = agent.rollout == "learned"
        methods = ("turn_values", "playouts") if self.learned_playouts else ("turn_values",)
        self.model = None if agent.model is None else linear_model(self.game, agent.model, *methods)
        if self.learned_playouts and getattr(self.model, "table", None) is not None:
            raise ConfigError(f"mcts: rollout=learned plays linear models without a pattern table; "
                              f"model={agent.model!r} has one (it can still order the candidates)")

    @staticmethod
    def check_options(rollout: str, max_depth: int | None, determinize_every: int, simulations: int | None,
                      ) -> None:
        """This search always uses paired playouts of whole turns (greedy, or with ``rollout=learned``
        the learned model's); its width comes from the playout budget (``simulations``, and with a
        time limit at most as many playouts as the first one's duration says will fit)."""
        if rollout not in ("greedy", "learned") or max_depth not in (None, 1) or determinize_every != 1:
            raise ConfigError("mcts: engine=compiled for cascadia searches whole turns with greedy "
                              "playouts: it needs rollout=greedy (or rollout=learned with model=<folder>) "
                              "and no max_depth or determinize_every")

    @staticmethod
    def _key(state) -> tuple[int, ...]:
        """The same for every decision of one turn of one game: turn, seat, the game's starter
        tiles and the last tile dealt (so a plan never carries over to another game)."""
        c = state.ctl
        pos = int(c[K.C_STACK_POS])
        return (int(c[K.C_TURN]), int(c[K.C_CUR]), pos, int(state.stack[pos - 1]),
                *(int(t) for t in state.starters))

    def act(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """The next action of this turn's plan, searching a new plan when none fits ``state``."""
        key = self._key(state)
        if self._plan and self._plan_key == key and legal_mask[self._plan[0]]:
            self.agent.last_stats = {"simulations": 0, "seconds": 0.0, "planned": True}
            self._explain({"kind": "mcts", "chosen": self._plan[0], "planned": True,
                           "candidates": [{"action": self._plan[0]}]})
            return self._plan.pop(0)
        self._plan = []
        legal = np.flatnonzero(legal_mask)
        if legal.size == 1:
            return forced_choice(self.agent, int(legal[0]))
        if self.agent.free_redraw and legal_mask[K.A_THREE]:  # the turn is searched on the new tokens
            return forced_choice(self.agent, K.A_THREE)
        plan = self._search(state, legal_mask, rng)
        self._plan = [int(a) for a in plan[1:] if a >= 0]
        self._plan_key = key
        return int(plan[0])

    def _playout(self, src, det, work, cand: np.ndarray, future: np.ndarray, sums: np.ndarray) -> None:
        """One playout of the candidate turn ``cand`` (1 x 3) on the future seeded by ``future`` (left
        unchanged, so every candidate sees the same determinization), added to ``sums`` (1 x P)."""
        if self.learned_playouts:
            self.model.playouts(src, det, work, cand, 1, future.copy(), sums, self.column,
                                width=self.agent.rollout_width)
            return
        paired_playouts(src, det, work, cand, 1, 1, future.copy(), self.game.tb, self.weights, sums,
                        self.column)

    def _search(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        agent, game = self.agent, self.game
        cands, values = candidate_turns(game, state, self.weights, self.agent.rotations)
        cands = cands[legal_mask[cands[:, 0]]]
        if self.model is not None and int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET and cands.shape[0] > 1:
            cands = cands[np.argsort(-self.model.turn_values(state, cands), kind="stable")]
        player = game.current_player(state)
        k_widen, alpha = agent.widening
        seed = int(rng.integers(2**62)) ^ (agent.seed_offset * 0x9E3779B97F4A7C15 % 2**62)
        stream = np.array([seed], dtype=np.uint64)
        src = state.board_args()
        det, work = src.copy(), src.copy()
        start = time.perf_counter()
        exact = np.zeros((cands.shape[0], game.num_players()))
        if last_turn_totals(src, det, work, cands, stream.copy(), game.tb, exact, self.column):
            return self._play_exact(cands, exact[:, player], start)
        deadline = None if agent.time_limit is None else start + agent.time_limit
        future = np.array([next_u64(stream)], dtype=np.uint64)
        first = np.zeros((1, game.num_players()))
        self._playout(src, det, work, cands[:1], future, first)  # candidate 0 on future 0 times a playout
        budget = agent.simulations
        if agent.time_limit is not None:  # no more playouts than the first one's duration says will fit
            fit = max(1, int(agent.time_limit / max(time.perf_counter() - start, 1e-6)))
            budget = fit if budget is None else min(budget, fit)
        width = cands.shape[0] if k_widen <= 0 else min(cands.shape[0], math.ceil(k_widen * budget ** alpha))
        width = max(width, 1)
        if agent.redraws:  # compared beside the widened turns, after them (ties keep the greedy order)
            extra = redraw_turns(legal_mask)
            cands = np.concatenate([cands[:width], extra])
            width += extra.shape[0]
        if agent.halving:
            return self._search_halving(src, det, work, cands, width, budget, stream, deadline, player, start)
        futures = max(1, agent.simulations // width) if agent.simulations is not None else 1 << 62
        sums = np.zeros((width, game.num_players()))
        done = 0
        while done < futures:
            this = np.zeros_like(sums)
            this[0] = first[0] if done == 0 else 0.0
            complete = True
            for k in range(1 if done == 0 else 0, width):  # a future counts once every candidate played it
                if deadline is not None and time.perf_counter() >= deadline:
                    complete = False
                    break
                self._playout(src, det, work, cands[k:k + 1], future, this[k:k + 1])
            if not complete:
                break
            sums += this
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
            future = np.array([next_u64(stream)], dtype=np.uint64)
        means = sums[:, player] / max(done, 1)
        best = int(np.argmax(means)) if done else 0  # first of the best: ties keep the greedy order
        record_search(agent, cands[:width, 0], np.full(width, done), means, best, done * width, start,
                      details=self._turns(cands[:width]))
        return cands[best]

    def _search_halving(self, src, det, work, cands: np.ndarray, width: int, budget: int, stream: np.ndarray,
                        deadline: float | None, player: int, start: float) -> np.ndarray:
        """``halving=true``: the first ``width`` candidates by sequential halving within ``budget``
        playouts (:func:`agents.search.halving.run_halving`; same paired futures and greedy playouts)."""
        agent, game = self.agent, self.game
        seats = game.num_players()

        def play(k: int, seed: int) -> np.ndarray:
            out = np.zeros((1, seats))
            self._playout(src, det, work, cands[k:k + 1], np.array([seed], dtype=np.uint64), out)
            return out[0]

        best, sums, counts, sims = run_halving(width, budget, seats, player, stream, play, deadline)
        means = sums[:, player] / np.maximum(counts, 1)
        record_search(agent, cands[:width, 0], counts, means, best, sims, start,
                      details=self._turns(cands[:width]))
        return cands[best]

    def _play_exact(self, cands: np.ndarray, values: np.ndarray, start: float) -> np.ndarray:
        """The game's last turn: every candidate turn valued by its exact final total (ties: greedy
        order), no widening and no sampling."""
        best = int(np.argmax(values))
        record_search(self.agent, cands[:, 0], np.ones(len(cands), dtype=np.int64), values, best, 0, start,
                      details=self._turns(cands), exact=True)
        return cands[best]

    def _turns(self, cands: np.ndarray) -> list[dict] | None:
        """The candidate turns for an explanation (its first action stands for the turn), or None
        when not explaining."""
        if not self.agent.explaining:
            return None
        return [{"turn": [int(a) for a in c if a >= 0]} for c in cands]

    def _explain(self, explanation: dict) -> None:
        if self.agent.explaining:
            self.agent.last_explanation = explanation

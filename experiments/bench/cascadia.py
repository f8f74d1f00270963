"""Cascadia speed: the compiled engine against the plain reference, measured in the same run.

Figures (one core): a whole 4-player random game inside numba, one full scoring pass of a
finished 4-player table (timed in a numba loop, and as one call from Python), the tile-placement
legal actions (frontier x rotations) and the full boolean mask of a mid-game position,
single-agent env steps per second, and the reference module's random 4-player game and scoring
pass for the speed-up ratios. The learned candidate view: market decisions per CPU second listed
(the listing presets' candidate turns) and described (a feature row per turn) by the shared-figure
kernels (:mod:`agents.learned.cascadia_listing`, :mod:`agents.learned.cascadia_features`) against
their by-definition references on the same positions (turn starts of 4-player greedy games).

What the two random games do (like for like; ``speedup_vs_reference`` is the ratio of their
mean times per game):

* compiled, ``kernels.random_games``: deal (starters, shuffled stack, bag, market, four-of-a-kind
  redraws), then about 250 decisions, each uniformly random among the legal ones: a market
  decision (pairs, paid free choices and redraws, the free three-of-a-kind redraw) is drawn by
  counting the options and indexing the k-th; a placement uniformly over frontier x rotations,
  indexed the same way; a token target uniformly over the matching empty hexes (counted, the k-th
  ascending one found by rank) and the return to the bag. Each decision is applied (refill,
  overpopulation, nature tokens), and the finished table is scored in full (exact elk split,
  corridors, majority bonuses); between games only the cells the last deal used are emptied.
* reference, ``reference.play_random_game``: the same deal and turn flow in plain Python; market
  options listed as tuples and one picked with ``random.choice``, a frontier position and a
  rotation each uniformly (the same distribution as uniform over position x rotation), a token
  target uniformly over the matching empty hexes and the return, then ``score_boards``.

Both draw every decision from the same distribution over the legal moves and both score the
final table once; each side is timed as the fastest of five batches of the same games. The
random streams differ (SplitMix64 against Python's ``random``), so the two play different games
of the same kind. The scoring figures time ``kernels.score_all`` (its scratch allocated per
call) against ``reference.score_boards`` on the same finished table.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from agents.greedy.cascadia import CascadiaGreedyAgent
from agents.learned.cascadia import _LISTING
from agents.learned.cascadia_features import turn_features
from agents.learned.cascadia_kernels import NUM_FEATURES, list_turns_by_option, turn_features_by_turn
from agents.learned.cascadia_listing import list_turns
from agents.learned.cascadia_playouts import listing_weights
from envs.cascadia import kernels as K
from envs.cascadia import reference as R
from envs.cascadia.data import CELL_COORDS, NUM_TILES, STARTER_CELLS
from envs.cascadia.env import CascadiaEnv
from envs.cascadia.game import CascadiaGame


def _per_call(fn, repeats: int) -> float:
    """Seconds per call of ``fn`` over ``repeats`` calls (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def _best_batch(fn, batches: int = 5) -> float:
    """Seconds of the fastest of ``batches`` runs of ``fn`` (both engines are timed this way, each
    batch the same games, so a busy machine slows neither side's figure more than the other's)."""
    best = float("inf")
    for _ in range(batches):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@njit(cache=True)
def _score_loop(reps, edges, tokens, cells, pinfo, ctl, nbr, tables, solo_min, solo_points, out) -> int:
    """``reps`` full scoring passes inside numba (no Python call overhead in the timing)."""
    acc = 0
    for _ in range(reps):
        K.score_all(edges, tokens, cells, pinfo, ctl, nbr, tables, solo_min, solo_points, out)
        acc += out[0, K.CAT_TOTAL]
    return acc


@njit(cache=True)
def _legal_loop(reps, tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, out) -> int:
    """``reps`` tile-placement legal-action listings inside numba."""
    acc = 0
    for _ in range(reps):
        acc += K.legal_actions(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, out)
    return acc


def _finished_table(game: CascadiaGame, seed: int):
    s = game.new_game(seed)
    game.play_random_compiled(s, np.array([seed + 1], dtype=np.uint64))
    return s


def run_bench(quick: bool = False) -> dict:
    """Measure and return the figures (``quick``: fewer repetitions)."""
    game = CascadiaGame(players=4)
    d = game.data
    games = 200 if quick else 10000  # batches of about 0.3 s: short ones swing with the machine's load
    totals = np.zeros((games, 4), dtype=np.int32)
    args = (game.tb, STARTER_CELLS, NUM_TILES, d.tiles_used(4), d.wildlife_per_animal, d.nature_tokens)
    K.random_games(1, 4, 0, *args, totals)  # compile / load the cache outside the timing
    decisions = K.random_games(games, 4, 1, *args, totals)
    compiled_ms = _best_batch(lambda: K.random_games(games, 4, 1, *args, totals)) / games * 1e3

    ref_games = 3 if quick else 60
    R.play_random_game(ref_games, 4)  # warm-up outside the timing, as for the compiled side

    def reference_batch():
        R._best_elk_split.cache_clear()  # every batch starts with the reference's elk memo empty
        for seed in range(ref_games):
            R.play_random_game(seed, 4)

    reference_ms = _best_batch(reference_batch) / ref_games * 1e3

    s = _finished_table(game, 7)
    out = np.zeros((4, K.NUM_CAT), dtype=np.int32)
    def score_pass():
        K.score_all(s.edges, s.tokens, s.cells, s.pinfo, s.ctl, game.nbr, game.tables, d.solo_bonus_min,
                    d.solo_bonus_points, out)

    score_call_s = _per_call(score_pass, 200 if quick else 5000)
    reps = 2000 if quick else 50000
    def score_many():
        _score_loop(reps, s.edges, s.tokens, s.cells, s.pinfo, s.ctl, game.nbr, game.tables, d.solo_bonus_min,
                    d.solo_bonus_points, out)

    score_s = _per_call(score_many, 3) / reps
    boards = [_reference_board(game, s, p) for p in range(4)]
    nature = [int(v) for v in s.pinfo[:, K.P_NATURE]]
    ref_score_s = _per_call(lambda: R.score_boards(boards, nature), 10 if quick else 100)

    mid = game.new_game(3)
    rng = np.random.default_rng(3)
    while mid.ctl[K.C_TURN] < 40 or game.phase(mid) != "tile":
        legal = game.legal_actions(mid)
        game.step(mid, int(legal[rng.integers(len(legal))]))
    buf = np.empty(K.MAX_LEGAL, dtype=np.int32)
    mask = np.zeros(K.NUM_ACTIONS, dtype=np.bool_)
    m = mid
    legal_s = _per_call(lambda: K.legal_actions(m.tiles, m.tokens, m.cells, m.flist, m.pinfo, m.market, m.bag,
                                                m.ctl, game.kind_info, buf), 500 if quick else 20000)
    legal_in_numba_s = _per_call(lambda: _legal_loop(reps, m.tiles, m.tokens, m.cells, m.flist, m.pinfo,
                                                     m.market, m.bag, m.ctl, game.kind_info, buf), 3) / reps
    mask_s = _per_call(lambda: K.legal_mask(m.tiles, m.tokens, m.cells, m.flist, m.pinfo, m.market, m.bag,
                                            m.ctl, game.kind_info, mask), 200 if quick else 5000)

    env_steps = _env_steps_per_s(400 if quick else 3000)
    learned, learned_reference = _learned_listings_per_s(quick)
    return {
        "compiled_game_ms_4p": compiled_ms,
        "decisions_per_game_4p": decisions / games,
        "reference_game_ms_4p": reference_ms,
        "speedup_vs_reference": reference_ms / compiled_ms,
        "score_us": score_s * 1e6,
        "score_call_from_python_us": score_call_s * 1e6,
        "reference_score_us": ref_score_s * 1e6,
        "score_speedup_vs_reference": ref_score_s / score_s,
        "placement_legal_actions_us": legal_in_numba_s * 1e6,
        "placement_legal_actions_call_from_python_us": legal_s * 1e6,
        "placement_mask_us": mask_s * 1e6,
        "env_steps_per_s": env_steps,
        "random_mean_total_4p": float(totals.mean()),
        "learned_listings_per_s": learned,
        "learned_listings_reference_per_s": learned_reference,
        "learned_listing_speedup": learned / learned_reference,
    }


def _learned_listings_per_s(quick: bool) -> tuple[float, float]:
    """Market decisions per CPU second whose candidate turns are listed and described: the shared-figure
    kernels and their references (one greedy plan per weight set and option, each turn put on the board)."""
    game = CascadiaGame(players=4)
    positions = []
    for seed in range(2 if quick else 6):
        state = game.new_game(seed)
        agent = CascadiaGreedyAgent(game, preset="selfplay")
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET:
                positions.append((state.board_args(), listing_weights(_LISTING, state.ctl)))
                state = state.copy()
            game.step(state, agent.act(state, game.legal_mask(state), rng))

    def rate(listing, features) -> float:
        def batch():
            for b, sets in positions:
                turns, _, _ = listing(b, game.tb, sets)
                features(b, turns, game.tb, np.empty((turns.shape[0], NUM_FEATURES), np.float32))

        batch()  # compile / load the cache outside the timing
        start = time.process_time()
        batch()
        return len(positions) / max(time.process_time() - start, 1e-9)

    return rate(list_turns, turn_features), rate(list_turns_by_option, turn_features_by_turn)


def _reference_board(game: CascadiaGame, s, p: int) -> R.Board:
    board: R.Board = {}
    for k in range(int(s.pinfo[p, K.P_NCELLS])):
        c = int(s.cells[p, k])
        kind = int(s.tiles[p, c])
        token = int(s.tokens[p, c])
        mask = int(game.kind_info[kind, 0])
        board[(int(CELL_COORDS[c, 0]), int(CELL_COORDS[c, 1]))] = R.Hex(
            tuple(int(e) for e in s.edges[p, c]), frozenset(w for w in range(5) if mask >> w & 1),
            token if token >= 0 else None, bool(game.kind_info[kind, 1] >= 0))
    return board


def _env_steps_per_s(steps: int) -> float:
    env = CascadiaEnv(players=1)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        _, _, done, _, info = env.step(int(legal[rng.integers(len(legal))]))
        if done:
            _, info = env.reset()
    return steps / (time.perf_counter() - start)


if __name__ == "__main__":
    import json

    print(json.dumps(run_bench(quick=True), indent=2))

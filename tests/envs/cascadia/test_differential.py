"""Kernels against the plain reference rules on thousands of random positions."""

from __future__ import annotations

import random

import numpy as np
import pytest

from envs.cascadia import kernels as K
from envs.cascadia import reference as R
from envs.cascadia.data import CELL_COORDS, NEIGHBORS, NUM_TILES, STARTER_CELLS
from envs.cascadia.game import CascadiaGame
from tests.envs.cascadia.helpers import empty_areas, put, to_reference


def snapshots(players: int, seeds: range, stops: tuple[int, ...]):
    """States of random games after ``stops`` completed turns (and at the end)."""
    g = CascadiaGame(players=players)
    for seed in seeds:
        s = g.new_game(seed)
        rng = np.random.default_rng(seed)
        for stop in stops:
            while not g.is_over(s) and s.ctl[K.C_TURN] < stop:
                legal = g.legal_actions(s)
                g.step(s, int(legal[rng.integers(len(legal))]))
            yield g, s.copy()


def dense_boards(count: int, seed: int):
    """Blobs of 23 random tiles with random animals, elk and salmon heavy (stresses the splits)."""
    g = CascadiaGame(players=1)
    rng = np.random.default_rng(seed)
    for _ in range(count):
        s = empty_areas(g)
        taken = {(0, 0)}
        frontier = [(0, 0)]
        while len(taken) < 23:
            q, r = frontier[rng.integers(len(frontier))]
            dq, dr = R.DIRS[rng.integers(6)]
            nxt = (q + dq, r + dr)
            if nxt not in taken:
                taken.add(nxt)
                frontier.append(nxt)
        for q, r in sorted(taken):
            w = rng.choice(6, p=[0.12, 0.35, 0.25, 0.1, 0.1, 0.08])
            put(g, s, 0, q, r, kind=int(rng.integers(NUM_TILES)), rot=int(rng.integers(6)),
                token=int(w) if w < 5 else None)
        yield g, s


def reference_scores(g: CascadiaGame, s) -> list[dict]:
    boards = [to_reference(g, s, p) for p in range(g.players)]
    return R.score_boards(boards, [int(v) for v in s.pinfo[:, K.P_NATURE]], g.second_place_tie)


def test_full_scoring_matches_reference_on_2000_boards():
    boards = 0
    for players, seeds in ((4, range(60)), (3, range(40)), (2, range(40)), (1, range(40))):
        for g, s in snapshots(players, seeds, (7 * players, 14 * players, 1000)):
            table = g.score_table(s)
            for p, ref in enumerate(reference_scores(g, s)):
                assert table[p, 0:5].tolist() == ref["wildlife"]
                assert table[p, 5:10].tolist() == ref["corridors"]
                assert table[p, 10:15].tolist() == ref["bonuses"]
                assert table[p, K.CAT_TOTAL] == ref["total"] and table[p, K.CAT_BASE] == ref["base"]
                boards += 1
    for g, s in dense_boards(600, 1):
        ref = to_reference(g, s, 0)
        expected = R.wildlife_scores(ref) + [R.corridor(ref, h) for h in range(5)]
        assert g.score_table(s)[0, 0:10].tolist() == expected
        boards += 1
    assert boards >= 2000


def _market_code(option: tuple) -> int:
    kind = option[0]
    if kind == "pair":
        return K.A_PAIR + option[1]
    if kind == "free":
        return K.A_FREE + 4 * option[1] + option[2]
    return K.A_REDRAW + option[1] if kind == "redraw" else K.A_THREE


def test_market_actions_match_reference_options():
    """The market actions (counted and indexed by the kernels, not enumerated) are the reference's
    options in codec order: at the start of turns and after a paid or a free redraw."""
    checked = 0
    for g, s in snapshots(3, range(40), tuple(range(0, 60, 2))):
        for _ in range(3):
            if g.is_over(s) or g.phase(s) != "market" or (s.market[1] < 0).any():
                break
            p = int(s.ctl[K.C_CUR])
            ref = R.RefGame(g.players, random.Random(0), nature=[int(v) for v in s.pinfo[:, K.P_NATURE]],
                            bag=[w for w in range(5) for _ in range(int(s.bag[w]))],
                            market_tokens=[int(w) for w in s.market[1]])
            options = R.market_options(ref, p, bool(s.ctl[K.C_ACTED]), bool(s.ctl[K.C_THREE_USED]))
            legal = [int(a) for a in g.legal_actions(s)]
            assert legal == [_market_code(o) for o in options]
            checked += 1
            if legal[-1] < K.A_REDRAW:
                break
            g.step(s, legal[-1])  # the free redraw of three, else the paid redraw of all four
    assert checked > 300


def test_masks_match_reference_frontier_and_targets():
    checked = 0
    for g, s in snapshots(2, range(30), tuple(range(0, 40, 3))):
        if g.is_over(s):
            continue
        p = int(s.ctl[K.C_CUR])
        board = to_reference(g, s, p)
        # the tile phase of the same position: put the first pair in hand
        t = s.copy()
        g.step(t, K.A_PAIR)
        tile_actions = g.legal_actions(t)
        cells = sorted({(int(CELL_COORDS[(a - K.A_TILE) // 6, 0]), int(CELL_COORDS[(a - K.A_TILE) // 6, 1]))
                        for a in tile_actions})
        assert cells == R.frontier(board)
        nrot = 1 if g.kind_info[t.ctl[K.C_HAND_TILE], 1] >= 0 else 6
        assert len(tile_actions) == nrot * len(cells)
        g.step(t, int(tile_actions[0]))
        if g.phase(t) != "token":
            continue
        board = to_reference(g, t, p)
        w = int(t.ctl[K.C_HAND_TOKEN])
        targets = sorted((int(CELL_COORDS[a - K.A_TOKEN, 0]), int(CELL_COORDS[a - K.A_TOKEN, 1]))
                         for a in g.legal_actions(t) if a != K.A_RETURN)
        assert targets == sorted(pos for pos, h in board.items() if h.token is None and w in h.allowed)
        assert g.legal_actions(t)[-1] == K.A_RETURN
        checked += 1
    assert checked > 100


def test_score_deltas_match_rescoring():
    mark = np.zeros(NEIGHBORS.shape[0], dtype=np.int32)
    members = np.empty(K.MAX_CELLS, dtype=np.int32)
    queue = np.empty(K.MAX_CELLS, dtype=np.int32)
    stats = np.zeros(7, dtype=np.int32)
    rng = np.random.default_rng(3)
    checked = 0
    sources = list(snapshots(1, range(30), (5, 10, 15, 19))) + list(dense_boards(60, 2))
    for g, s in sources:
        p = 0
        before = g.score_table(s)[p]
        K.wildlife_stats(p, s.tokens, s.cells, s.pinfo, g.nbr, g.tables, mark, stats)
        n = int(s.pinfo[p, K.P_NCELLS])
        for _ in range(8):
            c = int(s.cells[p, rng.integers(n)])
            if s.tokens[p, c] >= 0:
                continue
            w = int(rng.integers(5))
            gain = K.token_gain(p, c, w, s.tokens, g.nbr, g.tables, stats, mark, members)
            assert not mark.any()
            t = s.copy()
            t.tokens[p, c] = w
            assert gain == g.score_table(t)[p, 0:5].sum() - before[0:5].sum()
            checked += 1
        largest = before[5:10].copy()
        for _ in range(6):
            c = int(s.flist[p, rng.integers(int(s.pinfo[p, K.P_NFRONT]))])
            kind, rot = int(rng.integers(NUM_TILES)), int(rng.integers(6))
            gain = K.corridor_gain(p, c, kind, rot, s.edges, g.nbr, g.kind_edges, largest, mark, queue)
            assert not mark.any()
            t = s.copy()
            put(g, t, p, int(CELL_COORDS[c, 0]), int(CELL_COORDS[c, 1]), kind=kind, rot=rot)
            assert gain == g.score_table(t)[p, 5:10].sum() - before[5:10].sum()
            checked += 1
    assert checked > 500


def _compiled_random_totals(players: int, games: int, seed: int) -> np.ndarray:
    g = CascadiaGame(players=players)
    d = g.data
    totals = np.zeros((games, players), dtype=np.int32)
    K.random_games(games, players, seed, g.tb, STARTER_CELLS, NUM_TILES, d.tiles_used(players),
                   d.wildlife_per_animal, d.nature_tokens, totals)
    return totals


def test_reference_game_plays_20_turns_each():
    for players in (1, 2):
        result = R.play_random_game(3, players)  # asserts 23 hexes per area inside
        assert len(result) == players and all(r["total"] == r["base"] + sum(r["bonuses"]) for r in result)


@pytest.mark.slow
@pytest.mark.parametrize("players", [1, 4])
def test_random_game_score_distribution_matches_the_reference_engine(players):
    """Two independent turn-flow implementations, same uniform policy: same mean total."""
    compiled = _compiled_random_totals(players, 3000, 11)
    ref = np.array([r["total"] for s in range(400) for r in R.play_random_game(s, players)])
    se = np.hypot(compiled.std() / np.sqrt(compiled.size), ref.std() / np.sqrt(ref.size))
    assert abs(compiled.mean() - ref.mean()) < 4 * se

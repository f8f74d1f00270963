"""Dorfromantik's candidate view: greedy identity, features against a plain-Python recount, the
candidate set, the linear policy and the playout labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.greedy.dorfromantik import DorfromantikGreedyAgent
from agents.learned import dorfromantik as L
from agents.learned import dorfromantik_after as LA
from agents.learned import dorfromantik_kernels as LK
from agents.learned.model import load_model
from envs.core.errors import ConfigError
from envs.dorfromantik import kernels as K
from envs.dorfromantik.game import DorfromantikGame, DorfState


@pytest.fixture(scope="module")
def game() -> DorfromantikGame:
    return DorfromantikGame()


def first_best(values: np.ndarray) -> int:
    return int(np.flatnonzero(values >= values.max() - 1e-9)[0])


@pytest.fixture(scope="module")
def positions(game) -> list[DorfState]:
    """Every decision of five greedy (selfplay, first-best ties) games: a few hundred positions."""
    agent = DorfromantikGreedyAgent(game, preset="selfplay")
    out = []
    for seed in range(5):
        state = game.new_game(100 + seed)
        while not game.is_over(state):
            out.append(state.copy())
            actions, values = agent.action_values(state)
            game.step(state, int(actions[first_best(values)]))
    return out


def test_feature_table():
    names = [n for n, _ in L.FEATURES]
    assert len(set(names)) == L.N_FEATURES == LK.N_COLUMNS
    assert 20 <= L.N_FEATURES <= 40
    assert L.greedy_theta("default").shape == (L.N_PHASES, L.N_FEATURES)
    assert not L.greedy_theta("selfplay")[:, LK.N_GREEDY:].any()


@pytest.mark.parametrize("preset", ["selfplay", "default"])
def test_linear_values_are_greedy_values(game, positions, preset):
    assert len(positions) >= 200
    agent = DorfromantikGreedyAgent(game, preset=preset)
    theta = L.greedy_theta(preset)
    phases = set()
    for state in positions:
        actions, feats = L.candidates(game, state)
        g_actions, g_values = agent.action_values(state)
        np.testing.assert_array_equal(actions, g_actions)
        assert feats.dtype == np.float32 and feats.shape == (actions.size, L.N_FEATURES)
        ph = L.phase(game, state)
        phases.add(ph)
        values = feats.astype(np.float64) @ theta[ph]
        diff = values - g_values
        assert np.ptp(diff) < 1e-9
        assert abs(g_values[np.argmax(values)] - g_values.max()) < 1e-6
    assert phases == {0, 1, 2}


def test_candidates_are_the_legal_actions(game, positions):
    agent = DorfromantikGreedyAgent(game)
    for state in positions[::3]:
        before = state.copy()
        actions, _ = L.candidates(game, state)
        mask = game.legal_mask(state)
        assert set(actions.tolist()) == set(agent.action_values(state)[0].tolist())
        assert set(actions.tolist()) == set(np.flatnonzero(mask).tolist())
        assert actions.size == len(set(actions.tolist()))
        # the kernel puts every trial placement back
        n = int(state.meta[K.M_FRONT])
        for name in ("cells", "placed", "tasks", "meta", "deck"):
            np.testing.assert_array_equal(getattr(state, name), getattr(before, name))
        np.testing.assert_array_equal(state.frontier[:n + 6], before.frontier[:n + 6])
    over = positions[0].copy()
    over.meta[K.M_OVER] = 1
    actions, feats = L.candidates(game, over)
    assert actions.size == 0 and feats.shape == (0, L.N_FEATURES)


# ---- plain-Python recount of the extra descriptors ----------------------------------------------

def root(uf: np.ndarray, x: int) -> int:
    while uf[0, x] != x:
        x = int(uf[0, x])
    return x


def extras(game: DorfromantikGame, before: DorfState, after: DorfState, action: int) -> dict[str, float]:
    """The descriptors of FEATURES after the greedy terms, from the states around ``game.step``."""
    q, r, rot = game.action_to_placement(before, action)
    cell = (r + K.GRID_RADIUS) * K.GRID_SIDE + (q + K.GRID_RADIUS)
    tile = int(before.meta[K.M_DRAWN])
    edges = [int(e) for e in game._rot_edges[tile, rot]]
    empty = [before.cells[cell + int(K.DIR_OFFSETS[d]), 0] < 0 for d in range(6)]
    land_left = K.NUM_LAND - int(before.meta[K.M_LAND_POS])
    frac = land_left / (K.NUM_LAND - int(before.meta[K.M_UNSEEN]))
    uf, m = after.uf, after.meta
    p = int(m[K.M_PLACED]) - 1
    assert after.placed[p, 0] == cell
    groups = {t: root(uf, p * 5 + t - 1) for t in set(edges) if t > 0}
    area = [t for t in groups if t <= 3]
    f = int(game._flag[tile])
    open_tasks = [k for k in range(int(m[K.M_TASKS])) if after.tasks[k, 3] == 0]
    task_roots = [root(uf, int(after.tasks[k, 0])) for k in open_tasks]
    out = {
        "land_left": land_left, "frac_left": frac,
        "tasks_left": K.NUM_TASK - int(before.meta[K.M_TASK_POS]),
        "task_tile": float(game._task_type[tile] > 0),
        "neighbours": empty.count(False),
        "area_free": sum(1 for d in range(6) if empty[d] and 1 <= edges[d] <= 3),
        "line_free": sum(1 for d in range(6) if empty[d] and edges[d] >= 4),
        "meadow_free": sum(1 for d in range(6) if empty[d] and edges[d] == 0),
        "frontier": int(m[K.M_FRONT]),
        "new_frontier": int(m[K.M_FRONT]) - int(before.meta[K.M_FRONT]) + 1,
        "group_open": sum(int(uf[2, g]) for g in groups.values()),
        "largest_area": max([int(uf[1, groups[t]]) for t in area], default=0),
        "areas_closed": sum(1 for t in area if uf[2, groups[t]] == 0),
        "flag_open": int(uf[1, groups[f]]) if f and uf[2, groups[f]] > 0 else 0,
        "rail_len": int(uf[1, groups[K.RAIL]]) if K.RAIL in groups else 0,
        "river_len": int(uf[1, groups[K.RIVER]]) if K.RIVER in groups else 0,
        "open_tasks": len(open_tasks),
        "missing": sum(int(after.tasks[k, 2]) - int(uf[1, rt])
                       for k, rt in zip(open_tasks, task_roots, strict=True)),
        "task_open_edges": sum(int(uf[2, rt]) for rt in task_roots),
        "tight_tasks": sum(1 for rt in task_roots if uf[2, rt] == 1),
        "completed": int(m[K.M_DONE]) - int(before.meta[K.M_DONE]),
        "failed": int(m[K.M_FAILED]) - int(before.meta[K.M_FAILED]),
    }
    return out


def test_features_match_a_python_recount(game, positions):
    names = [n for n, _ in L.FEATURES]
    col = {n: i for i, n in enumerate(names)}
    rng = np.random.default_rng(0)
    checked = 0
    for state in positions[::4]:
        actions, feats = L.candidates(game, state)
        phase_left = L.phase(game, state)
        assert phase_left == L.phase(game, state.copy())
        for i in rng.choice(actions.size, size=min(4, actions.size), replace=False):
            after = state.copy()
            game.step(after, int(actions[i]))
            want = extras(game, state, after, int(actions[i]))
            frac = want["frac_left"]
            row = feats[i].astype(np.float64)
            want["progress_x_left"] = row[col["progress"]] * frac
            want["match_x_left"] = row[col["match"]] * frac
            want["mismatch_x_left"] = row[col["mismatch"]] * frac
            want["missing_x_left"] = want["missing"] * frac
            want["area_free_x_left"] = want["area_free"] * frac
            want["new_task_x_left"] = row[col["new_task"]] * frac
            assert set(want) == set(names[LK.N_GREEDY:])
            for name, value in want.items():
                assert feats[i, col[name]] == np.float32(value), (name, feats[i, col[name]], value)
            # the points term is the score change of the placement
            gained = game.score_vector(after)[K.S_TOTAL] - game.score_vector(state)[K.S_TOTAL]
            assert feats[i, col["points"]] == gained
            assert 1 <= want["neighbours"] <= 6 or int(state.meta[K.M_PLACED]) == 0
            checked += 1
    assert checked >= 150


def test_phases(game):
    state = game.new_game(0)
    assert L.phase(game, state) == 0
    state.meta[K.M_LAND_POS] = K.NUM_LAND - 29
    assert L.phase(game, state) == 1
    state.meta[K.M_LAND_POS] = K.NUM_LAND - 14
    assert L.phase(game, state) == 2


def play_linear(game: DorfromantikGame, seed: int, theta: np.ndarray) -> tuple[list[int], int]:
    policy = L.LinearPolicy(game, theta)
    state = game.new_game(seed)
    rng = np.random.default_rng(0)
    moves = []
    while not game.is_over(state):
        action = policy.act(state, game.legal_mask(state), rng)
        moves.append(action)
        game.step(state, action)
    return moves, int(game.score_vector(state)[K.S_TOTAL])


@pytest.mark.parametrize("seed", [7, 8])
def test_linear_policy_plays_greedy(game, seed):
    agent = DorfromantikGreedyAgent(game, preset="selfplay")
    policy = L.LinearPolicy(game, L.greedy_theta("selfplay"))
    assert policy.name == "learned"
    state = game.new_game(seed)
    rng = np.random.default_rng(0)
    moves = []
    while not game.is_over(state):
        mask = game.legal_mask(state)
        action = policy.act(state, mask, rng)
        actions, values = agent.action_values(state)
        assert mask[action]
        assert values[actions == action][0] >= values.max() - 1e-9  # one of greedy's best
        action = int(actions[first_best(values)])  # greedy, ties to the first
        moves.append(action)
        game.step(state, action)
    assert play_linear(game, seed, L.greedy_theta("selfplay")) == (moves, int(game.score_vector(state)[10]))


def test_label_games(game):
    theta = L.greedy_theta("selfplay")
    a = L.label_games(game, [5, 6], theta, width=2, futures=2, preset="selfplay", seed=11)
    b = L.label_games(game, [5, 6], theta, width=2, futures=2, preset="selfplay", seed=11)
    for key in ("group", "phase", "features", "target", "scores"):
        np.testing.assert_array_equal(a[key], b[key])
    n = a["group"].size
    assert a["features"].shape == (n, L.N_FEATURES) and a["features"].dtype == np.float32
    assert a["group"].dtype == np.int64 and a["phase"].dtype == np.int64
    assert a["target"].dtype == np.float32 and np.isfinite(a["target"]).all()
    groups = a["group"]
    assert groups[0] == 0 and np.all(np.diff(groups) >= 0) and np.all(np.diff(groups) <= 1)
    sizes = np.bincount(groups)
    assert sizes.max() == 2 and sizes.min() >= 1
    assert set(a["phase"].tolist()) == {0, 1, 2}
    # the policy's choice leads each group
    values = a["features"].astype(np.float64) @ theta[0]
    starts = np.flatnonzero(np.r_[True, np.diff(groups) > 0])
    for s, size in zip(starts, sizes, strict=True):
        assert values[s] >= values[s:s + size].max() - 1e-9
    # the games played are the linear policy's
    for g, seed in enumerate([5, 6]):
        moves, score = play_linear(game, seed, theta)
        assert a["scores"][g] == score
    games = np.cumsum(np.r_[0, [len(play_linear(game, s, theta)[0]) for s in (5, 6)]])
    assert games[-1] == sizes.size
    for g in range(2):
        top = a["target"][starts[games[g]:games[g + 1]]]
        assert abs(top.mean() - a["scores"][g]) < 0.5 * a["scores"][g] + 20
    c = L.label_games(game, [5], theta, width=2, futures=2, preset="selfplay", seed=12)
    assert not np.array_equal(c["target"], a["target"][:c["target"].size])


def test_label_games_bad_options(game):
    theta = L.greedy_theta("selfplay")
    with pytest.raises(ConfigError, match="width"):
        L.label_games(game, [0], theta, width=-1, futures=1)
    with pytest.raises(ConfigError, match="futures"):
        L.label_games(game, [0], theta, width=2, futures=0)
    played = L.label_games(game, [5], theta, width=0, futures=0)  # width 0: only play
    assert played["group"].size == 0 and played["scores"].shape == (1,)
    with pytest.raises(ConfigError, match="shape"):
        L.label_games(game, [0], theta[:, :3])


def test_compiled_linear_policy_plays_the_feature_rows_best(game, positions):
    """The search's playout policy (one folded greedy valuation per frontier cell) values every legal
    placement as ``candidate_features @ theta[phase]`` and plays the first best, on a trained model's
    weights and on random ones."""
    rng = np.random.default_rng(7)
    trained = load_model(Path(__file__).parents[3] / "models" / "dorfromantik")["theta"]
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values = np.zeros((K.MAX_FRONTIER, 6))
    rows = K.MAX_FRONTIER * 6
    slots, rots = np.zeros(rows, np.int64), np.zeros(rows, np.int64)
    feats = np.zeros((rows, L.N_FEATURES), np.float32)
    for index, state in enumerate(positions):
        theta = trained if index % 2 else rng.normal(size=trained.shape)
        s = state.copy()
        k = LK.linear_placement(s.board(), game._rot_edges, game._task_type, game._flag, theta, mask, values)
        np.testing.assert_array_equal(s.cells, state.cells)  # the position comes back as it was
        n = LA.candidate_features(s.board(), game._rot_edges, game._task_type, game._flag, mask, slots, rots,
                                  feats)
        expected = feats[:n].astype(np.float64) @ theta[L.phase(game, state)]
        got = values[slots[:n], rots[:n]]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)
        chosen = int(np.flatnonzero((slots[:n] == k // 6) & (rots[:n] == k % 6))[0])
        assert chosen == first_best(got)  # rows are in the kernel's (slot, rotation) order
        assert expected[chosen] >= expected.max() - 1e-3  # float32 rows: ties aside


def test_learned_playout_plays_to_the_end(game):
    """A learned playout places the candidate, plays to the end and returns the final total; the
    same future seed gives the same score."""
    theta = L.greedy_theta()
    state = game.new_game(3)
    work = K.new_arrays()
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values = np.zeros((K.MAX_FRONTIER, 6))
    score = np.zeros(K.SCORE_SIZE, np.int64)
    _, cells, rots, _ = L._rows(game, state)
    totals = [LK.playout_linear(state.board(), work, int(cells[0]), int(rots[0]), np.uint64(seed),
                                game._rot_edges, game._task_type, game._flag, theta, mask, values, score)
              for seed in (11, 11, 12)]
    assert totals[0] == totals[1] and totals[0] > 0
    assert work[-1][K.M_OVER] == 1

"""The Cartographers candidate view: exact greedy terms, features read on the map after the move,
the linear policy, and labelled rows."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy.cartographers import GreedyAgent, preset_weights
from agents.learned import cartographers as L
from agents.learned import cartographers_kernels as CK
from agents.search.flat import paired_playout
from envs.cartographers import kernels as K
from envs.cartographers import reference as R
from envs.cartographers.data import TERRAIN_NAMES
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.rng import new_stream, next_u64


def _positions(game, seeds, explore: float = 0.3):
    """States of greedy games with some random moves mixed in (copies)."""
    agent = GreedyAgent(game, preset="progress")
    for seed in seeds:
        state = game.new_game(seed)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            yield state.copy()
            mask = game.legal_mask(state)
            if rng.random() < explore:
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = agent.act(state, mask, rng)
            game.step(state, action)


@pytest.mark.parametrize("preset", ["default", "progress"])
def test_greedy_weights_give_greedy_values(preset):
    game = make_game("cartographers")
    agent = GreedyAgent(game, preset=preset)
    theta = L.greedy_theta(preset)
    decisions = 0
    for state in _positions(game, range(3)):
        actions, features = L.candidates(game, state)
        greedy_actions, values = agent.action_values(state)
        if actions.size == 0:
            continue
        decisions += 1
        assert np.array_equal(actions, greedy_actions)
        linear = features.astype(np.float64) @ theta[L.phase(game, state)]
        offset = linear - values
        assert np.abs(offset - offset.mean()).max() < 1e-3  # float32 features
        assert values[np.argmax(linear)] >= values.max() - 1e-3
    assert decisions > 60


def test_candidates_are_the_legal_moves():
    game = make_game("cartographers")
    for state in list(_positions(game, [7]))[::5]:
        actions, _ = L.candidates(game, state)
        if actions.size:
            assert set(actions.tolist()) == set(np.flatnonzero(game.legal_mask(state)).tolist())


def _python_features(game, state, action) -> dict[str, float]:
    """Some extra descriptors recomputed in plain Python on the map after ``action``."""
    seat = int(state.meta[K.M_ACTOR])
    move = game.decode_action(action, state)
    grid = R.as_rows(state.grid[seat])
    for r, c in move["cells"]:
        grid[r][c] = TERRAIN_NAMES.index(move["terrain"])
    after = state.copy()
    game.step(after, action)  # scores the season if the move ends it (and may reveal an ambush after)
    empty = R.cells_of(grid, K.EMPTY)
    regions = R.clusters(grid, K.EMPTY)
    sizes = [len(region) for region in regions]
    ruins = R.as_rows(game.tb.ruins)
    season_over = int(after.meta[K.M_SEASON]) != int(state.meta[K.M_SEASON]) or game.is_over(after)
    out = {
        "monster_cells": R.monster_penalty(grid),
        "holes_1": sum(1 for s in sizes if s == 1),
        "holes_2": sum(s for s in sizes if s == 2),
        "holes_3_4": sum(s for s in sizes if 3 <= s <= 4),
        "regions": len(regions),
        "ruins_open": sum(1 for r, c in empty if ruins[r][c]),
        "border_empty": sum(1 for r, c in empty if R.is_edge(r, c)),
        "season_ends": float(season_over),
    }
    seasons, season = game.tb.seasons, int(state.meta[K.M_SEASON])
    empty_around = [sum(1 for rr, cc in R.neighbours(int(m) // 11, int(m) % 11) if grid[rr][cc] == K.EMPTY)
                    for m, done in zip(game.tb.mountains, state.mtn_done[seat], strict=True) if not done]
    out["mountain_1_seasons"] = (4 - season) * empty_around.count(1)
    out["mountain_2_seasons"] = (4 - season) * empty_around.count(2)
    for e, card in enumerate(int(c) for c in state.edicts):
        points = R.score_card(card, grid, ruins)
        now = float(e in seasons[season, 1:])
        later = float(sum(e in seasons[s, 1:] for s in range(season + 1, 4)))
        nxt = float(season < 3 and e in seasons[season + 1, 1:])
        letter = "ABCD"[e]
        out[f"now_{letter}"] = now * points
        out[f"later_{letter}"] = later * points
        out[f"next_{letter}"] = nxt * points
        out[f"card_now_{card}"] = now * points
        out[f"card_later_{card}"] = later * points
    return out


def test_extra_features_match_python_recomputation():
    game = make_game("cartographers")
    names = [name for name, _ in L.FEATURES]
    rng = np.random.default_rng(1)
    checked = 0
    for state in list(_positions(game, [3, 4]))[::3]:
        actions, features = L.candidates(game, state)
        for i in rng.choice(actions.size, size=min(4, actions.size), replace=False) if actions.size else []:
            for name, value in _python_features(game, state, int(actions[i])).items():
                assert features[i, names.index(name)] == pytest.approx(value), name
            checked += 1
    assert checked > 40


def test_greedy_theta_policy_plays_greedys_games():
    """At greedy's weights the linear policy plays one of greedy's best moves at every decision, and
    the compiled loop of label_games plays the same games as the policy move by move."""
    game = make_game("cartographers")
    theta = L.greedy_theta("progress")
    played = L.label_games(game, np.arange(5), theta, 0, 0)["scores"][:, 0]
    policy = L.LinearPolicy(game, theta)
    agent = GreedyAgent(game, preset="progress")
    rng = np.random.default_rng(0)
    for seed, score in zip(range(5), played, strict=True):
        state = game.new_game(seed)
        while not game.is_over(state):
            action = policy.act(state, game.legal_mask(state), rng)
            actions, values = agent.action_values(state)
            assert values[actions == action][0] >= values.max() - 1e-3  # float32 features
            game.step(state, action)
        assert game.returns(state)[0] == score


def test_label_games_rows_are_deterministic():
    game = make_game("cartographers")
    first = L.label_games(game, np.array([11]), L.greedy_theta(), 3, 2, seed=5)
    again = L.label_games(game, np.array([11]), L.greedy_theta(), 3, 2, seed=5)
    for key in first:
        assert np.array_equal(first[key], again[key]), key
    groups = first["group"]
    assert first["features"].shape == (groups.size, L.N_FEATURES)
    assert np.isfinite(first["target"]).all()
    assert (np.bincount(groups) == 3).sum() >= 15  # three candidates valued per decision
    assert set(first["phase"].tolist()) == {0, 1, 2, 3}


def test_horizon_labels_cut_the_playouts_as_the_flat_search_does():
    """``horizon=H``: a decision whose season H seasons on is past winter keeps its whole-game labels;
    the others' targets are the flat search's cut playouts (recomputed for the first decision)."""
    game = make_game("cartographers")
    theta = L.greedy_theta("progress")
    whole = L.label_games(game, np.array([21]), theta, 3, 2, "progress", seed=4)
    cut = L.label_games(game, np.array([21]), theta, 3, 2, "progress", seed=4, horizon=1)
    assert np.array_equal(whole["features"], cut["features"])  # the same games, the same candidates
    winter = whole["phase"] == 3
    assert np.array_equal(whole["target"][winter], cut["target"][winter])
    assert not np.array_equal(whole["target"][whole["phase"] == 0], cut["target"][cut["phase"] == 0])
    state = game.new_game(21)
    st = state.arrays()
    det, work = tuple(a.copy() for a in st), tuple(a.copy() for a in st)
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(L.G.MAX_CANDIDATES, np.int64)
    feats = np.empty((L.G.MAX_CANDIDATES, L.N_FEATURES), np.float32)
    values = np.empty(L.G.MAX_CANDIDATES, np.float64)
    n = CK.candidate_values(st, game.tb, CK.valuation(theta), buf, actions, feats, values)
    top = np.argsort(-values[:n], kind="mergesort")[:3]
    stream = new_stream(4, "learned/label/21")
    out = np.zeros(1)
    sums = np.zeros(3)
    for _ in range(2):
        seed = np.uint64(next_u64(stream))
        for k in range(3):
            paired_playout(st, det, work, game.tb, preset_weights("progress"), actions[top[k]], seed, 1, out)
            sums[k] += out[0]
    assert np.allclose(cut["target"][:3], sums / 2, atol=1e-4)


def test_horizon_out_of_range_fails_in_one_line():
    with pytest.raises(ConfigError, match="horizon must be 0"):
        L.label_games(make_game("cartographers"), np.array([1]), L.greedy_theta(), 2, 1, horizon=5)

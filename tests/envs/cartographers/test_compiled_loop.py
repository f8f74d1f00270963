"""The compiled whole-game loop against the Python engine, determinism and determinize."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from envs.cartographers import kernels as K
from envs.cartographers.game import CartographersGame
from tests.envs.cartographers.test_engine_rules import game
from tests.paths import GOLDEN, REPO_ROOT


def replay(g: CartographersGame, seed: int, actions: list[int]):
    s = g.new_game(seed)
    for a in actions:
        assert g.legal_mask(s)[a], g.why_illegal(s, a)
        g.step(s, a)
    return s


@pytest.mark.parametrize("players", [1, 2, 4])
def test_compiled_loop_and_python_engine_play_the_same_game(players):
    g = game(players=players)
    for seed in range(6):
        compiled = g.new_game(seed)
        actions = g.play_random(compiled, seed + 100)
        assert g.is_over(compiled)
        python = replay(g, seed, actions)
        assert g.is_over(python)
        assert np.array_equal(compiled.grid, python.grid)
        assert np.array_equal(compiled.record, python.record)
        assert [s.total for s in g.scores(compiled)] == [s.total for s in g.scores(python)]


def test_same_seed_same_game_different_seeds_differ():
    g = game()
    a, b, c = g.new_game(7), g.new_game(7), g.new_game(8)
    assert np.array_equal(a.deck, b.deck) and np.array_equal(a.edicts, b.edicts)
    acts_a = g.play_random(a, 1)
    acts_b = g.play_random(b, 1)
    assert acts_a == acts_b and np.array_equal(a.grid, b.grid)
    g.play_random(c, 1)
    assert not np.array_equal(a.grid, c.grid) or not np.array_equal(a.deck, c.deck)
    decks = {tuple(g.new_game(s).deck.tolist()) for s in range(20)}
    assert len(decks) > 15


def test_rollout_returns_from_a_mid_game_state():
    g = game(players=3)
    s = g.new_game(4)
    rng = np.random.default_rng(0)
    for _ in range(10):
        g.step(s, int(rng.choice(np.flatnonzero(g.legal_mask(s)))))
    copy = s.copy()
    returns = g.rollout_returns(s.copy(), seed=9)
    assert returns.shape == (3,) and returns.dtype == np.float64
    actions = g.play_random(copy, 9)
    assert np.array_equal(returns, [x.total for x in g.scores(copy)])
    assert len(actions) > 0 and g.rollout_returns(s.copy(), seed=9).tolist() == returns.tolist()
    with pytest.raises(Exception, match="unknown rollout policy"):
        g.rollout_returns(s.copy(), seed=1, policy="oracle")


def test_random_policy_only_picks_legal_actions_and_covers_them():
    g = game(players=2)
    s = g.new_game(3)
    picks = set()
    stream = np.array([12345], dtype=np.uint64)
    buf = np.empty((4096, 2), dtype=np.int32)
    mask = g.legal_mask(s)
    for _ in range(3000):
        picks.add(K.random_action(s.arrays(), g.tb, stream, buf))
    assert picks <= set(np.flatnonzero(mask).tolist())
    assert len(picks) > 0.8 * mask.sum()


def test_determinize_keeps_the_past_and_resamples_the_future():
    g = game()
    s = g.new_game(11)
    rng = np.random.default_rng(0)
    for _ in range(5):
        g.step(s, int(rng.choice(np.flatnonzero(g.legal_mask(s)))))
    pos, length = int(s.meta[K.M_POS]), int(s.meta[K.M_LEN])
    futures = set()
    for i in range(30):
        d = g.determinize(s, np.random.default_rng(i))
        for name in ("grid", "coins", "mtn_done", "edicts", "meta", "record"):
            assert np.array_equal(getattr(d, name), getattr(s, name)), name
        assert np.array_equal(d.deck[:pos], s.deck[:pos])
        hidden, real = d.deck[pos:length].tolist(), s.deck[pos:length].tolist()
        assert sorted(c for c in hidden if c < 13) == sorted(c for c in real if c < 13)
        assert sum(c >= 13 for c in hidden) == sum(c >= 13 for c in real)
        unseen = sorted([c for c in real if c >= 13] + s.amb[s.meta[K.M_AMB_POS]:].tolist())
        assert sorted([c for c in hidden if c >= 13] + d.amb[d.meta[K.M_AMB_POS]:].tolist()) == unseen
        futures.add(tuple(hidden))
        g.play_random(d, i)  # a determinized copy plays on to the end
        assert g.is_over(d)
    assert len(futures) > 20
    assert s.meta[K.M_PHASE] != K.PHASE_OVER  # the real state is untouched


def test_determinize_does_not_depend_on_the_real_hidden_order():
    g = game()
    s = g.new_game(5)
    g.step(s, int(np.flatnonzero(g.legal_mask(s))[0]))
    pos, length = int(s.meta[K.M_POS]), int(s.meta[K.M_LEN])
    other = s.copy()
    other.deck[pos:length] = other.deck[pos:length][::-1]  # same cards, another real order
    assert not np.array_equal(other.deck, s.deck)
    a = g.determinize(s, np.random.default_rng(3))
    b = g.determinize(other, np.random.default_rng(3))
    assert np.array_equal(a.deck, b.deck) and np.array_equal(a.amb, b.amb)
    assert a.rng[0] == b.rng[0]


def test_greedy_rollout_returns_a_finished_score():
    g = game()
    s = g.new_game(9)
    returns = g.rollout_returns(g.determinize(s, np.random.default_rng(0)), seed=1, policy="greedy")
    random_returns = g.rollout_returns(g.determinize(s, np.random.default_rng(0)), seed=1)
    assert returns.shape == (1,) and returns[0] > random_returns[0]


def test_random_solo_games_kernel():
    g = game()
    out = np.zeros(50, dtype=np.int64)
    K.random_solo_games(g.tb, 50, 1, 14, True, True, out)
    assert -60 < out.mean() < 120 and out.std() > 0


def test_golden_playthroughs_replay_identically():
    files = sorted(GOLDEN.glob("cartographers_solo_seed*.json"))
    assert files, "no golden Cartographers playthrough recorded"
    for path in files:
        rec = json.loads(path.read_text())
        g = CartographersGame(**rec["options"])
        s = replay(g, rec["seed"], rec["actions"])
        assert g.is_over(s)
        assert s.record[0, :, K.R_TOTAL].tolist() == rec["season_totals"]
        assert g.scores(s)[0].total == rec["final"]
        assert s.grid[0].tolist() == rec["final_grid"]
        assert g.edict_names(s) == rec["edicts"]


@pytest.mark.slow
def test_same_game_without_jit():
    code = ("from envs.cartographers.game import CartographersGame\n"
            "g = CartographersGame(players=2)\n"
            "s = g.new_game(5)\n"
            "print(g.play_random(s, 3)[-5:], [x.total for x in g.scores(s)])\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = REPO_ROOT
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    g = CartographersGame(players=2)
    s = g.new_game(5)
    actions = g.play_random(s, 3)
    assert out.stdout.strip() == f"{actions[-5:]} {[x.total for x in g.scores(s)]}"

"""The reranked learned policy of Cartographers: the learned model choosing among greedy's best
candidates only (the flat search's ``rollout_width``), and the search option that plays it."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy import cartographers_kernels as G
from agents.greedy.cartographers import preset_weights
from agents.learned import cartographers_kernels as CK
from agents.search.cartographers_root import determinize_into
from agents.search.flat import unscored_seasons
from envs.cartographers.kernels import M_SEASON, totals
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.agents.learned.search_checks import check_rollout_width
from tests.agents.learned.test_cartographers import _positions

PATTERNS = "models/cartographers_solo_patterns"
SEARCH = ("mcts:engine=compiled,rollout=learned,model=" + PATTERNS
          + ",simulations=16,widening=1/0.5,halving=true,horizon=2,greedy=progress")


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _nth_position(game, seed: int, n: int):
    """The ``n``-th position of a greedy game of ``seed``."""
    return next(s for i, s in enumerate(_positions(game, [seed], explore=0.0)) if i == n)


def _buffers():
    return (np.empty((4096, 2), np.int32), np.empty(G.MAX_CANDIDATES, np.int64),
            np.empty((G.MAX_CANDIDATES, CK.N_FEATURES), np.float32), np.empty(G.MAX_CANDIDATES),
            np.empty(G.MAX_CANDIDATES))


def test_reranked_choice_is_the_model_best_among_greedys_best(game):
    """Width N: the model's best (first on ties) among the N candidates greedy values best (greedy's
    listing order on ties), recomputed from the full candidate values; width 1 is greedy's move and a
    width past the candidates the model's own."""
    model = make_agent(f"learned:{PATTERNS}", game).model
    w = preset_weights("progress")
    buf, actions, feats, values, greedy_values = _buffers()
    checked = 0
    for state in list(_positions(game, range(3)))[::2]:
        arrays = state.arrays()
        n = G.score_candidates(arrays, game.tb, w, buf, actions, greedy_values)
        listed, greedy = actions[:n].copy(), greedy_values[:n].copy()
        m = CK.candidate_values(arrays, game.tb, model, buf, actions, feats, values)
        full = values[:m].copy()
        greedy_move = G.greedy_action(arrays, game.tb, w, buf, actions, values)
        for width in (1, 3, 8, 10_000):
            got = CK.reranked_candidate(arrays, game.tb, model, w, width, *_buffers())
            if m == 0:  # an ambush: greedy draws it
                assert got == greedy_move
                continue
            assert np.array_equal(listed, actions[:m])
            top = np.sort(np.argsort(-greedy, kind="stable")[:width])
            assert got == listed[top[np.argmax(full[top])]]
            if width == 1:
                assert got == greedy_move
            if width == 10_000:
                assert got == CK.best_candidate(arrays, game.tb, model, *_buffers()[:4])
        checked += m > 0
    assert checked > 20


def test_rollout_width_option_errors(game):
    with pytest.raises(ConfigError, match="rollout_width must be a positive integer"):
        make_agent(SEARCH + ",rollout_width=0", game)
    with pytest.raises(ConfigError, match="rollout_width=<N>.*rollout=learned"):
        make_agent(SEARCH.replace("rollout=learned", "rollout=greedy") + ",rollout_width=8", game)
    with pytest.raises(ConfigError, match="rollout_width=<N>"):
        make_agent("mcts:engine=compiled,rollout=learned,model=models/dorfromantik,simulations=8,"
                   "rollout_width=8", make_game("dorfromantik"))
    assert make_agent(f"flat:rollout=learned,model={PATTERNS},rollout_width=8,simulations=8",
                      game).rollout_width == 8


@pytest.mark.slow  # compiles the reranked playout (about a minute on a cold numba cache)
def test_reranked_playouts_play_the_candidate_then_the_reranked_model(game):
    """A playout is the candidate on the future's determinization, then the reranked policy's own
    moves to the cut, plus the seasons left as the greedy playouts value them; the search with it is
    deterministic, legal and differs from the unreranked one."""
    state = _nth_position(game, 9, 3)
    search = make_agent(SEARCH + ",rollout_width=8", game)._turn_search
    model, w = search.model.model, search.model.greedy
    src = state.arrays()
    stop = int(src[6][M_SEASON]) + 2
    cands, _ = search.candidates(state, game.legal_mask(state))
    for k in (0, 5):
        out = np.zeros(1)
        search.model.playout(src, tuple(a.copy() for a in src), tuple(a.copy() for a in src), int(cands[k]),
                             77, stop, out, width=8)
        replay = state.copy()
        determinize_into(state.arrays(), replay.arrays(), np.array([77], dtype=np.uint64))
        game.step(replay, int(cands[k]))
        while not game.is_over(replay) and replay.season < stop:
            game.step(replay, int(CK.reranked_candidate(replay.arrays(), game.tb, model, w, 8, *_buffers())))
        assert out[0] == float(totals(replay.record)[0]) + unscored_seasons(replay.arrays(), game.tb, 0)
    check_rollout_width(game, [_nth_position(game, seed, seed) for seed in (2, 5)], SEARCH, 8, seed=3)


def test_the_learned_agent_takes_a_width(game):
    """``learned:<folder>,width=N`` plays the reranked choice at every exploring decision (greedy's at an
    ambush), and only Cartographers' linear models take it."""
    agent = make_agent(f"learned:{PATTERNS},width=8", game)
    full = make_agent(f"learned:{PATTERNS}", game)
    w = preset_weights("progress")
    differs = 0
    state, rng = game.new_game(11), np.random.default_rng(0)
    while not game.is_over(state):
        mask = game.legal_mask(state)
        action = agent.act(state, mask, rng)
        assert action == CK.reranked_candidate(state.arrays(), game.tb, agent.model, w, 8, *_buffers())
        differs += action != full.act(state, mask, rng)
        game.step(state, action)
    assert 0 < differs
    with pytest.raises(ConfigError, match="width= is an option of Cartographers' linear models only"):
        make_agent("learned:models/cascadia_solo,width=8", make_game("cascadia", players=1))
    with pytest.raises(ConfigError, match="width must be a positive integer"):
        make_agent(f"learned:{PATTERNS},width=0", game)

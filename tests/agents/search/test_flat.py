"""The compiled flat Cartographers search with greedy playouts (engine=compiled,rollout=greedy):
candidates, budgets (even split and halving), determinism, time limit, option errors. Its
no-peeking cases are in test_no_peeking.py."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.search.flat import drawn_cells, screen_candidates
from envs.core.errors import ConfigError
from envs.core.registry import make_game

FLAT = "mcts:engine=compiled,rollout=greedy,simulations=24,widening=1/0.5"


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _midgame(game, seed: int, steps: int = 5):
    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    return state


def test_candidates_are_the_legal_decisions_best_first(game):
    state = _midgame(game, 4)
    search = make_agent(FLAT, game)._turn_search
    mask = game.legal_mask(state)
    cands, values = search.candidates(state, mask)
    assert sorted(cands.tolist()) == sorted(np.flatnonzero(mask).tolist())
    assert np.all(np.diff(values) <= 0)
    greedy = make_agent("greedy", game)
    actions, greedy_values = greedy.action_values(state)
    assert values[0] == greedy_values.max() and greedy_values[list(actions).index(cands[0])] == values[0]


@pytest.mark.parametrize(("spec", "sims", "children", "best_visits"), [
    (FLAT, 20, 5, 4),  # ceil(24 ** 0.5) = 5 candidates x 4 paired futures
    (FLAT.replace("24", "40") + ",halving=true", 39, 7, 13),  # 7 x 1, 4 x 4, 2 x 8 (agents/search/halving.py)
])
def test_budget_statistics_and_determinism(game, spec, sims, children, best_visits):
    state = _midgame(game, 6)
    runs = []
    for _ in range(2):
        agent = make_agent(spec, game)
        action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(2))
        stats = agent.last_stats
        assert (stats["simulations"], stats["children"]) == (sims, children)
        assert stats["best_visits"] == best_visits
        assert stats["best_mean"] >= stats["greedy_mean"]
        runs.append((action, stats["best_mean"]))
    assert runs[0] == runs[1] and game.legal_mask(state)[runs[0][0]]


def test_one_candidate_plays_the_greedy_choice(game):
    state = _midgame(game, 8)
    # ceil(0.5 * 6 ** 0.01) = 1 candidate
    agent = make_agent("mcts:engine=compiled,rollout=greedy,simulations=6,widening=0.5/0.01", game)
    action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    assert action == int(agent._turn_search.candidates(state, game.legal_mask(state))[0][0])
    assert agent.last_stats["children"] == 1 and agent.last_stats["simulations"] == 6


def test_time_limit_counts_whole_futures_only(game):
    state = _midgame(game, 9)
    agent = make_agent("mcts:engine=compiled,rollout=greedy,simulations=100000,time_limit=0.4", game)
    agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))  # compiles
    agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(1))
    stats = agent.last_stats
    assert stats["seconds"] < 2.0 and stats["best_visits"] >= 1
    assert stats["simulations"] >= stats["best_visits"] * stats["children"]


def test_the_progress_preset_ranks_and_plays_with_its_own_weights(game):
    from agents.greedy import cartographers_kernels as G

    state = _midgame(game, 9, steps=8)
    mask = game.legal_mask(state)
    search = make_agent(FLAT + ",greedy=progress", game)._turn_search
    assert np.array_equal(search.weights, G.PROGRESS_WEIGHTS)
    cands, values = search.candidates(state, mask)
    actions, greedy_values = make_agent("greedy:preset=progress", game).action_values(state)
    assert values[0] == greedy_values.max()
    assert np.allclose(np.sort(values), np.sort(greedy_values[mask[actions]]))
    plain = make_agent(FLAT, game)._turn_search.candidates(state, mask)[1]
    assert not np.allclose(np.sort(plain), np.sort(values))  # the edicts of seed 9 have progress terms


def test_options_that_do_not_apply_are_refused(game):
    with pytest.raises(ConfigError, match="unknown preset 'clever'"):
        make_agent(FLAT + ",greedy=clever", game)
    with pytest.raises(ConfigError, match="greedy=<preset>.*flat search"):
        make_agent("mcts:engine=compiled,simulations=50,greedy=progress", game)
    with pytest.raises(ConfigError, match="greedy=<preset>.*flat search"):
        make_agent("mcts:simulations=8,rollout=greedy,greedy=progress", game)
    with pytest.raises(ConfigError, match="flat search"):
        make_agent("mcts:engine=compiled,rollout=greedy,max_depth=3", game)
    with pytest.raises(ConfigError, match="halving must be true or false"):
        make_agent(FLAT + ",halving=yes", game)
    for bad in ("0", "4", "1.5", "soon"):
        with pytest.raises(ConfigError, match="horizon must be 1, 2 or 3 seasons"):
            make_agent(FLAT + f",horizon={bad}", game)
    with pytest.raises(ConfigError, match="horizon=<seasons>.*flat search"):
        make_agent("mcts:engine=compiled,simulations=50,horizon=1", game)


def test_a_cut_playout_is_the_greedy_play_to_the_cut_plus_the_seasons_left_scored_today(game):
    from agents.greedy import cartographers_kernels as G
    from agents.search.cartographers_root import determinize_into
    from agents.search.flat import paired_playout, unscored_seasons
    from envs.cartographers.kernels import M_SEASON, step, totals

    state = _midgame(game, 9, steps=3)
    src = state.arrays()
    action = int(np.flatnonzero(game.legal_mask(state))[0])
    stop = int(src[6][M_SEASON]) + 2
    out = np.zeros(1)
    det, work = tuple(a.copy() for a in src), tuple(a.copy() for a in src)
    paired_playout(src, det, work, game.tb, G.DEFAULT_WEIGHTS, action, np.uint64(77), stop, out)
    # by hand: the same future, the action, greedy play to the cut, then the seasons left
    mine = tuple(a.copy() for a in src)
    determinize_into(src, mine, np.array([77], dtype=np.uint64))
    step(mine, game.tb, action)
    buf, actions, values = np.empty((4096, 2), np.int32), np.empty(G.MAX_CANDIDATES, np.int64), np.empty(
        G.MAX_CANDIDATES)
    while int(mine[6][M_SEASON]) < stop:
        step(mine, game.tb, G.greedy_action(mine, game.tb, G.DEFAULT_WEIGHTS, buf, actions, values))
    rest = unscored_seasons(mine, game.tb, 0)
    assert rest > 0 and out[0] == float(totals(mine[8])[0]) + rest


def _greedy_until_season(game, seed: int, season: int):
    """A solo game played by greedy up to the first decision of ``season``."""
    from envs.cartographers.kernels import M_SEASON

    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    while state.arrays()[6][M_SEASON] < season:
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    return state


@pytest.mark.parametrize("season", [0, 1, 2, 3])
def test_unscored_seasons_scores_every_season_left_on_todays_map(game, season):
    """The truncated playouts' leaf value equals the engine's own season scoring of the current
    map, applied to each season not yet scored."""
    from agents.search.flat import unscored_seasons
    from envs.cartographers.kernels import M_SEASON, R_TOTAL, score_season

    for seed in range(5):
        state = _greedy_until_season(game, seed, season)
        for _ in range(seed):  # a few decisions into the season
            if state.arrays()[6][M_SEASON] == season:
                game.step(state, int(np.flatnonzero(game.legal_mask(state))[-1]))
        st = state.arrays()
        current = int(st[6][M_SEASON])
        scored = tuple(a.copy() for a in st)
        expected = 0
        for s in range(current, 4):
            scored[6][M_SEASON] = s
            score_season(scored, game.tb)
            expected += int(scored[8][0, s, R_TOTAL])
        assert unscored_seasons(st, game.tb, 0) == expected


def test_horizon_cuts_playouts_at_a_season_end_and_plays_full_games_past_winter(game):
    spring = _midgame(game, 7, steps=2)
    full = make_agent(FLAT + ",halving=true", game)
    cut = make_agent(FLAT + ",halving=true,horizon=1", game)
    again = make_agent(FLAT + ",halving=true,horizon=1", game)
    mask = game.legal_mask(spring)
    choices = [a.act(spring.copy(), mask, np.random.default_rng(5)) for a in (full, cut, again)]
    assert choices[1] == choices[2] and mask[choices[1]]  # deterministic for a seed
    # a spring playout cut at the end of spring is valued on a map with far fewer cells drawn
    assert cut.last_stats["best_mean"] < full.last_stats["best_mean"]
    winter = _greedy_until_season(game, 7, 3)
    for horizon in (1, 3):  # winter + 1 season is past the game's end: whole playouts
        a = make_agent(FLAT + f",halving=true,horizon={horizon}", game)
        a.act(winter.copy(), game.legal_mask(winter), np.random.default_rng(5))
        full.act(winter.copy(), game.legal_mask(winter), np.random.default_rng(5))
        assert a.last_stats == {**full.last_stats, "seconds": a.last_stats["seconds"],
                                "sims_per_s": a.last_stats["sims_per_s"]}


def test_the_last_decision_is_valued_exactly_over_every_legal_action(game):
    state = game.new_game(11)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(0)
    while True:  # greedy play up to the decision after which the game is over
        action = greedy.act(state, game.legal_mask(state), rng)
        after = state.copy()
        game.step(after, action)
        if game.is_over(after):
            break
        state = after
    mask = game.legal_mask(state)
    finals = {}
    for a in np.flatnonzero(mask):
        s = state.copy()
        game.step(s, int(a))
        finals[int(a)] = float(game.returns(s)[0])
    agent = make_agent("mcts:engine=compiled,rollout=greedy,simulations=8,widening=1/0.5", game)
    chosen = agent.act(state.copy(), mask, np.random.default_rng(1))
    stats = agent.last_stats
    assert stats["exact"] and stats["simulations"] == 0 and stats["children"] == len(finals)
    assert finals[chosen] == max(finals.values()) == stats["best_mean"]
    earlier = make_agent("mcts:engine=compiled,rollout=greedy,simulations=8,widening=1/0.5", game)
    earlier.act(_midgame(game, 11), game.legal_mask(_midgame(game, 11)), np.random.default_rng(1))
    assert "exact" not in earlier.last_stats


LEARNED = FLAT + ",model=models/cartographers_solo"


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_a_learned_model_orders_the_candidates(game, seed):
    """With ``model=`` the candidates are the same legal decisions, sorted by the learned model's
    value: candidate 0 is the learned policy's move."""
    state = _midgame(game, seed, steps=seed)
    mask = game.legal_mask(state)
    search = make_agent(LEARNED, game)._turn_search
    plain, _ = make_agent(FLAT, game)._turn_search.candidates(state, mask)
    cands, _ = search.candidates(state, mask)
    assert sorted(cands.tolist()) == sorted(plain.tolist())
    policy = make_agent("learned:models/cartographers_solo", game)
    valued, values = policy.candidate_values(state)
    value_of = dict(zip(valued.tolist(), values.tolist(), strict=True))
    ordered = [value_of[int(a)] for a in cands]
    assert all(a >= b for a, b in zip(ordered, ordered[1:], strict=False))
    assert cands[0] == policy.act(state, mask, np.random.default_rng(0))


def test_a_learned_model_changes_the_search_and_stays_deterministic(game):
    states = [_midgame(game, s, steps=s) for s in range(1, 7)]
    runs = [[make_agent(spec, game).act(st, game.legal_mask(st), np.random.default_rng(3)) for st in states]
            for spec in (LEARNED, LEARNED, FLAT)]
    assert runs[0] == runs[1]
    assert all(game.legal_mask(st)[a] for st, a in zip(states, runs[0], strict=True))
    assert runs[0] != runs[2]


def test_learned_model_option_errors(game):
    with pytest.raises(ConfigError, match="is a dorfromantik model"):
        make_agent(FLAT + ",model=models/dorfromantik", game)
    with pytest.raises(ConfigError, match="no model at"):
        make_agent(FLAT + ",model=models/nowhere", game)
    with pytest.raises(ConfigError, match="model=<folder>.*Cartographers flat"):
        make_agent("mcts:engine=compiled,simulations=8,model=models/cartographers_solo", game)


@pytest.mark.slow  # compiles the model playout (about a minute on a cold numba cache)
@pytest.mark.parametrize("horizon", [None, 2])
def test_learned_playouts_play_the_candidate_then_the_model(game, horizon):
    """``rollout=learned``: a candidate's playout is the candidate on the future's determinization,
    then the learned model's own moves (replayed here by its agent) to the end or the cut, plus the
    seasons left valued as the greedy playouts value them."""
    from agents.search.cartographers_root import determinize_into
    from agents.search.flat import unscored_seasons
    from envs.cartographers.kernels import M_SEASON, totals

    state = _midgame(game, 9, steps=3)
    spec = LEARNED + ",rollout=learned" + ("" if horizon is None else f",horizon={horizon}")
    search = make_agent(spec, game)._turn_search
    src = state.arrays()
    stop = 4 if horizon is None else int(src[6][M_SEASON]) + horizon
    cands, _ = search.candidates(state, game.legal_mask(state))
    policy, rng = make_agent("learned:models/cartographers_solo", game), np.random.default_rng(0)
    for k in (0, 5):
        out = np.zeros(1)
        search.model.playout(src, tuple(a.copy() for a in src), tuple(a.copy() for a in src), int(cands[k]),
                             77, stop, out)
        replay = state.copy()
        determinize_into(state.arrays(), replay.arrays(), np.array([77], dtype=np.uint64))
        game.step(replay, int(cands[k]))
        while not game.is_over(replay) and replay.season < stop:
            game.step(replay, policy.act(replay, game.legal_mask(replay), rng))
        assert out[0] == float(totals(replay.record)[0]) + unscored_seasons(replay.arrays(), game.tb, 0)
    # the search plays them: the same candidates and futures as greedy playouts, other values
    states = [_midgame(game, s, steps=s) for s in (2, 5)]
    greedy_spec = spec.replace("rollout=learned", "rollout=greedy")
    runs, means = [], []
    for one in (spec, spec, greedy_spec):
        agents = [make_agent(one, game) for _ in states]
        runs.append([a.act(st, game.legal_mask(st), np.random.default_rng(3)) for a, st in zip(agents, states,
                                                                                                 strict=True)])
        means.append([a.last_stats["best_mean"] for a in agents])
    assert runs[0] == runs[1] and means[0] == means[1]
    assert all(game.legal_mask(st)[a] for st, a in zip(states, runs[0], strict=True))
    assert means[0] != means[2]


def test_learned_playouts_need_a_model(game):
    with pytest.raises(ConfigError, match="rollout=learned plays the playouts with a learned model"):
        make_agent("mcts:engine=compiled,rollout=learned,simulations=8", game)


def test_screen_candidates_keeps_the_first_half_and_the_best_screened_rest():
    cands = np.arange(100, 110)
    value = np.array([0.0, 0, 5, 1, 9, 2, 9, 3, 0, 7])  # candidate k's value on every future
    calls = []

    def play(k, seed):
        calls.append((k, seed))
        return np.array([value[k]])

    stream = np.array([11], dtype=np.uint64)
    chosen, played = screen_candidates(cands, 5, 3, 0, stream, play)
    # keep = 2; the other 3 of the width: 4 and 6 (9, listing order on the tie), then 9 (7); the rest after
    assert chosen.tolist() == [100, 101, 104, 106, 109, 102, 107, 105, 103, 108]
    assert played == len(calls) == 3 * 8
    assert {k for k, _ in calls} == set(range(2, 10))
    assert len({s for _, s in calls}) == 3  # paired: every screened candidate sees the same 3 futures


def test_screen_widens_only_the_opening_decisions(game):
    screened = FLAT + ",halving=true,screen=2/0"
    first = game.new_game(3)
    runs = []
    for spec in (screened, screened, FLAT + ",halving=true"):
        agent = make_agent(spec, game)
        action = agent.act(first.copy(), game.legal_mask(first), np.random.default_rng(5))
        runs.append((action, sorted(agent.last_stats["visits"]), agent.last_stats["simulations"]))
    assert runs[0] == runs[1]  # deterministic
    assert game.legal_mask(first)[runs[0][0]]
    width = len(runs[2][1])
    cands, _ = make_agent(FLAT, game)._turn_search.candidates(first, game.legal_mask(first))
    assert len(runs[0][1]) == width
    assert set(runs[0][1]) != set(cands[:width].tolist())  # the screen chose others
    assert set(cands[:width // 2].tolist()) <= set(runs[0][1])  # the prior's first half stays
    assert runs[0][2] == runs[2][2] + 2 * (cands.size - width // 2)  # screen playouts on top of the budget
    later = _midgame(game, 3, steps=2)
    assert drawn_cells(later.arrays()) > 0
    plain, wide = (make_agent(spec, game) for spec in (FLAT + ",halving=true", screened))
    assert (plain.act(later.copy(), game.legal_mask(later), np.random.default_rng(5))
            == wide.act(later.copy(), game.legal_mask(later), np.random.default_rng(5)))
    timing = ("seconds", "sims_per_s")
    assert ({k: v for k, v in plain.last_stats.items() if k not in timing}
            == {k: v for k, v in wide.last_stats.items() if k not in timing})  # plain past the opening


def test_screen_option_errors(game):
    for bad in ("0", "x", "2/1/3", "-1", "2/-1"):
        with pytest.raises(ConfigError, match="screen must be S or S/C"):
            make_agent(FLAT + f",screen={bad}", game)
    with pytest.raises(ConfigError, match="screen=S/C.*cartographers flat"):
        make_agent("mcts:engine=compiled,simulations=50,screen=2", game)
    with pytest.raises(ConfigError, match="screen=S/C plays a fixed number.*not time_limit"):
        make_agent(FLAT + ",time_limit=0.5,screen=2", game)


def test_model_weight_blends_the_learned_values_into_the_choice(game):
    """``model_weight`` adds the model's candidate values to the playout means: a tiny weight plays as
    the plain ``model=`` order does (values tie-break nothing there), a huge one plays the model's own
    choice; and the option needs ``model=``."""
    spec = FLAT + ",halving=true,greedy=progress,model=models/cartographers_solo_patterns"
    learned = make_agent("learned:models/cartographers_solo_patterns", game)
    state = game.new_game(4)
    for _ in range(3):
        game.step(state, learned.act(state, game.legal_mask(state), np.random.default_rng(0)))
    choices = {}
    for weight in (None, 1e-9, 1e6):
        agent = make_agent(spec + ("" if weight is None else f",model_weight={weight}"), game)
        choices[weight] = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(5))
    own = learned.act(state.copy(), game.legal_mask(state), np.random.default_rng(0))
    assert choices[None] != own  # here the playouts alone choose another placement than the model
    assert choices[1e-9] == choices[None]
    assert choices[1e6] == own
    for bad in ("-1", "x"):
        with pytest.raises(ConfigError, match="model_weight"):
            make_agent(spec + f",model_weight={bad}", game)
    with pytest.raises(ConfigError, match="model_weight=.*with model=<folder>"):
        make_agent(FLAT + ",halving=true,model_weight=1", game)

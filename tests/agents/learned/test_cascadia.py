"""The Cascadia candidate view: greedy values reproduced by greedy_theta, post-turn descriptors
against a plain-Python recomputation, LinearPolicy plays greedy's planned turns, labelling, and the
compiled model playout plays LinearPolicy's games."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy.cascadia import CascadiaGreedyAgent, play_greedy, preset_weights
from agents.learned import cascadia as L
from agents.learned import cascadia_kernels as CK
from agents.learned.cascadia_playouts import paired_model_playouts, play_model
from agents.learned.model import load_model
from agents.search.turn import apply_turn, candidate_turns, determinize_into
from envs.cascadia import kernels as K
from envs.core.errors import ConfigError
from envs.core.registry import make_game


def _metric(game) -> int:
    return K.CAT_BASE if game.num_players() > 1 else K.CAT_TOTAL


def _turn_starts(players: int, seeds, every: int = 1):
    """(game, state copy) at every ``every``-th turn start of greedy selfplay games."""
    game = make_game("cascadia", players=players)
    out = []
    for seed in seeds:
        state = game.new_game(seed)
        agent = CascadiaGreedyAgent(game, preset="selfplay")
        rng = np.random.default_rng(0)
        n = 0
        while not game.is_over(state):
            if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET:
                if n % every == 0:
                    out.append(state.copy())
                n += 1
            game.step(state, agent.act(state, game.legal_mask(state), rng))
    return game, out


def _normalised(state, turn) -> tuple[int, int, int]:
    """A turn search row as the candidate view lists it (no token action for a pair without one)."""
    a, tile, token = (int(x) for x in turn)
    j = (a - K.A_FREE) % 4 if a >= K.A_FREE else a
    return (a, tile, token if state.market[1, j] >= 0 else -1)


def test_contract_shapes_and_phases():
    assert len(L.FEATURES) == L.N_FEATURES == CK.NUM_FEATURES and 20 <= L.N_FEATURES <= 40
    assert len({name for name, _ in L.FEATURES}) == L.N_FEATURES
    for preset in ("default", "selfplay", "endgame"):
        theta = L.greedy_theta(preset)
        assert theta.shape == (L.N_PHASES, L.N_FEATURES) and not theta[:, 11:].any()
    end = L.greedy_theta("endgame")
    assert np.array_equal(end[0], L.greedy_theta("selfplay")[0])
    exact = np.zeros(L.N_FEATURES)
    exact[[CK.F_CORRIDOR, CK.F_WILDLIFE, CK.F_NATURE_EARNED]] = 1.0
    exact[CK.F_NATURE_SPENT] = -1.0
    assert np.allclose(end[2], exact)  # the last turn: the exact score change
    game, states = _turn_starts(4, [0])
    phases = [L.phase(game, s) for s in states]
    assert phases[:40] == [0] * 40 and phases[40:76] == [1] * 36 and phases[76:] == [2] * 4
    ids, feats = L.candidates(game, states[5])
    turns, feats2 = L.candidate_turns_and_features(game, states[5])
    assert np.array_equal(ids, np.arange(len(turns))) and np.array_equal(feats, feats2)
    assert feats.dtype == np.float32 and turns.dtype == np.int64 and turns.shape[1] == 3
    s = states[5].copy()
    game.step(s, int(turns[0, 0]))  # the middle of a turn: no candidates (a turn is one candidate)
    ids, feats = L.candidates(game, s)
    assert ids.size == 0 and feats.shape == (0, L.N_FEATURES)
    with pytest.raises(ValueError):
        L.candidate_turns_and_features(game, s)


@pytest.mark.parametrize("players,seeds", [
    (1, [0, 1, 2, 3]), (4, [0, 1, 2]),
    pytest.param(1, range(10, 60), marks=pytest.mark.slow),  # thousands of positions
    pytest.param(4, range(10, 25), marks=pytest.mark.slow),
])
def test_greedy_theta_gives_the_greedy_turn_values(players, seeds):
    game, states = _turn_starts(players, seeds)
    assert len(states) >= 60
    for state in states:
        turns, feats = L.candidate_turns_and_features(game, state)
        index = {tuple(t): k for k, t in enumerate(turns.tolist())}
        assert len(index) == len(turns)  # no turn listed twice
        ph = L.phase(game, state)
        for preset in ("selfplay", "endgame", "default"):
            cands, values = candidate_turns(game, state, preset_weights(preset))
            linear = feats.astype(np.float64) @ L.greedy_theta(preset)[ph]
            rows = [index[_normalised(state, t)] for t in cands]  # every greedy candidate is listed
            diff = linear[rows] - values
            assert np.ptp(diff) < 1e-5 and abs(diff[0]) < 1e-5
            if preset != "default":  # open_spot 0: no listed turn beats greedy's plan
                best = int(np.argmax(linear))
                assert abs(linear[best] - values[0]) < 1e-5
        # the first listed turn is greedy selfplay's turn
        cands, _ = candidate_turns(game, state, preset_weights("selfplay"))
        assert tuple(turns[0]) == _normalised(state, cands[0])


def _largest_corridors(game, state, p: int) -> np.ndarray:
    """Largest corridor per habitat of seat p by a plain breadth-first search."""
    edges, nbr = state.edges[p], game.nbr
    best = np.zeros(5, dtype=np.int64)
    for h in range(5):
        seen: set[int] = set()
        for c in np.flatnonzero(state.tiles[p] >= 0):
            if c in seen or h not in edges[c]:
                continue
            seen.add(c)
            todo, size = [c], 0
            while todo:
                x = todo.pop()
                size += 1
                for d in range(6):
                    y = nbr[x, d]
                    if edges[x, d] == h and y >= 0 and y not in seen and edges[y, (d + 3) % 6] == h:
                        seen.add(y)
                        todo.append(y)
            best[h] = max(best[h], size)
    return best


def _descriptors(game, before, after, p: int) -> np.ndarray:
    """The extra columns (and the realised greedy score terms) recomputed in Python."""
    row = np.zeros(L.N_FEATURES)
    players = game.num_players()
    tiles, tokens = after.tiles[p], after.tokens[p]
    placed = np.flatnonzero(tiles >= 0)
    row[CK.F_TURNS_LEFT] = game.data.tiles_per_player - after.pinfo[p, K.P_TURNS]
    table = game.score_table(after)
    corr = _largest_corridors(game, after, p)
    for x in range(5):
        row[CK.F_TOKENS + x] = int(np.sum(tokens == x))
        row[CK.F_WILD_SCORE + x] = table[p, K.CAT_WILDLIFE + x]
        row[CK.F_CORRIDOR_SIZE + x] = corr[x]
        row[CK.F_EMPTY_SPOTS + x] = sum(1 for c in placed if tokens[c] < 0
                                        and (game.kind_info[tiles[c], 0] >> x) & 1)
    if players > 1:
        others = np.max([_largest_corridors(game, after, q) for q in range(players) if q != p], axis=0)
        row[CK.F_MAJORITY_GAP:CK.F_MAJORITY_GAP + 5] = corr - others
    row[CK.F_NATURE_HELD] = after.pinfo[p, K.P_NATURE]
    row[CK.F_TILES] = len(placed)
    return row


@pytest.mark.parametrize("players,seeds", [(1, [5]), (4, [5])])
def test_descriptors_match_a_python_recomputation(players, seeds):
    game, states = _turn_starts(players, seeds, every=4)
    extra = np.r_[CK.F_TURNS_LEFT:CK.NUM_FEATURES]
    checked = 0
    for state in states:
        turns, feats = L.candidate_turns_and_features(game, state)
        p = int(state.ctl[K.C_CUR])
        table0 = game.score_table(state)
        corr0 = _largest_corridors(game, state, p)
        for k in range(0, len(turns), 7):
            after = state.copy()
            for a in turns[k]:
                if a >= 0:
                    game.step(after, int(a))
            want = _descriptors(game, state, after, p)
            assert np.array_equal(feats[k, extra], want[extra]), (k, feats[k, extra], want[extra])
            # the greedy score terms are the realised score changes
            table1 = game.score_table(after)
            wild = slice(K.CAT_WILDLIFE, K.CAT_WILDLIFE + 5)
            assert feats[k, CK.F_WILDLIFE] == table1[p, wild].sum() - table0[p, wild].sum()
            assert feats[k, CK.F_CORRIDOR] == (_largest_corridors(game, after, p) - corr0).sum()
            free = int(turns[k, 0] >= K.A_FREE)
            assert feats[k, CK.F_NATURE_SPENT] == free
            earned = after.pinfo[p, K.P_NATURE] - state.pinfo[p, K.P_NATURE] + free
            assert feats[k, CK.F_NATURE_EARNED] == earned
            checked += 1
    assert checked >= 100


class _PlannedGreedy:
    """Greedy selfplay playing its planned whole turns (the turn search's first candidate)."""

    def __init__(self, game):
        self.game, self.plan = game, []

    def act(self, state, legal_mask, rng):
        if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET:
            cands, _ = candidate_turns(self.game, state, preset_weights("selfplay"))
            self.plan = [int(a) for a in _normalised(state, cands[0]) if a >= 0]
        return self.plan.pop(0)


def _play(game, agent, seed: int) -> np.ndarray:
    state = game.new_game(seed)
    rng = np.random.default_rng(seed)
    while not game.is_over(state):
        mask = game.legal_mask(state)
        action = agent.act(state, mask, rng)
        assert mask[action]
        game.step(state, action)
    return game.score_table(state)[:, _metric(game)]


@pytest.mark.parametrize("players", [1, 4])
def test_linear_policy_plays_greedys_turns(players):
    game = make_game("cascadia", players=players)
    gaps = []
    for seed in range(3):
        policy = L.LinearPolicy(game, L.greedy_theta("selfplay"), redraw="never")
        assert policy.name == "learned"
        mine = _play(game, policy, seed)
        assert policy.fallbacks == 0
        assert np.array_equal(mine, _play(game, _PlannedGreedy(game), seed))
        gaps.append(mine.mean() - _play(game, CascadiaGreedyAgent(game, preset="selfplay"), seed).mean())
    assert abs(np.mean(gaps)) < 5.0  # greedy replans the token after the tile: close, not equal


def test_label_games_tiny_settings():
    game = make_game("cascadia", players=4)
    theta = L.greedy_theta("selfplay")
    out = L.label_games(game, [3], theta, width=2, futures=2, preset="selfplay", seed=7)
    n = len(out["target"])
    assert n == 80 * 2 and out["features"].shape == (n, L.N_FEATURES) and out["features"].dtype == np.float32
    assert out["group"].dtype == np.int64 and out["phase"].dtype == np.int64
    assert np.array_equal(np.unique(out["group"]), np.arange(80))
    assert set(out["phase"].tolist()) == {0, 1, 2} and np.isfinite(out["target"]).all()
    assert out["scores"].shape == (1, 4)
    assert np.array_equal(out["scores"][0], _play(game, L.LinearPolicy(game, theta, redraw="never"), 3))
    again = L.label_games(game, [3], theta, width=2, futures=2, preset="selfplay", seed=7)
    for key in out:
        assert np.array_equal(out[key], again[key])
    other = L.label_games(game, [3], theta, width=2, futures=2, preset="selfplay", seed=8)
    assert not np.array_equal(out["target"], other["target"])
    assert np.array_equal(out["features"], other["features"])


def test_label_games_solo():
    game = make_game("cascadia", players=1)
    out = L.label_games(game, [0, 1], L.greedy_theta("endgame"), width=3, futures=2, preset="endgame", seed=0)
    assert len(out["target"]) == 2 * 20 * 3 and out["scores"].shape == (2, 1)
    assert np.array_equal(np.unique(out["group"]), np.arange(40))
    last = out["phase"] == 2  # the last turn ends the game: every future is its exact total
    assert last.sum() == 2 * 3 and np.isfinite(out["target"]).all()
    played = out["target"][np.flatnonzero(last)[::3]]  # the played turn is each group's first row
    assert np.array_equal(played, out["scores"][:, 0])


@pytest.mark.slow  # compiles the model playout (minutes on a cold numba cache)
@pytest.mark.parametrize(("players", "folder", "seeds"),
                         [(1, "cascadia_solo", (0, 1, 2)), (4, "cascadia_4p", (3, 4))])
def test_the_compiled_model_playout_plays_the_linear_policys_game(players, folder, seeds):
    """``play_model`` finishes a game exactly as :class:`LinearPolicy` plays it from Python."""
    game = make_game("cascadia", players=players)
    theta = load_model(f"models/{folder}")["theta"]
    for seed in seeds:
        policy = L.LinearPolicy(game, theta, redraw="never")
        python_game, rng = game.new_game(seed), np.random.default_rng(0)
        while not game.is_over(python_game):
            game.step(python_game, policy.act(python_game, game.legal_mask(python_game), rng))
        compiled = game.new_game(seed)
        play_model(compiled.board_args(), game.tb, L.LinearPolicy(game, theta).compiled())
        assert game.is_over(compiled)
        assert np.array_equal(game.score_table(compiled), game.score_table(python_game))
        assert np.array_equal(compiled.tiles, python_game.tiles) and np.array_equal(compiled.tokens,
                                                                                    python_game.tokens)


@pytest.mark.slow  # compiles the model playout (minutes on a cold numba cache)
def test_model_turns_are_the_models_next_turns_then_greedy():
    """``label.model_turns``: the model plays exactly that many turns (as :class:`LinearPolicy` would),
    then greedy finishes each paired playout."""
    game = make_game("cascadia", players=4)
    theta = load_model("models/cascadia_4p")["theta"]
    greedy = preset_weights("endgame")
    model = L.LinearPolicy(game, theta).compiled(greedy)
    state = game.new_game(8)
    partial = state.copy()
    play_model(partial.board_args(), game.tb, model, 3)
    policy = L.LinearPolicy(game, theta, redraw="never")
    python_game, rng, started = state.copy(), np.random.default_rng(0), 0
    while started < 3 or int(python_game.ctl[K.C_PHASE]) != K.PHASE_MARKET:
        started += int(python_game.ctl[K.C_PHASE]) == K.PHASE_MARKET
        game.step(python_game, policy.act(python_game, game.legal_mask(python_game), rng))
    for name in ("tiles", "tokens", "market", "ctl"):
        assert np.array_equal(getattr(partial, name), getattr(python_game, name)), name
    cands = L.candidate_turns_and_features(game, state)[0][:2]
    src, sums = state.board_args(), np.zeros((2, 4))
    paired_model_playouts(src, src.copy(), src.copy(), cands, 2, 1, np.array([77], np.uint64), game.tb, model,
                          sums, K.CAT_BASE, 3)
    for k in range(2):
        replay = state.copy()
        board = replay.board_args()
        determinize_into(state.board_args(), board, np.array([77], np.uint64))
        apply_turn(board, cands[k], game.nbr, game.kind_edges, game.kind_info)
        play_model(board, game.tb, model, 3)
        play_greedy(board, game.tb, greedy, 0.0, np.zeros(1, np.uint64))
        assert np.array_equal(sums[k], game.score_table(replay)[:, K.CAT_BASE])
    labels = L.label_games(game, [8], theta, width=2, futures=1, preset="endgame", seed=3, model_turns=3)
    plain = L.label_games(game, [8], theta, width=2, futures=1, preset="endgame", seed=3)
    assert np.array_equal(labels["scores"], plain["scores"])  # the same games, labelled otherwise
    assert np.array_equal(labels["features"], plain["features"])
    assert not np.array_equal(labels["target"], plain["target"])


def _three_of_a_kind_offers(players: int, seeds) -> tuple:
    """(game, market-phase states where the free three-of-a-kind redraw is legal) of greedy games."""
    game, starts = _turn_starts(players, seeds)
    return game, [s for s in starts if game.legal_mask(s)[K.A_THREE]]


def test_redraw_choices_and_bad_values():
    game, offers = _three_of_a_kind_offers(4, range(3))
    assert len(offers) >= 5
    theta = load_model("models/cascadia_4p")["theta"]
    never, always = L.LinearPolicy(game, theta, redraw="never"), L.LinearPolicy(game, theta, redraw="always")
    rng = np.random.default_rng(0)
    for state in offers:
        mask = game.legal_mask(state)
        assert never.act(state, mask, rng) != K.A_THREE
        assert always.act(state, mask, rng) == K.A_THREE
    assert always.redraws_offered == always.redraws_taken == len(offers) and never.redraws_offered == 0
    with pytest.raises(ConfigError, match="redraw must be one of"):
        L.LinearPolicy(game, theta, redraw="sometimes")
    with pytest.raises(ConfigError, match="Cascadia's linear models only"):
        make_agent("learned:models/cartographers_solo,redraw=never", make_game("cartographers"))
    agent = make_agent("learned:models/cascadia_4p,redraw=always", game)
    assert agent.redraw == "always" and make_agent("learned:models/cascadia_4p", game).redraw == "model"


def test_the_model_redraw_samples_the_bag_not_the_real_draw():
    """``redraw=model`` decides the same whatever the game's chance stream holds, the same every time."""
    game, offers = _three_of_a_kind_offers(4, range(3))
    policy = L.LinearPolicy(game, load_model("models/cascadia_4p")["theta"])
    for state in offers:
        value = policy.redraw_value(state)
        other = state.copy()
        other.rng[:] = np.uint64(12345)
        assert policy.redraw_value(other) == value and policy.redraw_value(state) == value
        assert np.isfinite(value)
    taken = [policy.wants_redraw(s, game.legal_mask(s)) for s in offers]
    assert policy.redraws_offered == len(offers) and policy.redraws_taken == sum(taken)


def test_the_model_redraw_compares_the_expected_best_turn_with_the_best_turn_now():
    """A model that values only tokens of the animal shown three times never redraws them; one that
    values only an animal the market lacks (and the seat has room for) expects no loss from a redraw
    and takes it in most such offers (greedy's token plan may still return a drawn token)."""
    game, offers = _three_of_a_kind_offers(1, range(12))
    lacking_offers, lacking_taken = 0, 0
    for state in offers:
        shown = state.market[1]
        three = int(np.bincount(shown[shown >= 0], minlength=5).argmax())
        likes_three = np.zeros((L.N_PHASES, L.N_FEATURES))
        likes_three[:, CK.F_TOKENS + three] = 1.0
        assert not L.LinearPolicy(game, likes_three).wants_redraw(state, game.legal_mask(state))
        turns, feats = L.candidate_turns_and_features(game, state)
        for lacking in range(5):
            room = feats[:, CK.F_EMPTY_SPOTS + lacking].min() > 0  # an empty hex takes it after any turn
            if lacking in shown or state.bag[lacking] < 3 or not room:
                continue
            likes_lacking = np.zeros((L.N_PHASES, L.N_FEATURES))
            likes_lacking[:, CK.F_TOKENS + lacking] = 1.0
            policy = L.LinearPolicy(game, likes_lacking)
            assert policy.redraw_value(state) >= policy.best_turn_value(state)
            lacking_offers += 1
            lacking_taken += policy.wants_redraw(state, game.legal_mask(state))
    assert len(offers) >= 3 and lacking_offers >= 3 and lacking_taken >= 0.75 * lacking_offers

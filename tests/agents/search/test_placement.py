"""The compiled Dorfromantik search: determinization, candidates, hopeless tasks, budgets,
determinism, time limits and option errors."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy.dorfromantik import preset_weights
from agents.search import placement as M
from agents.search import placement_kernels as DK
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.dorfromantik import kernels as K
from tests.agents.peeking import twin_states

SPEC = "mcts:engine=compiled,rollout=greedy,simulations=24,widening=1/0.5"


@pytest.fixture(scope="module")
def game():
    return make_game("dorfromantik")


def _midgame(game, seed: int, placements: int):
    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    while int(state.meta[K.M_PLACED]) < placements and not game.is_over(state):
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    return state


def test_determinization_ignores_the_real_order_and_keeps_what_is_known(game):
    state = _midgame(game, 4, 12)
    _, twin = twin_states(game, state, np.random.default_rng(1))
    m = state.meta
    land = np.r_[0:int(m[K.M_UNSEEN]), int(m[K.M_LAND_POS]):K.NUM_LAND]
    assert not np.array_equal(state.deck[land], twin.deck[land])
    outs = []
    for s in (state, twin):
        out = np.zeros_like(s.deck)
        DK.determinize_deck(s.deck, s.meta, out, np.array([9], np.uint64))
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])
    det = outs[0]
    seen = np.ones(K.DECK_SIZE, bool)
    seen[land] = False
    seen[K.DECK_TASK + int(m[K.M_TASK_POS]):K.DECK_MARKER] = False
    for t in range(5):
        seen[K.DECK_MARKER + 5 * t + int(m[K.M_MARKER_POS + t]):K.DECK_MARKER + 5 * t + 5] = False
    assert np.array_equal(det[seen], state.deck[seen])
    assert sorted(det[land]) == sorted(state.deck[land]) and not np.array_equal(det[land], state.deck[land])
    tasks = slice(K.DECK_TASK + int(m[K.M_TASK_POS]), K.DECK_MARKER)
    assert sorted(det[tasks]) == sorted(state.deck[tasks])


@pytest.mark.parametrize("seed", [0, 5])
def test_candidates_are_the_legal_placements_greedy_first_without_duplicates(game, seed):
    state = _midgame(game, seed, 15)
    mask = game.legal_mask(state)
    actions, pairs, values = M.candidate_placements(game, state, mask)
    assert mask[actions].all()
    greedy = make_agent("greedy", game)
    g_actions, g_values = greedy.action_values(state)
    assert values[0] == pytest.approx(g_values.max())
    tile = int(state.meta[K.M_DRAWN])
    keys = {(int(c), game._rot_edges[tile, r].tobytes()) for c, r in pairs}
    assert len(keys) == actions.size  # no two candidates are the same placement
    distinct = {(int(c), game._rot_edges[tile, r].tobytes()) for c, r in
                (_cell_rot(game, state, a) for a in g_actions)}
    assert keys == distinct  # every distinct legal placement is a candidate
    first_cells = [int(c) for c in pairs[:, 0]]
    n_cells = len(set(first_cells))
    assert len(set(first_cells[:n_cells])) >= n_cells - 3  # every position early (hopeless-task picks aside)


def _cell_rot(game, state, action):
    q, r, rot = game.action_to_placement(state, action)
    return (r + K.GRID_RADIUS) * K.GRID_SIDE + q + K.GRID_RADIUS, rot


def test_failed_tasks_predicts_which_open_tasks_a_placement_fails(game):
    checked = failing = 0
    for seed in range(3):
        state = _midgame(game, seed, 20)
        mask = game.legal_mask(state)
        out2 = np.zeros(2, np.int64)
        before = [t["status"] for t in game.tasks(state)]
        for action in np.flatnonzero(mask):
            cell, rot = _cell_rot(game, state, action)
            bits = DK.failed_tasks(state.cells, state.uf, state.tasks, state.meta, game._rot_edges, cell, rot,
                                   out2)
            after = state.copy()
            game.step(after, int(action))
            now = [t["status"] for t in game.tasks(after)]
            truth = sum(1 << k for k, (b, a) in enumerate(zip(before, now, strict=False))
                        if b == "open" and a == "failed")
            assert bits == truth, (seed, int(action))
            checked += 1
            failing += bits != 0
    assert checked > 100 and failing > 0


def _extends(game, state, task, tile: int) -> bool:
    """Plainly: can ``tile`` (any rotation, anywhere legal) grow the group of ``task``?"""
    for q, r, rot in _edge_legal(game, state, tile):
        after = state.copy()
        cell = (r + K.GRID_RADIUS) * K.GRID_SIDE + q + K.GRID_RADIUS
        after.meta[K.M_DRAWN] = tile
        K.place(after.cells, after.frontier, after.placed, after.uf, after.tasks, after.meta, game._rot_edges,
                np.zeros_like(game._task_type), cell, rot)
        node = int(state.tasks[task, 0])
        if after.uf[1, K.uf_root(after.uf, node)] > state.uf[1, K.uf_root(state.uf.copy(), node)]:
            return True
    return False


def _edge_legal(game, state, tile: int):
    for i in range(int(state.meta[K.M_FRONT])):
        cell = int(state.frontier[i])
        for rot in range(6):
            if K.fits(state.cells, game._rot_edges, tile, rot, cell):
                yield cell % K.GRID_SIDE - K.GRID_RADIUS, cell // K.GRID_SIDE - K.GRID_RADIUS, rot


def test_hopeless_tasks_are_those_no_unseen_tile_can_extend(game):
    seen_hopeless = 0
    for seed, placements in ((0, 22), (4, 8), (15, 5), (12, 20), (3, 40)):  # greedy games with such tasks
        state = _midgame(game, seed, placements)
        m = state.meta
        deck = state.deck
        unseen = [int(t) for t in np.r_[deck[:int(m[K.M_UNSEEN])], deck[int(m[K.M_LAND_POS]):K.NUM_LAND],
                                        deck[K.DECK_TASK + int(m[K.M_TASK_POS]):K.DECK_MARKER]]]
        bits = DK.hopeless_tasks(state.cells, state.placed, state.uf, state.tasks, state.deck, state.meta,
                                 game._rot_edges)
        for k, task in enumerate(game.tasks(state)):
            if task["status"] != "open" or task["open_edges"] == 0:
                assert not bits >> k & 1
                continue
            hopeless = not any(_extends(game, state, k, t) for t in unseen)
            assert bool(bits >> k & 1) == hopeless, (seed, k)
            seen_hopeless += hopeless
    assert seen_hopeless >= 4


def test_choice_keeps_greedy_unless_the_best_is_clearly_ahead():
    values = np.zeros((3, 8))
    values[0] = [50, 60, 70, 80, 50, 60, 70, 80]
    values[1] = values[0] + [9, -7, 8, -6, 9, -7, 8, -5]  # ahead by 1.1 on average, SE about 2.9
    counts = np.array([8, 8, 3])  # candidate 2 is still catching up: not compared
    values[2, :3] = 500
    best, common, means = M.choose(values, counts, 3)
    assert best == 0 and common == 8 and means[2] == -np.inf
    values[1] = values[0] + [4, 3, 5, 4, 3, 5, 4, 4]
    assert M.choose(values, counts, 3)[0] == 1
    values[1, 7] = values[0, 7] - 40  # one bad future sinks the margin
    assert M.choose(values, counts, 3)[0] == 0
    one = np.zeros((2, 4))
    one[1, 0] = 30
    assert M.choose(one, np.array([1, 1]), 2)[0] == 0  # one future is no evidence


def test_search_budget_widening_and_determinism(game):
    state = _midgame(game, 7, 20)
    runs = []
    for _ in range(2):
        agent = make_agent(SPEC, game)
        action = agent.act(state, game.legal_mask(state), np.random.default_rng(3))
        stats = agent.last_stats
        assert game.legal_mask(state)[action]
        assert stats["simulations"] == 24 and sum(stats["visits"].values()) == 24
        # at most ceil(1 * (n + 1) ** 0.5) candidates after n playouts: 5 of them, on 4-5 paired futures
        assert stats["children"] == 5 and stats["best_visits"] >= 4
        assert stats["best_mean"] >= stats["greedy_mean"]
        runs.append((action, stats["visits"]))
    assert runs[0] == runs[1]
    other = make_agent(SPEC, game).act(state, game.legal_mask(state), np.random.default_rng(4))
    assert game.legal_mask(state)[other]


def test_playouts_of_one_future_are_paired(game):
    """Two candidates on the same future draw the same tiles next: the score difference is the
    candidates' doing, not the deck's."""
    state = _midgame(game, 3, 10)
    actions, pairs, _ = M.candidate_placements(game, state, game.legal_mask(state))
    search = M.TurnSearch(make_agent(SPEC, game))
    a = search._play(state, pairs[0], 1234)
    b = search._play(state, pairs[0], 1234)
    assert a == b
    decks = []
    for k in (0, 1):
        search._play(state, pairs[k], 99)
        decks.append(search._work[5].copy())
    assert np.array_equal(decks[0], decks[1])


def test_a_reused_scratch_board_starts_each_playout_as_a_fresh_one(game):
    """start_playout copies only a position's tiles and frontier into the scratch board and clears
    the previous playout's: the board it starts from equals a full copy, whatever came before."""
    shared = K.new_arrays()
    positions = [_midgame(game, seed, placed) for seed, placed in ((1, 30), (2, 5), (3, 55), (4, 1), (5, 18))]
    for i, state in enumerate(positions + positions[::-1]):
        board = state.board()
        mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
        K.legal_moves(board.cells, board.frontier, board.uf, board.meta, game._rot_edges, game._task_type,
                      mask)
        slot, rot = map(int, np.argwhere(mask[:int(board.meta[K.M_FRONT])])[0])
        cell = int(board.frontier[slot])
        fresh = K.new_arrays()
        DK.start_playout(board, fresh, cell, rot, np.uint64(77 + i), game._rot_edges, game._task_type)
        DK.start_playout(board, shared, cell, rot, np.uint64(77 + i), game._rot_edges, game._task_type)
        for got, want in zip(shared, fresh, strict=True):
            assert np.array_equal(got, want)
        score = np.zeros(K.SCORE_SIZE, np.int64)
        tables = (game._rot_edges, game._task_type, game._flag, preset_weights("default"))
        totals = [DK.playout(board, work, cell, rot, np.uint64(5 + i), True, *tables, mask, score)
                  for work in (shared, K.new_arrays())]
        assert totals[0] == totals[1]


def test_time_limit_is_an_anytime_budget(game):
    state = _midgame(game, 2, 5)
    agent = make_agent("mcts:engine=compiled,rollout=greedy,simulations=none,time_limit=0.1", game)
    agent.act(state, game.legal_mask(state), np.random.default_rng(0))  # compiles
    for r in range(3):
        action = agent.act(state, game.legal_mask(state), np.random.default_rng(r))
        assert game.legal_mask(state)[action]
        assert agent.last_stats["seconds"] < 0.1 + 0.15 and agent.last_stats["simulations"] > 0


def test_forced_and_option_errors(game):
    with pytest.raises(ConfigError, match="max_depth"):
        make_agent("mcts:engine=compiled,max_depth=3", game)
    agent = make_agent(SPEC, game)
    state = game.new_game(0)
    mask = np.zeros_like(game.legal_mask(state))
    mask[int(np.flatnonzero(game.legal_mask(state))[0])] = True
    assert agent.act(state, mask, np.random.default_rng(0)) == int(np.flatnonzero(mask)[0])
    assert agent.last_stats["forced"]


def test_an_explaining_search_reports_its_candidates_without_changing_its_choice(game):
    state = _midgame(game, 6, 18)
    plain = make_agent(SPEC, game)
    chosen = plain.act(state, game.legal_mask(state), np.random.default_rng(2))
    agent = make_agent(SPEC, game)
    agent.explaining = True
    assert agent.act(state, game.legal_mask(state), np.random.default_rng(2)) == chosen
    told = agent.last_explanation
    assert told["chosen"] == chosen and told["simulations"] == 24
    assert chosen in [c["action"] for c in told["candidates"]]
    assert sum(c["visits"] for c in told["candidates"]) == 24


@pytest.mark.slow
def test_the_search_completes_tasks_where_greedy_completes_none(game):
    """Seed 1047 is one of the 24 in 1,500 greedy games (seeds 1000-2499) that never complete a
    task: the first task tiles border holes no remaining tile fills. The search plays around it."""
    from experiments.common.runner import play_game

    greedy = play_game(game, ["greedy"], 1047)
    search = play_game(game, ["mcts:engine=compiled,rollout=greedy,simulations=32,widening=1/0.33"], 1047)
    assert greedy.extras[0]["completed_tasks"] == 0
    assert search.extras[0]["completed_tasks"] >= 8 and search.totals[0] > greedy.totals[0] + 40


# ---- the exact endgame (exact_tiles) ---------------------------------------------------------------

EXACT = "mcts:engine=compiled,rollout=greedy,simulations=16,widening=1/0.5,exact_tiles=1"


def _last_placement(game, seed: int):
    """The position of the last landscape tile of a greedy game."""
    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    while int(state.meta[K.M_LAND_POS]) < K.NUM_LAND:
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    return state


def _final_scores(game, state) -> dict[int, int | None]:
    """Final score of every legal action, None when the game goes on after it."""
    out = {}
    for action in np.flatnonzero(game.legal_mask(state)):
        after = state.copy()
        game.step(after, int(action))
        out[int(action)] = game.scores(after)[0].total if game.is_over(after) else None
    return out


def test_exact_endgame_picks_the_best_final_placement(game):
    checked = beaten = 0
    for seed, hand in [(s, h) for s in (0, 1, 3, 4) for h in range(-1, 3)]:
        state = _last_placement(game, seed)
        if hand >= 0:  # or one of the tiles set aside unseen in hand instead: other last placements
            game.set_hand(state, game.data.tile_ids[int(state.deck[hand])])
        finals = _final_scores(game, state)
        if any(v is None for v in finals.values()):
            continue  # a placement would free a task slot: not the last one for every choice
        agent = make_agent(EXACT, game)
        action = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(seed))
        assert agent.last_stats["exact"] and agent.last_stats["candidates"] > 20
        assert finals[action] == max(finals.values()), seed
        assert agent.last_stats["best_mean"] == finals[action]
        checked += 1
        beaten += min(finals.values()) < finals[action]
    assert checked >= 10 and beaten >= 2


def test_exact_value_with_task_draws_agrees_with_sampled_futures(game):
    """Where the last landscape placement frees a task slot, the enumerated value (every task tile and
    marker that can come next) matches the mean of many sampled greedy playouts."""
    from agents.search.placement_endgame import Endgame

    state = _last_placement(game, 17)  # six placements there complete a task
    _, pairs, _ = M.candidate_placements(game, state, game.legal_mask(state))
    endgame = Endgame(game)
    compared = 0
    for pair in pairs:
        before = endgame.outcomes
        value = endgame.values(state, pair[None, :])[0]
        if endgame.outcomes == before:
            continue  # the game ends after it: exact by construction
        search = M.TurnSearch(make_agent(EXACT, game))
        samples = np.array([search._play(state, pair, seed) for seed in range(1500)])
        assert samples.std() > 0  # the drawn task tile and marker matter
        assert abs(samples.mean() - value) < 4 * samples.std() / np.sqrt(samples.size) + 1e-9
        compared += 1
        if compared == 2:
            return
    pytest.fail("no placement frees a task slot in this position")


def test_exact_endgame_is_deterministic_and_can_be_turned_off(game):
    state = _last_placement(game, 0)
    mask = game.legal_mask(state)
    picks = set()
    for seed in range(3):
        agent = make_agent(EXACT, game)
        picks.add(agent.act(state.copy(), mask, np.random.default_rng(seed)))
        assert agent.last_stats["exact"] and agent.last_stats["simulations"] == 0
    assert len(picks) == 1
    off = make_agent(EXACT.replace("exact_tiles=1", "exact_tiles=0"), game)
    off.act(state.copy(), mask, np.random.default_rng(0))
    assert "exact" not in off.last_stats and off.last_stats["simulations"] == 16
    early = make_agent(EXACT, game)
    mid = _midgame(game, 0, 30)
    early.act(mid, game.legal_mask(mid), np.random.default_rng(0))
    assert "exact" not in early.last_stats


@pytest.mark.parametrize("bad", ["-1", "4", "x", "1.5"])
def test_exact_tiles_option_errors(game, bad):
    with pytest.raises(ConfigError, match="exact_tiles"):
        make_agent(EXACT.replace("exact_tiles=1", f"exact_tiles={bad}"), game)


def test_exact_tiles_needs_the_compiled_dorfromantik_search(game):
    with pytest.raises(ConfigError, match="exact_tiles"):
        make_agent("mcts:simulations=8,exact_tiles=1", game)


def test_a_greedy_preset_ranks_the_candidates_and_plays_the_playouts_and_the_endgame(game):
    from agents.greedy.dorfromantik import preset_weights

    state = _midgame(game, 6, 14)
    selfplay = preset_weights("selfplay")
    search = M.TurnSearch(make_agent(SPEC + ",greedy=selfplay", game))
    assert np.array_equal(search.weights, selfplay) and np.array_equal(search._endgame.weights, selfplay)
    _, pairs, values = M.candidate_placements(game, state, game.legal_mask(state), selfplay)
    _, g_values = make_agent("greedy:preset=selfplay", game).action_values(state)
    assert values[0] == pytest.approx(g_values.max())
    default = M.TurnSearch(make_agent(SPEC, game))
    same = [search._play(state, pairs[0], seed) == default._play(state, pairs[0], seed) for seed in range(8)]
    assert not all(same)  # the preset's playouts are not the defaults'
    with pytest.raises(ConfigError, match="unknown preset 'clever'"):
        make_agent(SPEC + ",greedy=clever", game)


LEARNED = "placement:simulations=12,widening=1/0.5,model=models/dorfromantik"


def test_a_learned_model_orders_the_candidates(game):
    """With ``model=`` candidate 0 (the one that stays unless beaten) is the learned policy's move and
    the rest follow its values; the candidate set is the same."""
    agent = make_agent(LEARNED + ",rollout=greedy", game)
    policy = make_agent("learned:models/dorfromantik", game)
    for seed, placed in ((1, 4), (2, 20), (5, 35)):
        state = _midgame(game, seed, placed)
        mask = game.legal_mask(state)
        actions, pairs, values = M.candidate_placements(game, state, mask, agent._turn_search.weights)
        ordered, o_pairs, o_values = M.learned_order(state, agent._turn_search.model, actions, pairs, values)
        assert sorted(ordered.tolist()) == sorted(actions.tolist())
        learned = policy.placement_values(state)
        slot_of = {int(c): i for i, c in enumerate(state.frontier[:int(state.meta[K.M_FRONT])])}
        row = [learned[slot_of[int(c)], int(r)] for c, r in o_pairs]
        assert all(a >= b for a, b in zip(row, row[1:], strict=False))
        chosen = policy.act(state, mask, np.random.default_rng(0))
        best = [int(a) for a, v in zip(ordered, row, strict=True) if v >= row[0] - 1e-4]
        q, r, rot = game.action_to_placement(state, chosen)
        cell = (r + K.GRID_RADIUS) * K.GRID_SIDE + q + K.GRID_RADIUS
        assert abs(learned[slot_of[cell], rot] - row[0]) < 1e-4  # the first is worth the policy's move
        if chosen in actions.tolist():  # (a same-edges rotation of it may stand for it in the set)
            assert chosen in best


def test_learned_playouts_are_paired_and_deterministic(game):
    state = _midgame(game, 4, 12)
    search = M.TurnSearch(make_agent(LEARNED + ",rollout=learned", game))
    greedy = M.TurnSearch(make_agent(LEARNED + ",rollout=greedy", game))
    _, pairs, _ = M.candidate_placements(game, state, game.legal_mask(state))
    assert search._play(state, pairs[0], 77) == search._play(state, pairs[0], 77)
    assert [search._play(state, pairs[0], s) for s in range(6)] != [greedy._play(state, pairs[0], s)
                                                                   for s in range(6)]
    runs = [make_agent(LEARNED + ",rollout=learned", game).act(state, game.legal_mask(state),
                                                               np.random.default_rng(5)) for _ in range(2)]
    assert runs[0] == runs[1] and game.legal_mask(state)[runs[0]]


def test_learned_model_option_errors(game):
    with pytest.raises(ConfigError, match="rollout=learned plays the playouts with a learned model"):
        make_agent("placement:simulations=8,rollout=learned", game)
    with pytest.raises(ConfigError, match="is a cascadia model"):
        make_agent("placement:simulations=8,model=models/cascadia_solo", game)
    with pytest.raises(ConfigError, match="no model at"):
        make_agent("placement:simulations=8,model=models/nowhere", game)
    with pytest.raises(ConfigError, match="unknown option"):
        make_agent("uct:simulations=8,model=models/dorfromantik", game)
    with pytest.raises(ConfigError, match="model=<folder>"):
        make_agent("mcts:simulations=8,model=models/dorfromantik", game)

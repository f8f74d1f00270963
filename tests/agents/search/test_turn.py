"""The compiled Cascadia turn search: determinization, candidate turns, plans, budgets,
determinism, no peeking and option errors."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy.cascadia import (
    DEFAULT_WEIGHTS,
    FREE_REDRAW,
    CascadiaGreedyAgent,
    play_greedy,
    preset_weights,
)
from agents.search import turn as M
from envs.cascadia import kernels as K
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.agents.peeking import decisions_on_twins, twin_states

SPEC = "mcts:engine=compiled,rollout=greedy,simulations=12,widening=1/0.5"
WEIGHTS = np.array(list(DEFAULT_WEIGHTS.values()))


def _midgame(players: int, seed: int, turns: int = 6):
    game = make_game("cascadia", players=players)
    state = game.new_game(seed)
    greedy = CascadiaGreedyAgent(game)
    rng = np.random.default_rng(0)
    while int(state.ctl[K.C_TURN]) < turns or int(state.ctl[K.C_PHASE]) != K.PHASE_MARKET:
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    return game, state


def test_determinization_ignores_the_real_order_and_keeps_what_is_known():
    game, state = _midgame(4, 3)
    _, twin = twin_states(game, state, np.random.default_rng(1))
    pos = int(state.ctl[K.C_STACK_POS])
    assert not np.array_equal(state.stack[pos:], twin.stack[pos:])
    outs = []
    for s in (state, twin):
        out = s.board_args().copy()
        M.determinize_into(s.board_args(), out, np.array([9], np.uint64))
        outs.append(out)
    for x, y in zip(*outs, strict=True):
        assert np.array_equal(x, y)
    det = outs[0]
    assert np.array_equal(det.stack[:pos], state.stack[:pos])
    assert sorted(det.stack[pos:]) == sorted(state.stack[pos:])
    assert not np.array_equal(det.stack[pos:], state.stack[pos:])
    for i in (0, 2, 3, 7, 8, 10, 11):  # tiles, edges, tokens, pinfo, market, bag, ctl
        assert np.array_equal(det[i], state.board_args()[i])


@pytest.mark.parametrize("players", [1, 4])
def test_candidate_turns_start_with_the_greedy_turn_and_are_legal(players):
    game, state = _midgame(players, 5)
    cands, values = M.candidate_turns(game, state, WEIGHTS)
    assert cands.shape[0] >= 4 and np.all(np.diff(values) <= 0)
    greedy = CascadiaGreedyAgent(game)
    s = state.copy()
    rng = np.random.default_rng(0)
    for i in range(3):
        if int(s.ctl[K.C_TURN]) != int(state.ctl[K.C_TURN]):
            assert cands[0, i] == -1
            break
        action = greedy.act(s, game.legal_mask(s), rng)
        assert cands[0, i] == action
        game.step(s, action)
    seen = set()
    for plan in cands:
        s = state.copy()
        for action in plan[plan >= 0]:
            assert game.legal_mask(s)[action], game.why_illegal(s, int(action))
            game.step(s, int(action))
        assert int(s.ctl[K.C_TURN]) == int(state.ctl[K.C_TURN]) + 1  # a whole turn
        key = (int(plan[0]), int(plan[1]) // 6)
        assert key not in seen  # one candidate per (market option, position)
        seen.add(key)


def test_search_budget_plan_and_determinism():
    game, state = _midgame(4, 7)
    runs = []
    for _ in range(2):
        agent = make_agent(SPEC, game)
        s = state.copy()
        rng = np.random.default_rng(4)
        actions = []
        while int(s.ctl[K.C_TURN]) == int(state.ctl[K.C_TURN]):
            mask = game.legal_mask(s)
            action = agent.act(s, mask, rng)
            assert mask[action]
            if not actions:
                stats = agent.last_stats
                # 12 playouts: ceil(1 * 12 ** 0.5) = 4 candidates x 3 paired futures
                assert stats["children"] == 4 and stats["simulations"] == 12 and stats["best_visits"] == 3
                assert stats["best_mean"] >= stats["greedy_mean"]
            else:
                assert agent.last_stats["planned"]  # the turn's later decisions follow the plan
            actions.append(action)
            game.step(s, action)
        runs.append(actions)
    assert runs[0] == runs[1] and len(runs[0]) == 3


def test_search_decisions_do_not_depend_on_the_hidden_future():
    for seed in range(2):
        game, state = _midgame(4, 20 + seed)
        first, second = twin_states(game, state, np.random.default_rng(seed))
        a, b = decisions_on_twins(game, lambda game=game: make_agent(SPEC, game), first, second, seed)
        assert a == b


def test_search_options_that_do_not_apply_are_refused():
    game = make_game("cascadia", players=4)
    with pytest.raises(ConfigError, match="rollout=greedy"):
        make_agent("mcts:engine=compiled", game)
    with pytest.raises(ConfigError, match="rollout=greedy"):
        make_agent("mcts:engine=compiled,rollout=greedy,max_depth=3", game)


def test_a_plan_never_carries_over_to_another_game():
    game, state = _midgame(4, 7)
    _, other = _midgame(4, 107)
    assert int(other.ctl[K.C_TURN]) == int(state.ctl[K.C_TURN]) and int(other.ctl[K.C_CUR]) == int(
        state.ctl[K.C_CUR])
    agent = make_agent(SPEC, game)
    rng = np.random.default_rng(0)
    agent.act(state, game.legal_mask(state), rng)  # plans the rest of this turn
    greedy = CascadiaGreedyAgent(game)
    game.step(other, greedy.act(other, game.legal_mask(other), rng))  # the other game's tile phase
    mask = game.legal_mask(other)
    stale = agent._turn_search._plan[0]
    assert mask[stale]  # the first game's planned tile would be legal here: only the key stops it
    action = agent.act(other, mask, rng)
    assert mask[action] and agent.last_stats["simulations"] == 12 and "planned" not in agent.last_stats


def test_time_budget_stops_after_the_futures_that_fit():
    game, state = _midgame(4, 9)
    # a budget that fits a whole future even on a loaded machine (a 4-player playout: 20-40 ms)
    agent = make_agent("mcts:engine=compiled,rollout=greedy,simulations=100000,time_limit=0.5", game)
    agent.act(state, game.legal_mask(state), np.random.default_rng(0))  # compiles
    agent.act(state, game.legal_mask(state), np.random.default_rng(1))
    stats = agent.last_stats
    assert stats["seconds"] < 3.0 and stats["best_visits"] >= 1
    assert stats["simulations"] == stats["best_visits"] * stats["children"]  # whole futures only


def _last_turn(players: int, seed: int):
    """The game's last turn after greedy play (its market decision), its candidate turns and each
    one's exact final (base score, total) for the seat to move."""
    game = make_game("cascadia", players=players)
    state = game.new_game(seed)
    greedy = CascadiaGreedyAgent(game)
    rng = np.random.default_rng(0)
    last = 20 * players - 1  # turns are counted over all seats
    while int(state.ctl[K.C_TURN]) < last or int(state.ctl[K.C_PHASE]) != K.PHASE_MARKET:
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    cands, _ = M.candidate_turns(game, state, WEIGHTS)
    finals = []
    for turn in cands:
        s = state.copy()
        for a in turn[turn >= 0]:
            game.step(s, int(a))
        assert game.is_over(s)
        p = game.current_player(state)
        finals.append(game.score_table(s)[p, [K.CAT_BASE, K.CAT_TOTAL]])
        assert finals[-1][1] == game.returns(s)[p]
    return game, state, cands, np.array(finals, dtype=np.float64)


@pytest.mark.parametrize("players", [1, 2])
def test_the_last_turn_is_valued_exactly_over_every_candidate_turn(players):
    game, state, cands, finals = _last_turn(players, 5)
    totals = finals[:, 1]
    agent = make_agent(SPEC, game)
    first = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(1))
    stats = agent.last_stats
    assert stats["exact"] and stats["simulations"] == 0 and stats["children"] == len(cands)
    best = int(np.argmax(totals))
    assert first == cands[best, 0] and stats["best_mean"] == max(totals)


def _playout_totals(game, state, turn, future, weights, column=K.CAT_TOTAL):
    """Final scores (``column``: totals by default) of ``turn`` then greedy play with ``weights`` on
    the future seeded by ``future``."""
    src = state.board_args()
    det, work = src.copy(), src.copy()
    M.determinize_into(src, det, np.array([future], np.uint64))
    M.copy_state(det, work)
    M.apply_turn(work, turn, game.nbr, game.kind_edges, game.kind_info)
    play_greedy(work, game.tb, weights, 0.0, np.zeros(1, np.uint64))
    out = np.zeros((game.num_players(), K.NUM_CAT), np.int32)
    K.score_all(work[2], work[3], work[5], work[7], work[11], game.nbr, game.tables, game.data.solo_bonus_min,
                game.data.solo_bonus_points, out)
    return out[:, column].astype(np.float64)


def test_the_base_objective_values_playouts_and_the_last_turn_by_the_base_score():
    game, state = _midgame(4, 11)
    search = make_agent(SPEC + ",objective=base", game)._turn_search
    cands, _ = M.candidate_turns(game, state, WEIGHTS)
    for future in range(4):
        sums = np.zeros((2, 4))
        scratch = [state.board_args().copy() for _ in range(2)]
        for k in range(2):
            search._playout(state.board_args(), *scratch, cands[k:k + 1], np.array([future], np.uint64),
                            sums[k:k + 1])
            base = _playout_totals(game, state, cands[k], future, WEIGHTS, K.CAT_BASE)
            assert np.array_equal(sums[k], base)
            total = _playout_totals(game, state, cands[k], future, WEIGHTS)
            assert np.all(base <= total) and np.any(base < total)  # the majority bonuses are left out
    differs = 0
    for seed in (3, 8, 10):  # on 8 and 10 the best total is not the best base score
        game, state, cands, finals = _last_turn(2, seed)
        agent = make_agent(SPEC + ",objective=base", game)
        first = agent.act(state.copy(), game.legal_mask(state), np.random.default_rng(1))
        best = int(np.argmax(finals[:, 0]))
        assert agent.last_stats["exact"] and first == cands[best, 0]
        assert agent.last_stats["best_mean"] == finals[best, 0]
        differs += int(np.argmax(finals[:, 1])) != best
    assert differs > 0  # on some of these last turns the total would pick another turn


def test_a_greedy_preset_ranks_the_candidates_and_plays_the_playouts():
    game, state = _midgame(4, 11)
    selfplay = preset_weights("selfplay")
    search = make_agent(SPEC + ",greedy=selfplay", game)._turn_search
    assert np.array_equal(search.weights, selfplay)
    cands, _ = M.candidate_turns(game, state, selfplay)
    s, rng = state.copy(), np.random.default_rng(0)
    greedy = make_agent("greedy:preset=selfplay", game)
    for a in cands[0][cands[0] >= 0]:  # the first candidate is the preset's greedy turn
        assert greedy.act(s, game.legal_mask(s), rng) == a
        game.step(s, int(a))
    differs = 0
    for future in range(6):
        sums = np.zeros((1, 4))
        scratch = [state.board_args().copy() for _ in range(2)]
        search._playout(state.board_args(), *scratch, cands[:1], np.array([future], np.uint64), sums)
        assert np.array_equal(sums[0], _playout_totals(game, state, cands[0], future, selfplay))
        differs += not np.array_equal(sums[0], _playout_totals(game, state, cands[0], future, WEIGHTS))
    assert differs > 0  # the preset's playouts are not the defaults'
    with pytest.raises(ConfigError, match="unknown preset 'clever'"):
        make_agent(SPEC + ",greedy=clever", game)


def test_endgame_candidates_on_a_seats_last_turn_are_ranked_by_their_exact_base_gain():
    """With ``greedy=endgame`` the candidate turns of a seat's last turn (not the game's: three
    seats play after it) carry exactly the base points they add, best first; the defaults rank
    by look-ahead too, so their values differ."""
    game = make_game("cascadia", players=4)
    for seed in (3, 8):
        state = game.new_game(seed)
        greedy, rng = CascadiaGreedyAgent(game), np.random.default_rng(0)
        while int(state.ctl[K.C_TURN]) < 76 or int(state.ctl[K.C_PHASE]) != K.PHASE_MARKET:
            game.step(state, greedy.act(state, game.legal_mask(state), rng))
        p = game.current_player(state)
        before = int(game.score_table(state)[p, K.CAT_BASE])
        cands, values = M.candidate_turns(game, state, preset_weights("endgame"))
        _, look_ahead = M.candidate_turns(game, state, WEIGHTS)
        assert len(cands) > 20 and np.all(np.diff(values) <= 0)
        for turn, value in zip(cands, values, strict=True):
            s = state.copy()
            for a in turn[turn >= 0]:
                game.step(s, int(a))
            assert not game.is_over(s) and s.pinfo[p, K.P_TURNS] == game.data.turns_per_player
            assert int(game.score_table(s)[p, K.CAT_BASE]) - before == pytest.approx(value, abs=1e-9)
        assert not np.allclose(np.sort(look_ahead), np.sort(values))


def _three_of_a_kind_turn(players: int, seed: int):
    """A market decision of a greedy game at which the free three-of-a-kind redraw is legal."""
    game = make_game("cascadia", players=players)
    state = game.new_game(seed)
    greedy = CascadiaGreedyAgent(game)
    rng = np.random.default_rng(0)
    while True:
        mask = game.legal_mask(state)
        if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET and mask[K.A_THREE] and int(state.ctl[K.C_TURN]) > 4:
            return game, state
        game.step(state, greedy.act(state, mask, rng))


def test_redraw_turns_lists_exactly_the_legal_redraws():
    game, state = _three_of_a_kind_turn(4, 1)
    mask = game.legal_mask(state)
    turns = M.redraw_turns(mask)
    assert turns[0, 0] == K.A_THREE and np.all(turns[:, 1:] == -1)
    has_nature = int(state.pinfo[int(state.ctl[K.C_CUR]), K.P_NATURE]) > 0
    assert (K.A_REDRAW + 15 in turns[:, 0]) == has_nature == bool(mask[K.A_REDRAW + 15])
    mask[K.A_THREE] = False
    assert K.A_THREE not in M.redraw_turns(mask)[:, 0]
    mask[K.A_REDRAW + 15] = True
    assert list(M.redraw_turns(mask)[:, 0]) == [K.A_REDRAW + 15]


def test_redraws_are_compared_beside_the_widened_turns():
    game, state = _three_of_a_kind_turn(4, 2)
    mask = game.legal_mask(state)
    extra = M.redraw_turns(mask)
    for redraws, children in ((False, 4), (True, 4 + extra.shape[0])):
        agent = make_agent(SPEC + f",redraws={str(redraws).lower()}", game)
        action = agent.act(state.copy(), mask.copy(), np.random.default_rng(3))
        stats = agent.last_stats
        assert mask[action] and stats["children"] == children
        assert (K.A_THREE in stats["visits"]) == redraws
        if redraws:
            assert stats["visits"][K.A_THREE] >= 1  # played on the same paired futures


def test_free_redraw_takes_the_three_of_a_kind_redraw_then_searches_the_new_tokens():
    game, state = _three_of_a_kind_turn(4, 2)
    agent = make_agent(SPEC + ",free_redraw=true", game)
    rng = np.random.default_rng(3)
    assert agent.act(state, game.legal_mask(state), rng) == K.A_THREE
    assert agent.last_stats["forced"]
    game.step(state, K.A_THREE)
    mask = game.legal_mask(state)
    assert not mask[K.A_THREE] and int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET
    action = agent.act(state, mask, rng)  # the turn is searched on the redrawn tokens
    assert mask[action] and action != K.A_THREE and agent.last_stats["simulations"] > 0
    plain = make_agent(SPEC, game)
    _, other = _three_of_a_kind_turn(4, 2)
    assert plain.act(other, game.legal_mask(other), np.random.default_rng(3)) != K.A_THREE
    with pytest.raises(ConfigError, match="free_redraw must be true or false"):
        make_agent(SPEC + ",free_redraw=often", game)
    with pytest.raises(ConfigError, match="compiled cascadia turn search"):
        make_agent("mcts:simulations=8,free_redraw=true", game)


def test_playout_redraw_makes_every_seat_of_the_playouts_take_the_free_redraw():
    game, state = _midgame(4, 11)
    search = make_agent(SPEC + ",playout_redraw=true", game)._turn_search
    taking = WEIGHTS.copy()
    taking[FREE_REDRAW] = 1.0
    np.testing.assert_array_equal(search.weights, taking)
    cands, _ = M.candidate_turns(game, state, WEIGHTS)
    differs = 0
    for future in range(6):
        sums = np.zeros((1, 4))
        scratch = [state.board_args().copy() for _ in range(2)]
        search._playout(state.board_args(), *scratch, cands[:1], np.array([future], np.uint64), sums)
        assert np.array_equal(sums[0], _playout_totals(game, state, cands[0], future, taking))
        differs += not np.array_equal(sums[0], _playout_totals(game, state, cands[0], future, WEIGHTS))
    assert differs > 0  # some playouts meet a three-of-a-kind market and go another way
    assert make_agent(SPEC, game)._turn_search.weights[FREE_REDRAW] == 0.0
    with pytest.raises(ConfigError, match="playout_redraw must be true or false"):
        make_agent(SPEC + ",playout_redraw=1.5", game)
    with pytest.raises(ConfigError, match="compiled cascadia turn search"):
        make_agent("mcts:simulations=8,playout_redraw=true", game)


def test_a_redraw_playout_draws_from_the_determinized_bag_then_plays_the_turn():
    game, state = _three_of_a_kind_turn(4, 3)
    src = state.board_args()
    det, work = src.copy(), src.copy()
    redraw = M.redraw_turns(game.legal_mask(state))[:1]
    redrawn = []
    for future in range(8):
        M.determinize_into(src, det, np.array([future], np.uint64))
        M.copy_state(det, work)
        M.apply_turn(work, redraw[0], game.nbr, game.kind_edges, game.kind_info)
        assert work.ctl[K.C_PHASE] == K.PHASE_MARKET and work.ctl[K.C_THREE_USED] == 1
        assert work.ctl[K.C_TURN] == state.ctl[K.C_TURN]  # the turn goes on after the redraw
        assert np.array_equal(work[8][0], state.market[0])  # tiles stay
        redrawn.append(tuple(work[8][1]))
    assert len(set(redrawn)) > 1  # each future draws its own tokens
    sums = np.zeros((1, 4))
    M.paired_playouts(src, det, work, redraw, 1, 1, np.array([5], np.uint64), game.tb, WEIGHTS, sums)
    assert np.array_equal(sums[0], _playout_totals(game, state, redraw[0], 5, WEIGHTS))


def test_a_chosen_redraw_is_played_and_the_turn_searched_again():
    spec = "mcts:engine=compiled,rollout=greedy,simulations=24,widening=1/0.5,redraws=true"
    for seed in range(6):
        game, state = _three_of_a_kind_turn(2, seed)
        agent = make_agent(spec, game)
        rng = np.random.default_rng(seed)
        action = agent.act(state, game.legal_mask(state), rng)
        if action not in (K.A_THREE, K.A_REDRAW + 15):
            continue
        turn = int(state.ctl[K.C_TURN])
        game.step(state, action)
        mask = game.legal_mask(state)
        follow = agent.act(state, mask, rng)
        assert mask[follow] and "planned" not in agent.last_stats and agent.last_stats["simulations"] > 0
        assert int(state.ctl[K.C_TURN]) == turn
        return
    pytest.fail("no redraw chosen at six three-of-a-kind markets")


def test_search_with_redraws_does_not_depend_on_the_hidden_future():
    for seed in range(2):
        game, state = _three_of_a_kind_turn(4, 30 + seed)
        first, second = twin_states(game, state, np.random.default_rng(seed))
        a, b = decisions_on_twins(game, lambda game=game: make_agent(SPEC + ",redraws=true", game), first,
                                  second, seed)
        assert a == b


@pytest.mark.parametrize("option, good, bad, refusal, elsewhere", [
    ("redraws", "true", "often", "redraws must be true or false", "redraws=true"),
    ("objective", "base", "wins", "objective must be one of total, base, got 'wins'", "objective=<score>"),
    ("rotations", "2", "7", "rotations must be an integer from 1 to 6, got 7", "rotations=N"),
    ("rotations", "3", "two", "rotations must be an integer from 1 to 6, got 'two'", "rotations=N"),
])
def test_turn_search_options_are_checked_and_refused_elsewhere(option, good, bad, refusal, elsewhere):
    with pytest.raises(ConfigError, match=refusal):
        make_agent(SPEC + f",{option}={bad}", make_game("cascadia", players=4))
    with pytest.raises(ConfigError, match=elsewhere):
        make_agent(f"mcts:engine=compiled,rollout=greedy,simulations=12,{option}={good}",
                   make_game("cartographers", players=1))
    with pytest.raises(ConfigError, match=elsewhere):
        make_agent(f"mcts:simulations=12,{option}={good}", make_game("cascadia", players=4))


@pytest.mark.parametrize("players, seed", [(4, 5), (4, 9), (1, 3)])
def test_rotations_add_each_placements_next_best_rotations(players, seed):
    """``rotations=2``: every candidate of the default list, plus each placement's second-best rotation
    (where the tile has one), each a whole legal turn whose planned value is greedy's for that rotation."""
    game, state = _midgame(players, seed)
    one, one_values = M.candidate_turns(game, state, WEIGHTS)
    two, values = M.candidate_turns(game, state, WEIGHTS, rotations=2)
    assert np.array_equal(two[0], one[0]) and np.all(np.diff(values) <= 0)
    listed = {tuple(t): v for t, v in zip(two.tolist(), values, strict=True)}
    assert len(listed) == two.shape[0]  # no duplicates
    for t, v in zip(one.tolist(), one_values, strict=True):
        assert listed[tuple(t)] == v  # the default list is inside, with the same values
    by_place: dict[tuple[int, int], set[int]] = {}
    for t in listed:
        by_place.setdefault((t[0], (t[1] - K.A_TILE) // 6), set()).add((t[1] - K.A_TILE) % 6)
    extra = 0
    for (market, _), rots in by_place.items():  # distinct rotations, as many as the tile has up to 2
        kind = int(state.market[0, (market - K.A_PAIR) if market < K.A_FREE else (market - K.A_FREE) // 4])
        assert len(rots) == min(2, int(game.tb.kind_info[kind, 2]))
        extra += len(rots) - 1
    assert extra > 0 and two.shape[0] == one.shape[0] + extra
    for plan in two[:: max(1, two.shape[0] // 40)]:
        s = state.copy()
        for action in plan[plan >= 0]:
            assert game.legal_mask(s)[action], game.why_illegal(s, int(action))
            game.step(s, int(action))
        assert int(s.ctl[K.C_TURN]) == int(state.ctl[K.C_TURN]) + 1


def test_the_search_compares_the_rotations_candidates():
    """Without widening the search compares every candidate turn: ``rotations=2``'s longer list."""
    game, state = _midgame(4, 5)
    legal = game.legal_mask(state)
    for rotations in (1, 2):
        cands, _ = M.candidate_turns(game, state, WEIGHTS, rotations=rotations)
        agent = make_agent(f"turn:simulations=1,widening=off,rotations={rotations}", game)
        agent.act(state.copy(), legal, np.random.default_rng(0))
        assert agent.last_stats["children"] == int(legal[cands[:, 0]].sum())


def _first_turn_played(game, state, spec: str) -> list[int]:
    agent, s, rng, played = make_agent(spec, game), state.copy(), np.random.default_rng(2), []
    while int(s.ctl[K.C_TURN]) == int(state.ctl[K.C_TURN]) and int(s.ctl[K.C_CUR]) == int(state.ctl[K.C_CUR]):
        played.append(agent.act(s, game.legal_mask(s), rng))
        game.step(s, played[-1])
    return played


def test_a_learned_model_orders_the_candidate_turns():
    """With ``model=`` the search compares the same candidate turns sorted by the model's value: with
    one playout only candidate 0 is compared, and it is the turn the model values most."""
    differs = 0
    for players, folder, seed in ((1, "cascadia_solo", 3), (1, "cascadia_solo", 11), (4, "cascadia_4p", 7),
                                  (4, "cascadia_4p", 2)):
        game, state = _midgame(players, seed)
        one = "turn:simulations=1,widening=1/0.5"
        policy = make_agent(f"learned:models/{folder}", game)
        search = make_agent(one + f",model=models/{folder}", game)._turn_search
        cands, _ = M.candidate_turns(game, state, search.weights)
        cands = cands[game.legal_mask(state)[cands[:, 0]]]
        values = policy.turn_values(state, cands)
        best = cands[int(np.argmax(values))]
        learned = _first_turn_played(game, state, one + f",model=models/{folder}")
        assert learned == [int(a) for a in best if a >= 0]
        plain = _first_turn_played(game, state, one)
        assert plain == [int(a) for a in cands[0] if a >= 0]  # greedy's turn
        differs += learned != plain
    assert differs >= 1


def test_a_learned_model_search_is_deterministic_and_refuses_other_games_models():
    game, state = _midgame(1, 5)
    spec = "turn:simulations=16,halving=true,model=models/cascadia_solo"
    assert _first_turn_played(game, state, spec) == _first_turn_played(game, state, spec)
    with pytest.raises(ConfigError, match="is a dorfromantik model"):
        make_agent("turn:simulations=8,model=models/dorfromantik", game)


@pytest.mark.slow  # compiles the model playout (minutes on a cold numba cache)
def test_learned_playouts_play_the_turn_then_the_model_in_every_seat():
    """``rollout=learned``: a candidate's playout is the turn on the future's determinization, then the
    learned model in every seat to the end (here replayed from Python by the model's own agent)."""
    game, state = _midgame(4, 9)
    spec = "turn:simulations=8,rollout=learned,model=models/cascadia_4p"
    search = make_agent(spec, game)._turn_search
    cands, _ = M.candidate_turns(game, state, search.weights)
    for k in (0, 3):
        src = state.board_args()
        sums = np.zeros((1, 4))
        search._playout(src, src.copy(), src.copy(), cands[k:k + 1], np.array([123], np.uint64), sums)
        replay = state.copy()
        board = replay.board_args()
        M.determinize_into(state.board_args(), board, np.array([123], np.uint64))
        M.apply_turn(board, cands[k], game.nbr, game.kind_edges, game.kind_info)
        policy, rng = make_agent("learned:models/cascadia_4p,redraw=never", game), np.random.default_rng(0)
        while not game.is_over(replay):
            game.step(replay, policy.act(replay, game.legal_mask(replay), rng))
        assert np.array_equal(sums[0], game.score_table(replay)[:, K.CAT_TOTAL])
    assert _first_turn_played(game, state, spec) == _first_turn_played(game, state, spec)
    with pytest.raises(ConfigError, match="give model=<folder>"):
        make_agent("turn:simulations=8,rollout=learned", game)

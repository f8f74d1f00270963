"""Turn flow: setup, overpopulation, nature tokens, placement, keystones, the solo market, the end."""

from __future__ import annotations

import numpy as np
import pytest

from envs.cascadia import kernels as K
from envs.cascadia.data import CELL_COORDS, NEIGHBORS, RADIUS, cell_of, hex_distance
from envs.cascadia.game import CascadiaGame
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.rng import new_stream, random_true_index
from tests.paths import REPO_ROOT


def tokens_in_play(s) -> int:
    placed = int((s.tokens >= 0).sum())
    market = int((s.market[1] >= 0).sum())
    hand = 1 if s.ctl[K.C_HAND_TOKEN] >= 0 and s.ctl[K.C_PHASE] == K.PHASE_TOKEN else 0
    return int(s.bag.sum()) + placed + market + hand


def play_random(g: CascadiaGame, s, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    while not g.is_over(s):
        legal = g.legal_actions(s)
        g.step(s, int(legal[rng.integers(len(legal))]))


@pytest.mark.parametrize("players, tiles", [(1, 43), (2, 43), (3, 63), (4, 83)])
def test_setup_by_player_count(players, tiles):
    g = CascadiaGame(players=players)
    s = g.new_game(11)
    assert s.ctl[K.C_STACK_LEN] == tiles and s.ctl[K.C_STACK_POS] == 4
    assert (s.market >= 0).all()
    assert s.bag.sum() == 96 and tokens_in_play(s) == 100
    assert s.ctl[K.C_SUPPLY] == 25 and (s.pinfo[:, K.P_NATURE] == 0).all()
    starters = {int(s.tiles[p, cell_of(0, 0)]) for p in range(players)}
    assert len(starters) == players  # a different starter tile each
    assert (s.pinfo[:, K.P_NCELLS] == 3).all()
    assert len(set(s.stack.tolist())) == 85


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_every_player_has_exactly_20_turns(players):
    g = CascadiaGame(players=players)
    for seed in range(3):
        s = g.new_game(seed)
        play_random(g, s, seed)
        assert s.pinfo[:, K.P_TURNS].tolist() == [20] * players
        assert s.ctl[K.C_TURN] == 20 * players
        assert (s.pinfo[:, K.P_NCELLS] == 23).all()
        left = s.ctl[K.C_STACK_LEN] - s.ctl[K.C_STACK_POS]
        assert left == (1 if players == 1 else 0)  # the stack could not refill
        assert tokens_in_play(s) == (80 if players == 1 else 100)  # solo removes one token a turn


def test_four_identical_are_redrawn_and_returned():
    g = CascadiaGame(players=2)
    s = g.new_game(1)
    s.bag[:] = [18, 20, 20, 20, 18]
    s.market[1, :] = 0
    before = int(s.bag.sum()) + 4
    K.resolve_overpopulation(s.market, s.bag, s.ctl, s.rng)
    assert len(set(s.market[1].tolist())) > 1
    assert int(s.bag.sum()) + 4 == before


def test_four_identical_repeat_until_mixed():
    repeated = 0
    for seed in range(40):
        g = CascadiaGame(players=2)
        s = g.new_game(seed)
        s.bag[:] = [30, 0, 0, 0, 2]
        s.market[1, :] = 0
        s.ctl[K.C_OVERPOP] = 0
        K.resolve_overpopulation(s.market, s.bag, s.ctl, s.rng)
        assert int(s.bag.sum()) + 4 == 36  # everything set aside went back
        mixed = len(set(s.market[1].tolist())) > 1
        assert mixed or s.ctl[K.C_OVERPOP] == 8  # stops only when mixed or the bag ran below four
        repeated += s.ctl[K.C_OVERPOP] >= 2
    assert repeated > 0


def test_no_market_decision_ever_shows_four_identical():
    g = CascadiaGame(players=4)
    s = g.new_game(2)
    rng = np.random.default_rng(2)
    while not g.is_over(s):
        if g.phase(s) == "market" and s.ctl[K.C_ACTED] == 0:
            assert len(set(s.market[1].tolist())) > 1
        legal = g.legal_actions(s)
        g.step(s, int(legal[rng.integers(len(legal))]))


def start_with_three(g, s):
    s.market[1, :] = [1, 1, 1, 0]
    s.ctl[K.C_ACTED] = 0
    s.ctl[K.C_THREE_USED] = 0


def test_three_identical_optional_redraw_once_per_turn():
    g = CascadiaGame(players=2)
    s = g.new_game(3)
    start_with_three(g, s)
    assert K.A_THREE in g.legal_actions(s)
    total = tokens_in_play(s)
    bear_slot = s.market[1, 3]
    g.step(s, K.A_THREE)
    assert s.market[1, 3] == bear_slot  # only the three are redrawn
    assert tokens_in_play(s) == total
    s.market[1, :] = [2, 2, 2, 4]  # three identical again: no second free redraw this turn
    assert K.A_THREE not in g.legal_actions(s)
    with pytest.raises(IllegalActionError, match="already used"):
        g.step(s, K.A_THREE)
    # it is optional: taking a pair is legal too, and the next turn offers it again
    s2 = g.new_game(3)
    start_with_three(g, s2)
    assert K.A_PAIR in g.legal_actions(s2)


def test_three_redraw_only_at_the_start_of_the_turn():
    g = CascadiaGame(players=2)
    s = g.new_game(4)
    start_with_three(g, s)
    s.pinfo[0, K.P_NATURE] = 1
    g.step(s, K.A_REDRAW + 8)  # a nature-token redraw first
    s.market[1, :] = [1, 1, 1, 0]
    with pytest.raises(IllegalActionError, match="start of the turn"):
        g.step(s, K.A_THREE)


def test_nature_tokens_any_number_of_uses():
    g = CascadiaGame(players=2)
    s = g.new_game(5)
    s.pinfo[0, K.P_NATURE] = 3
    s.ctl[K.C_SUPPLY] = 22
    keep = s.market[1, [0, 2, 3]].copy()
    g.step(s, K.A_REDRAW + 0b0010)  # redraw only the token of slot 1
    assert (s.market[1, [0, 2, 3]] == keep).all()
    g.step(s, K.A_REDRAW + 0b1111)
    assert s.pinfo[0, K.P_NATURE] == 1 and s.ctl[K.C_SUPPLY] == 24
    tile3, token0 = int(s.market[0, 3]), int(s.market[1, 0])
    g.step(s, K.A_FREE + 4 * 3 + 0)  # any tile with any token
    assert s.ctl[K.C_HAND_TILE] == tile3 and s.ctl[K.C_HAND_TOKEN] == token0
    assert s.pinfo[0, K.P_NATURE] == 0 and s.ctl[K.C_SUPPLY] == 25
    assert s.market[0, 3] == -1 and s.market[1, 0] == -1 and s.market[0, 0] >= 0
    g.step(s, int(g.legal_actions(s)[0]))
    g.step(s, K.A_RETURN)
    assert (s.market >= 0).all()  # both gaps refilled, nothing slid
    assert s.ctl[K.C_CUR] == 1


def test_no_nature_token_to_spend():
    g = CascadiaGame(players=2)
    s = g.new_game(6)
    for action in (K.A_FREE + 1, K.A_REDRAW + 3):
        with pytest.raises(IllegalActionError, match="no nature token"):
            g.step(s, action)


def test_keystone_with_matching_animal_earns_a_nature_token():
    g = CascadiaGame(players=2)
    s = g.new_game(7)
    p = int(s.ctl[K.C_CUR])
    # the starter keystone hex at (0, 0) shows exactly one animal
    key_animal = int(g.kind_info[s.tiles[p, cell_of(0, 0)], 1])
    s.market[1, 0] = key_animal
    g.step(s, K.A_PAIR)
    g.step(s, int(g.legal_actions(s)[0]))
    g.step(s, K.A_TOKEN + cell_of(0, 0))
    assert s.pinfo[p, K.P_NATURE] == 1 and s.ctl[K.C_SUPPLY] == 24


def test_returning_the_token_puts_it_in_the_bag_and_keeps_the_tile():
    g = CascadiaGame(players=2)
    s = g.new_game(8)
    w = int(s.market[1, 2])
    bag = s.bag.copy()
    g.step(s, K.A_PAIR + 2)
    g.step(s, int(g.legal_actions(s)[0]))
    g.step(s, K.A_RETURN)
    assert s.pinfo[0, K.P_NCELLS] == 4
    # the refill drew one token; the returned one is back
    assert int(s.bag.sum()) == int(bag.sum()) + 1 - 1 and s.bag[w] >= bag[w] - 1


def test_solo_market_discards_farthest_slides_and_refills_two():
    g = CascadiaGame(players=1)
    s = g.new_game(9)
    tiles, tokens = s.market[0].tolist(), s.market[1].tolist()
    pos = int(s.ctl[K.C_STACK_POS])
    g.step(s, K.A_PAIR + 1)
    g.step(s, int(g.legal_actions(s)[0]))
    g.step(s, K.A_RETURN)
    # slot 1 was taken, slot 3 (farthest from the stack) removed; slots 0 and 2 slide right
    assert s.market[0, 2:].tolist() == [tiles[0], tiles[2]]
    assert s.market[0, :2].tolist() == s.stack[pos:pos + 2].tolist()
    assert s.ctl[K.C_STACK_POS] == pos + 2
    if s.ctl[K.C_OVERPOP] == 0:
        assert s.market[1, 2:].tolist() == [tokens[0], tokens[2]]


def test_solo_free_choice_removes_remaining_farthest_tile_and_token_separately():
    g = CascadiaGame(players=1)
    s = g.new_game(10)
    s.pinfo[0, K.P_NATURE] = 1
    tiles, tokens = s.market[0].tolist(), s.market[1].tolist()
    g.step(s, K.A_FREE + 4 * 3 + 0)  # tile from slot 3, token from slot 0
    g.step(s, int(g.legal_actions(s)[0]))
    g.step(s, K.A_RETURN)
    assert s.market[0, 2:].tolist() == [tiles[0], tiles[1]]  # tile 2 was the farthest left
    if s.ctl[K.C_OVERPOP] == 0:
        assert s.market[1, 2:].tolist() == [tokens[1], tokens[2]]  # token 3 removed


def test_tile_must_touch_by_an_edge_and_not_overlap():
    g = CascadiaGame(players=2)
    s = g.new_game(12)
    g.step(s, K.A_PAIR)
    hand = int(s.ctl[K.C_HAND_TILE])
    with pytest.raises(IllegalActionError, match="occupied hex"):
        g.step(s, K.A_TILE + 6 * cell_of(0, 0))
    with pytest.raises(IllegalActionError, match="does not touch"):
        g.step(s, K.A_TILE + 6 * cell_of(3, 3))
    legal = g.legal_actions(s)
    assert len(legal) == 9 * (1 if g.kind_info[hand, 1] >= 0 else 6)  # the 3-hex starter has 9 neighbours
    with pytest.raises(IllegalActionError, match="wrong phase"):
        g.step(s, K.A_PAIR)


def test_token_on_wrong_animal_or_occupied_hex_is_refused():
    g = CascadiaGame(players=2)
    s = g.new_game(13)
    g.step(s, K.A_PAIR)
    g.step(s, int(g.legal_actions(s)[0]))
    w = int(s.ctl[K.C_HAND_TOKEN])
    wrong = [c for c in s.cells[0, :4] if not (g.kind_info[s.tiles[0, c], 0] >> w) & 1]
    if wrong:
        with pytest.raises(IllegalActionError, match="wrong animal"):
            g.step(s, K.A_TOKEN + int(wrong[0]))
    c = int(s.cells[0, 0])
    s.tokens[0, c] = 0
    with pytest.raises(IllegalActionError, match="occupied hex"):
        g.step(s, K.A_TOKEN + c)
    with pytest.raises(IllegalActionError, match="no tile"):
        g.step(s, K.A_TOKEN + cell_of(5, 5))
    with pytest.raises(IllegalActionError, match="outside the action space"):
        g.step(s, g.num_actions)


@pytest.mark.parametrize("bad", [0, 5, -1, "2", 2.0, True])
def test_players_out_of_range(bad):
    with pytest.raises(ConfigError, match="players"):
        CascadiaGame(players=bad)


def test_bad_option():
    with pytest.raises(ConfigError, match="second_place_tie"):
        CascadiaGame(players=3, second_place_tie="half")


def test_game_over_refuses_actions():
    g = CascadiaGame(players=1)
    s = g.new_game(14)
    play_random(g, s)
    assert g.current_player(s) == -1 and not g.legal_mask(s).any()
    with pytest.raises(IllegalActionError, match="over"):
        g.step(s, 0)


def test_window_holds_every_reachable_position():
    """Decision 7: placed tiles lie within distance 1 + 20 of the origin; the window reaches RADIUS."""
    assert RADIUS >= 22
    for c in range(NEIGHBORS.shape[0]):
        q, r = (int(v) for v in CELL_COORDS[c])
        if hex_distance(q, r) <= 21:
            assert (NEIGHBORS[c] >= 0).all()
    # push one area as far east as possible for 20 turns: the farthest frontier position stays legal
    g = CascadiaGame(players=1)
    s = g.new_game(15)
    while not g.is_over(s):
        phase = g.phase(s)
        legal = g.legal_actions(s)
        if phase == "tile":
            far = max(legal, key=lambda a: (hex_distance(*CELL_COORDS[(a - K.A_TILE) // 6]), -a))
            g.step(s, int(far))
        else:
            g.step(s, int(legal[0]) if phase == "market" else K.A_RETURN)
    assert max(hex_distance(*CELL_COORDS[c]) for c in s.cells[0, :23]) == 21


def test_same_seed_same_game_and_compiled_loop_matches_python_engine():
    for players in (1, 2, 3, 4):
        g = CascadiaGame(players=players)
        a, b = g.new_game(21), g.new_game(21)
        assert all(np.array_equal(x, y) for x, y in zip(vars(a).values(), vars(b).values(), strict=True))
        compiled = g.new_game(21)
        stream = new_stream(21, "agent")
        while not g.is_over(a):
            g.step(a, random_true_index(g.legal_mask(a), stream))
        g.play_random_compiled(compiled, new_stream(21, "agent"))
        for name in ("tiles", "rots", "tokens", "market", "bag", "ctl", "pinfo", "stack"):
            assert np.array_equal(getattr(a, name), getattr(compiled, name)), name
        assert g.returns(a).tolist() == g.returns(compiled).tolist()
    g = CascadiaGame(players=2)
    assert g.new_game(1).stack.tolist() != g.new_game(2).stack.tolist()


def test_clear_used_leaves_the_areas_as_a_full_clear_does():
    """random_games empties a finished deal's areas by touching only its cells (clear_used)."""
    for players in (1, 4):
        g = CascadiaGame(players=players)
        used = g.new_game(5)
        g.play_random_compiled(used, new_stream(5, "agent"))
        full = used.copy()
        K.clear_areas(full.tiles, full.rots, full.edges, full.tokens, full.front, full.cells, full.flist)
        K.clear_used(players, used.tiles, used.rots, used.edges, used.tokens, used.front, used.cells,
                     used.flist, used.pinfo, g.nbr)
        for name in ("tiles", "rots", "edges", "tokens", "front", "cells", "flist"):
            assert np.array_equal(getattr(used, name), getattr(full, name)), name


def test_determinize_resamples_only_the_unseen_future():
    g = CascadiaGame(players=3)
    s = g.new_game(31)
    play = np.random.default_rng(0)
    for _ in range(20):
        legal = g.legal_actions(s)
        g.step(s, int(legal[play.integers(len(legal))]))
    pos = int(s.ctl[K.C_STACK_POS])
    other = s.copy()
    other.stack[pos:] = other.stack[pos:][::-1]  # a different hidden future, same visible position
    other.rng[0] ^= np.uint64(0xABCDEF)
    d1 = g.determinize(s, np.random.default_rng(5))
    d2 = g.determinize(other, np.random.default_rng(5))
    assert np.array_equal(d1.stack, d2.stack) and np.array_equal(d1.rng, d2.rng)  # no leak
    assert np.array_equal(d1.stack[:pos], s.stack[:pos])
    assert sorted(d1.stack[pos:].tolist()) == sorted(s.stack[pos:].tolist())
    for name in ("tiles", "tokens", "market", "bag", "pinfo", "ctl"):
        assert np.array_equal(getattr(d1, name), getattr(s, name))


def test_rollout_returns_from_a_midgame_state():
    g = CascadiaGame(players=4)
    s = g.new_game(41)
    for _ in range(30):
        g.step(s, int(g.legal_actions(s)[0]))
    out = g.rollout_returns(g.determinize(s, np.random.default_rng(0)), seed=3)
    assert out.dtype == np.float64 and out.shape == (4,) and (out > 0).all()
    again = g.rollout_returns(g.determinize(s, np.random.default_rng(0)), seed=3)
    assert out.tolist() == again.tolist()


def test_winners_tie_break_on_nature_tokens():
    g = CascadiaGame(players=2)
    s = g.new_game(0)
    s.tokens[:] = -1
    for name in ("tiles", "rots", "edges", "tokens", "front", "cells", "flist"):
        getattr(s, name)[1] = getattr(s, name)[0]  # two identical areas
    s.pinfo[1] = s.pinfo[0]
    assert g.winners(s) == [0, 1]  # equal totals and tokens: a shared win
    s.tokens[1, s.cells[1, 0]] = 3  # a lone hawk: +2 for seat 1
    s.pinfo[0, K.P_NATURE] = 2  # +2 for seat 0, and more unused nature tokens
    totals = g.score_table(s)[:, K.CAT_TOTAL]
    assert totals[0] == totals[1]
    assert g.winners(s) == [0]


def test_kernels_run_as_plain_python_with_the_same_game():
    """NUMBA_DISABLE_JIT=1 runs the same kernels as Python and plays the same game."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np\nfrom envs.cascadia.game import CascadiaGame\n"
            "g = CascadiaGame(players=2)\ns = g.new_game(17)\n"
            "g.play_random_compiled(s, np.array([99], dtype=np.uint64))\n"
            "print([sh.total for sh in g.scores(s)], int(s.ctl[12]))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         cwd=str(REPO_ROOT))
    assert out.returncode == 0, out.stderr
    g = CascadiaGame(players=2)
    s = g.new_game(17)
    g.play_random_compiled(s, np.array([99], dtype=np.uint64))
    assert out.stdout.strip() == f"{[sh.total for sh in g.scores(s)]} {int(s.ctl[K.C_TURN])}"

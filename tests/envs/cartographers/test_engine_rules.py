"""Cartographers engine: setup, drawing legality, coins, fallback, ruins, Rift Lands, errors."""

from __future__ import annotations

import numpy as np
import pytest

from envs.cartographers import kernels as K
from envs.cartographers.game import CartographersGame, CartographersState
from envs.core.errors import ConfigError, IllegalActionError

_GAMES: dict = {}


# ---- helpers shared with the other engine tests -------------------------------------------------

def game(**options) -> CartographersGame:
    key = tuple(sorted(options.items()))
    if key not in _GAMES:
        _GAMES[key] = CartographersGame(**options)
    return _GAMES[key]


def card(g: CartographersGame, name: str) -> int:
    return g.data.card_names.index(name)


def rc(r: int, c: int) -> int:
    return r * 11 + c


def set_cells(state: CartographersState, player: int, cells, terrain: int) -> None:
    for r, c in cells:
        state.grid[player, rc(r, c)] = terrain


def at_card(g: CartographersGame, state: CartographersState, name: str, ruins: bool = False) -> None:
    """Make ``name`` the explore card every seat now decides on (from seat 0)."""
    state.meta[K.M_CARD] = card(g, name)
    state.meta[K.M_PHASE] = K.PHASE_EXPLORE
    state.meta[K.M_ACTOR] = 0
    state.meta[K.M_TARGET] = 0
    state.meta[K.M_RUINS] = int(ruins)


def deal(g: CartographersGame, state: CartographersState, names: list[str], time: int | None = None) -> None:
    """Stack the deck with ``names`` (in order) and reveal up to the next decision."""
    cards = [card(g, n) for n in names]
    state.deck[:] = -1
    state.deck[: len(cards)] = cards
    state.meta[K.M_POS] = 0
    state.meta[K.M_LEN] = len(cards)
    if time is not None:
        state.meta[K.M_TIME] = time
    K.apply_action(state.arrays(), g.tb, -1)


def legal_cells(g: CartographersGame, state: CartographersState) -> set[frozenset]:
    """Cells of every legal action of the current decision."""
    out = set()
    for a in np.flatnonzero(g.legal_mask(state)):
        out.add(frozenset(g.decode_action(int(a), state)["cells"]))
    return out


def fill_all_but(state: CartographersState, player: int, keep: set, terrain: int = 1) -> None:
    for cell in range(121):
        if divmod(cell, 11) not in keep and state.grid[player, cell] == 0:
            state.grid[player, cell] = terrain


# ---- setup ------------------------------------------------------------------------------------

def test_setup_one_card_per_stack_and_deck():
    g = game()
    stacks_seen = set()
    for seed in range(40):
        s = g.new_game(seed)
        assert sorted(int(c) // 4 for c in s.edicts) == [0, 1, 2, 3]
        stacks_seen.add(tuple(int(c) // 4 for c in s.edicts))
        assert s.meta[K.M_LEN] == 14
        deck = [int(c) for c in s.deck[:14]]
        assert sorted(c for c in deck if c < 13) == list(range(13))
        ambush_in_deck = [c for c in deck if c >= 13]
        assert len(ambush_in_deck) == 1 and ambush_in_deck[0] == s.amb[0]
        assert sorted(s.amb.tolist()) == [13, 14, 15, 16] and s.meta[K.M_AMB_POS] == 1
        assert s.season == 0 and s.grid.shape == (1, 121)
    assert len(stacks_seen) > 5  # decision 1: the stacks go to the edicts in a random order


def test_fixed_order_explicit_cards_and_no_ambush():
    s = game(edict_order="fixed").new_game(3)
    assert [int(c) // 4 for c in s.edicts] == [0, 1, 2, 3]
    g = game(cards=("Greenbough", "Canal Lake", "Wildholds", "Lost Barony"))
    assert g.new_game(1).edicts.tolist() == [1, 4, 8, 13]
    s = game(ambushes=False).new_game(2)
    assert s.meta[K.M_LEN] == 13 and all(c < 13 for c in s.deck[:13])


def test_side_b_starts_with_wasteland():
    g = game(side="B")
    s = g.new_game(0)
    assert (s.grid[0] == K.WASTELAND).sum() == 7


# ---- drawing ----------------------------------------------------------------------------------

def test_explore_legality_reasons():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Fishing Village")  # I4, village or water
    mountain = g.encode_action("place", (1, 0), terrain=0, shape=0, orientation=0)  # (1,0)..(1,3)
    with pytest.raises(IllegalActionError, match=r"cell \(1,3\) is a mountain"):
        g.step(s, mountain)
    offmap = g.encode_action("place", (0, 8), terrain=0, shape=0, orientation=0)
    with pytest.raises(IllegalActionError, match="shape leaves the map"):
        g.step(s, offmap)
    with pytest.raises(IllegalActionError, match="offers 1 shape option"):
        g.step(s, g.encode_action("place", (0, 0), terrain=0, shape=1))
    with pytest.raises(IllegalActionError, match="offers 2 terrain option"):
        g.step(s, g.encode_action("place", (0, 0), terrain=2))
    with pytest.raises(IllegalActionError, match="this shape has 2 distinct orientations"):
        g.step(s, g.encode_action("place", (0, 0), orientation=5))
    with pytest.raises(IllegalActionError, match="only allowed when no offered shape fits"):
        g.step(s, g.encode_action("fallback", (0, 0), terrain=4))
    with pytest.raises(IllegalActionError, match="wrong kind of action"):
        g.step(s, g.encode_action("ambush", (0, 0)))
    with pytest.raises(IllegalActionError, match="outside the action space"):
        g.step(s, K.NUM_ACTIONS)
    # an empty ruins cell may be drawn on: row 1 from (1,4) covers ruins (1,5)
    ok = g.encode_action("place", (1, 4), terrain=1, shape=0, orientation=0)
    g.step(s, ok)
    assert [int(s.grid[0, rc(1, c)]) for c in range(4, 8)] == [K.WATER] * 4


def test_filled_cell_and_wasteland_are_illegal():
    g = game(side="B", cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Fishing Village")
    with pytest.raises(IllegalActionError, match=r"cell \(4,4\) is wasteland"):
        g.step(s, g.encode_action("place", (4, 1), terrain=0))
    set_cells(s, 0, [(0, 2)], K.FOREST)
    with pytest.raises(IllegalActionError, match=r"cell \(0,2\) is a forest"):
        g.step(s, g.encode_action("place", (0, 0), terrain=0))


def test_every_legal_action_is_an_orientation_of_an_offered_shape():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Hamlet")
    placements = legal_cells(g, s)
    # L-tromino (4 orientations) and P-pentomino (8): counted by brute force on map A
    from envs.core.polyomino import all_orientations

    expect = set()
    for shape in g.data.card_shapes[card(g, "Hamlet")]:
        for o in all_orientations(shape):
            for top in range(11):
                for left in range(11):
                    cells = [(top + r, left + c) for r, c in o]
                    if all(r < 11 and c < 11 and s.grid[0, rc(r, c)] == 0 for r, c in cells):
                        expect.add(frozenset(cells))
    assert placements == expect


def test_coin_shape_gives_a_coin_and_big_shape_does_not():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Great River")
    g.step(s, g.encode_action("place", (4, 0), terrain=0, shape=0, orientation=0))
    assert s.coins[0] == 1
    at_card(g, s, "Great River")
    g.step(s, g.encode_action("place", (4, 2), terrain=0, shape=1, orientation=0))
    assert s.coins[0] == 1


def test_mountain_coin_when_fourth_neighbour_fills_once():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    set_cells(s, 0, [(4, 5), (5, 4), (5, 6)], K.FARM)  # around mountain (5,5)
    at_card(g, s, "Rift Lands")
    g.step(s, g.encode_action("place", (7, 7), terrain=0))  # elsewhere: no coin
    assert s.coins[0] == 0
    at_card(g, s, "Rift Lands")
    g.step(s, g.encode_action("place", (6, 5), terrain=4))  # a monster completes it too
    assert s.coins[0] == 1 and s.grid[0, rc(6, 5)] == K.MONSTER_T
    at_card(g, s, "Rift Lands")
    g.step(s, g.encode_action("place", (7, 5), terrain=0))
    assert s.coins[0] == 1  # once per mountain


def test_diagonal_neighbours_do_not_count_for_mountain_coin():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    set_cells(s, 0, [(4, 4), (4, 6), (6, 4), (6, 6), (4, 5), (5, 4), (5, 6)], K.FARM)
    assert s.coins[0] == 0
    at_card(g, s, "Rift Lands")
    g.step(s, g.encode_action("place", (6, 5), terrain=0))
    assert s.coins[0] == 1


@pytest.mark.parametrize("cap, expected", [(14, 14), (None, 16)])
def test_coin_cap(cap, expected):
    g = game(cards=(0, 4, 8, 12), coin_cap=cap)
    s = g.new_game(0)
    for i in range(16):
        at_card(g, s, "Farmland")  # domino with a coin
        g.step(s, g.encode_action("place", (3 + 3 * (i // 11), i % 11), terrain=0, shape=0, orientation=0))
    assert s.coins[0] == expected


def test_fallback_only_when_no_option_fits():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    fill_all_but(s, 0, {(0, 0), (0, 2), (10, 10)})
    at_card(g, s, "Orchard")
    mask = g.legal_mask(s)
    legal = np.flatnonzero(mask)
    assert len(legal) == 3 * 5
    assert all(K.FALLBACK_BASE <= a < K.AMBUSH_BASE for a in legal)
    g.step(s, g.encode_action("fallback", (0, 2), terrain=4))  # monster allowed
    # no coin for the 1x1 itself; the 5 mountains (surrounded by the filling) pay one each now
    assert s.grid[0, rc(0, 2)] == K.MONSTER_T and s.coins[0] == 5
    # a 1x1 never fits around the Forgotten Forest diagonal option when two diagonal cells exist
    s = g.new_game(0)
    fill_all_but(s, 0, {(0, 0), (1, 1), (5, 9)})
    at_card(g, s, "Forgotten Forest")
    legal = np.flatnonzero(g.legal_mask(s))
    assert len(legal) == 1 and g.decode_action(int(legal[0]), s)["cells"] == [(0, 0), (1, 1)]


def test_rift_lands_any_of_five_terrains_one_cell():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Rift Lands")
    legal = np.flatnonzero(g.legal_mask(s))
    empties = int((s.grid[0] == 0).sum())
    assert len(legal) == 5 * empties
    terrains = {g.decode_action(int(a), s)["terrain"] for a in legal}
    assert terrains == {"forest", "village", "farm", "water", "monster"}


def test_ruins_constraint_requires_an_empty_ruins_cell():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Fishing Village", ruins=True)
    placements = legal_cells(g, s)
    ruins = {divmod(int(i), 11) for i in np.flatnonzero(g.tb.ruins)}
    assert placements and all(p & ruins for p in placements)
    with pytest.raises(IllegalActionError, match="ruins constraint: must cover an empty ruins cell"):
        g.step(s, g.encode_action("place", (0, 0), terrain=0))
    # a drawn-on ruins cell no longer satisfies the constraint
    set_cells(s, 0, [(1, 5)], K.FARM)
    assert not any((1, 5) in p for p in legal_cells(g, s))


def test_ruins_fallback_when_no_empty_ruins_left_any_cell():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    for cell in np.flatnonzero(g.tb.ruins):
        s.grid[0, cell] = K.FOREST
    at_card(g, s, "Rift Lands", ruins=True)
    legal = np.flatnonzero(g.legal_mask(s))
    assert len(legal) == 5 * int((s.grid[0] == 0).sum())
    assert all(K.FALLBACK_BASE <= a < K.AMBUSH_BASE for a in legal)
    with pytest.raises(IllegalActionError, match="no empty ruins cell is left"):
        g.step(s, g.encode_action("place", (0, 0), terrain=0))


def test_ruins_fallback_when_shapes_cannot_reach_ruins():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    ruins = {divmod(int(i), 11) for i in np.flatnonzero(g.tb.ruins)}
    fill_all_but(s, 0, ruins | {(0, 0), (0, 1), (0, 2), (0, 3)})
    at_card(g, s, "Fishing Village", ruins=True)  # I4 fits at the top row, but not on a ruins cell
    legal = np.flatnonzero(g.legal_mask(s))
    assert all(K.FALLBACK_BASE <= a < K.AMBUSH_BASE for a in legal)
    assert len(legal) == 5 * (len(ruins) + 4)  # any empty cell, not only ruins


def test_two_ruins_then_ambush_carry_the_constraint_to_the_next_explore():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    deal(g, s, ["Temple Ruins", "Outpost Ruins", "Goblin Attack", "Fishing Village", "Orchard"], time=0)
    # solo: the ambush was drawn automatically, the constraint survives it
    assert s.current_card == card(g, "Fishing Village") and s.meta[K.M_RUINS] == 1
    assert (s.grid[0] == K.MONSTER_T).sum() == 3
    ruins = {divmod(int(i), 11) for i in np.flatnonzero(g.tb.ruins)}
    assert all(p & ruins for p in legal_cells(g, s))
    g.step(s, int(np.flatnonzero(g.legal_mask(s))[0]))
    assert s.current_card == card(g, "Orchard") and s.meta[K.M_RUINS] == 0  # one constraint only


def test_game_over_and_bad_options():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    g.play_random(s, 0)
    with pytest.raises(IllegalActionError, match="the game is over"):
        g.step(s, 0)
    assert g.current_player(s) == -1
    for bad in [dict(players=0), dict(players=7), dict(players="2"), dict(side="C"),
                dict(edict_order="alphabetical"), dict(coin_cap=-1), dict(ambushes="yes"),
                dict(cards=("Greenbough",)), dict(cards=(1, 1, 2, 3))]:
        with pytest.raises(ConfigError):
            CartographersGame(**bad)
    with pytest.raises(ConfigError, match="unknown map side 'C'; known sides: A, B"):
        CartographersGame(side="C")
    with pytest.raises(ConfigError, match="unknown scoring card 'Dragon'; known cards: Sentinel Wood"):
        CartographersGame(cards=("Dragon", 1, 2, 3))
    with pytest.raises(ConfigError, match="players must be an integer from 1 to 6"):
        CartographersGame(players=9)
    with pytest.raises(ConfigError, match="seed"):
        g.new_game(-1)


def test_codec_round_trip():
    g = game()
    for kind, kwargs in [("place", dict(terrain=3, shape=1, orientation=7)), ("fallback", dict(terrain=4)),
                         ("ambush", dict(orientation=3)), ("ambush_1x1", {})]:
        a = g.encode_action(kind, (6, 9), **kwargs)
        f = g.decode_action(a)
        assert f["kind"] == kind
        assert f.get("anchor", f.get("cells", [None])[0]) == (6, 9)
        if "orientation" in kwargs:
            assert f["orientation"] == kwargs["orientation"]
    assert g.num_actions == K.NUM_ACTIONS == 11374


def test_remembered_mask_and_scores_follow_the_state():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    at_card(g, s, "Rift Lands")
    first = g.legal_mask(s)
    first[:] = False  # callers get copies
    assert g.legal_mask(s).sum() == 5 * int((s.grid[0] == 0).sum())
    set_cells(s, 0, [(0, 0)], K.FOREST)
    assert not g.legal_mask(s)[g.encode_action("place", (0, 0), terrain=0)]
    assert g.scores(s)[0].extra["coins"] == 0
    s.coins[0] = 4
    assert g.scores(s)[0].extra["coins"] == 4
    s.record[0, 0, K.R_TOTAL] = 9
    assert g.scores(s)[0].total == 9


def test_observation_layout():
    g = game(players=2, cards=(0, 4, 8, 12))
    s = g.new_game(0)
    obs = g.observation(s, 1)
    assert obs.shape == g.observation_shape() == (K.OBS_SIZE,) and obs.dtype == np.float32
    planes = obs[: 8 * 121].reshape(8, 121)
    assert np.array_equal(planes.argmax(axis=0), s.grid[1]) and planes.sum() == 121
    assert np.array_equal(obs[8 * 121: 9 * 121].astype(bool), g.tb.ruins)
    off = 17 * 121
    assert obs[off + s.current_card] == 1 and obs[off: off + 17].sum() == 1
    edicts = obs[-64:].reshape(4, 16)
    assert edicts.argmax(axis=1).tolist() == [0, 4, 8, 12]
    names = [n for n, _, _ in K.OBS_LAYOUT]
    assert len(names) == 7 and K.OBS_LAYOUT[-1][1] + K.OBS_LAYOUT[-1][2] == K.OBS_SIZE


def test_render_shows_terrain_ruins_and_card():
    g = game(cards=(0, 4, 8, 12))
    s = g.new_game(0)
    set_cells(s, 0, [(0, 0)], K.FOREST)
    set_cells(s, 0, [(1, 5)], K.FARM)  # on a ruins cell: lowercase
    text = g.render_ansi(s)
    rows = text.splitlines()
    grid_rows = [r for r in rows if r[:3].strip().isdigit()]
    assert grid_rows[0].split()[1] == "F" and grid_rows[1].split()[1 + 5] == "a"
    assert grid_rows[2].split()[1 + 1] == "r" and grid_rows[1].split()[1 + 3] == "M"
    assert g.card_name(s.current_card) in text and "Sentinel Wood" in text
    img = g.render_rgb(s)
    assert img.shape == (176, 176, 3) and img.dtype == np.uint8

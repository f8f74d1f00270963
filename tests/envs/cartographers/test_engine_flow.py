"""Cartographers engine: seasons, scoring, reshuffle, ambushes (solo and multiplayer), game end."""

from __future__ import annotations

import numpy as np
import pytest

from envs.cartographers import kernels as K
from tests.envs.cartographers.test_engine_rules import at_card, card, deal, fill_all_but, game, rc, set_cells

CARDS = ("Wildholds", "Sentinel Wood", "Greenbough", "Canal Lake")  # edicts A, B, C, D


def first_legal(g, s) -> int:
    return int(np.flatnonzero(g.legal_mask(s))[0])


# ---- seasons ----------------------------------------------------------------------------------

@pytest.mark.parametrize("season, threshold", [(0, 8), (1, 8), (2, 7), (3, 6)])
def test_season_ends_when_time_reaches_threshold(season, threshold):
    g = game(cards=CARDS)
    s = g.new_game(0)
    s.meta[K.M_SEASON] = season
    # time-0 cards (ruins, Rift Lands) stay in the count but add nothing
    deal(g, s, ["Rift Lands", "Temple Ruins", "Orchard", "Great River", "Marshlands", "Farmland"],
         time=threshold - 3)
    assert s.current_card == card(g, "Rift Lands") and s.season_time == threshold - 3
    g.step(s, first_legal(g, s))  # ruins (0) and Orchard (+2) are revealed
    assert s.season == season and s.current_card == card(g, "Orchard")
    assert s.season_time == threshold - 1
    g.step(s, first_legal(g, s))  # Great River (+1) is revealed: the limit is reached ...
    assert s.season == season and s.season_time == threshold and s.current_card == card(g, "Great River")
    g.step(s, first_legal(g, s))  # ... and the season ends once it is drawn
    assert s.season == season + 1
    if season == 3:
        assert g.is_over(s)
    else:
        assert s.season_time == g.data.card_time[s.current_card]  # the new season's first card


def test_overshoot_is_not_carried_over():
    g = game(cards=CARDS)
    s = g.new_game(0)
    deal(g, s, ["Orchard", "Marshlands"], time=7)
    g.step(s, first_legal(g, s))  # 7 + 2 = 9 >= 8
    assert s.season == 1
    assert s.season_time == g.data.card_time[s.current_card]


def worked_example_position(g):
    """Seed example: edicts 8 and 5, 2 coins, 4 empty cells touching monsters -> 11."""
    s = g.new_game(0)
    set_cells(s, 0, [(3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (4, 3)], K.VILLAGE)  # Wildholds: 8
    set_cells(s, 0, [(0, 0), (0, 1), (0, 2), (10, 4), (6, 10)], K.FOREST)  # Sentinel Wood: 5
    set_cells(s, 0, [(7, 7)], K.MONSTER_T)  # 4 empty neighbours
    s.coins[0] = 2
    return s


def test_seed_worked_example_spring_is_11():
    g = game(cards=CARDS)
    s = worked_example_position(g)
    assert K.score_card(8, s.grid[0], g.tb.ruins) == 8
    assert K.score_card(0, s.grid[0], g.tb.ruins) == 5
    assert K.monster_penalty(s.grid[0]) == 4
    K.score_season(s.arrays(), g.tb)
    assert s.record[0, 0].tolist() == [8, 5, 2, 4, 11]
    sheet = g.scores(s)[0]
    assert (sheet.categories["spring_A"], sheet.categories["spring_B"], sheet.categories["spring_coins"],
            sheet.categories["spring_monsters"], sheet.categories["spring_total"]) == (8, 5, 2, -4, 11)


def test_monster_penalty_counts_each_empty_cell_once():
    g = game(cards=CARDS)
    s = g.new_game(0)
    set_cells(s, 0, [(7, 7), (7, 9)], K.MONSTER_T)  # (7,8) touches both: counted once
    assert K.monster_penalty(s.grid[0]) == 7
    set_cells(s, 0, [(6, 7)], K.FOREST)  # a filled neighbour is no longer empty
    assert K.monster_penalty(s.grid[0]) == 6
    set_cells(s, 0, [(8, 8)], K.MONSTER_T)  # diagonal to both: adds its own empties only
    assert K.monster_penalty(s.grid[0]) == 6 + 1  # only (9,8) is new


def test_season_scoring_through_the_flow_uses_the_edict_pair():
    g = game(cards=CARDS)
    s = worked_example_position(g)
    s.meta[K.M_SEASON] = 1  # summer: edicts B (Sentinel Wood) and C (Greenbough)
    deal(g, s, ["Great River", "Orchard"], time=7)
    g.step(s, g.encode_action("place", (8, 10), terrain=0, shape=0, orientation=0))  # +1 coin, 3 water
    grid = s.grid[0]
    greenbough = K.score_card(1, grid, g.tb.ruins)
    assert s.record[0, 1].tolist() == [5, greenbough, 3, 4, 5 + greenbough + 3 - 4]


def test_final_score_is_the_sum_of_seasons_and_solo_evaluation():
    g = game(cards=CARDS)
    s = g.new_game(0)
    s.record[0, :, K.R_TOTAL] = [11, 17, 24, 19]
    sheet = g.scores(s)[0]
    assert sheet.total == 71
    threshold = 16 + 25 + 22 + 24
    assert g.solo_threshold(s) == sheet.extra["threshold"] == threshold
    assert g.evaluation(s) == sheet.extra["evaluation"] == 71 - threshold
    # the seed's example: 71 - 60 = 11 evaluation points
    assert g.data.title_for(71 - 60) == "Journeyman Topographer"
    assert sheet.extra["title"] == g.data.title_for(71 - threshold)


# ---- reshuffle --------------------------------------------------------------------------------

def test_reshuffle_keeps_unrevealed_ambush_drops_resolved_adds_one():
    g = game(cards=CARDS)
    s = g.new_game(0)
    pile_next = int(s.amb[1])
    resolved = int(s.amb[0])
    others = [c for c in (13, 14, 15, 16) if c not in (resolved, pile_next)]
    unrevealed = others[0]
    names = [g.card_name(resolved), "Orchard", "Marshlands", "Homestead", "Treetop Village",
             g.card_name(unrevealed), "Farmland"]
    deal(g, s, names, time=0)  # solo: the first ambush resolves by itself
    for _ in range(4):
        g.step(s, first_legal(g, s))
    assert s.season == 1
    deck = [int(c) for c in s.deck[: s.meta[K.M_LEN]]]
    assert sorted(c for c in deck if c < 13) == list(range(13))
    assert sorted(c for c in deck if c >= 13) == sorted([unrevealed, pile_next])
    assert resolved not in deck and s.meta[K.M_AMB_POS] == 2


def test_no_ambushes_in_the_learning_game():
    g = game(cards=CARDS, ambushes=False)
    s = g.new_game(1)
    while s.season < 2:
        g.step(s, first_legal(g, s))
    assert s.meta[K.M_LEN] == 13 and all(0 <= c < 13 for c in s.deck[:13])


# ---- solo ambush (decision 9) -------------------------------------------------------------------

def solo_cells(g, grid, name):
    cells = K.solo_ambush_placement(grid, card(g, name) - 13, g.tb)
    if cells < 0:
        return None
    pl = g.tb.pl_cells[cells]
    return sorted(divmod(int(c), 11) for c in pl[: pl[7]])


@pytest.mark.parametrize("name, expected", [
    ("Gnoll Raid", [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]),  # top-left, heading south
    ("Bugbear Assault", [(0, 8), (0, 10), (1, 8), (1, 10)]),  # top-right, heading south
    ("Kobold Onslaught", [(8, 0), (9, 0), (9, 1), (10, 0)]),  # bottom-left, heading north
    ("Goblin Attack", [(8, 8), (9, 9), (10, 10)]),  # bottom-right, heading north
])
def test_solo_ambush_on_an_empty_map_starts_at_the_card_corner(name, expected):
    g = game(cards=CARDS)
    assert solo_cells(g, g.new_game(0).grid[0], name) == expected


def test_solo_ambush_walks_the_ring_in_the_arrow_direction():
    g = game(cards=CARDS)
    grid = g.new_game(0).grid[0].copy()
    grid[rc(0, 0)] = K.FOREST  # Gnoll's corner blocked: next along the left edge going south
    assert solo_cells(g, grid, "Gnoll Raid") == [(1, 0), (1, 1), (2, 0), (3, 0), (3, 1)]
    grid = g.new_game(0).grid[0].copy()
    grid[rc(10, 10)] = K.FOREST  # Goblin (counterclockwise from bottom-right) moves up the right edge
    assert solo_cells(g, grid, "Goblin Attack") == [(7, 8), (8, 9), (9, 10)]


def test_solo_ambush_goes_inward_when_the_outer_ring_is_blocked():
    g = game(cards=CARDS)
    grid = g.new_game(0).grid[0].copy()
    for cell in range(121):
        r, c = divmod(cell, 11)
        if min(r, c, 10 - r, 10 - c) == 0:
            grid[cell] = K.FOREST
    assert solo_cells(g, grid, "Goblin Attack") == [(7, 7), (8, 8), (9, 9)]
    assert solo_cells(g, grid, "Gnoll Raid") == [(1, 1), (1, 2), (2, 1), (3, 1), (3, 2)]
    # the public helper returns the cells as flat indices
    assert sorted(K.solo_ambush_cells(grid, 0).tolist()) == [rc(7, 7), rc(8, 8), rc(9, 9)]


def test_solo_ambush_is_ignored_when_impossible():
    g = game(cards=CARDS)
    s = g.new_game(0)
    fill_all_but(s, 0, {(0, 0), (5, 9), (10, 10), (9, 9)})  # no 3-diagonal, no other shape fits
    for name in ("Goblin Attack", "Bugbear Assault", "Kobold Onslaught", "Gnoll Raid"):
        assert solo_cells(g, s.grid[0], name) is None
        assert K.solo_ambush_cells(s.grid[0], card(g, name) - 13).shape == (0,)
    before = s.grid.copy()
    deal(g, s, ["Goblin Attack", "Rift Lands", "Orchard"], time=0)
    assert np.array_equal(s.grid, before)  # no 1x1 monster in solo
    assert s.current_card == card(g, "Rift Lands")


def test_solo_ambush_through_the_flow_draws_the_monster():
    g = game(cards=CARDS)
    s = g.new_game(0)
    deal(g, s, ["Bugbear Assault", "Orchard"], time=0)
    assert sorted(divmod(int(c), 11) for c in np.flatnonzero(s.grid[0] == K.MONSTER_T)) == \
        [(0, 8), (0, 10), (1, 8), (1, 10)]
    assert s.current_card == card(g, "Orchard") and g.current_player(s) == 0


# ---- multiplayer ambush (decision 8) -------------------------------------------------------------

@pytest.mark.parametrize("players, name, targets", [
    (2, "Bugbear Assault", [1, 0]), (2, "Goblin Attack", [1, 0]),
    (3, "Bugbear Assault", [2, 0, 1]), (3, "Goblin Attack", [1, 2, 0]),
    (4, "Kobold Onslaught", [3, 0, 1, 2]), (4, "Gnoll Raid", [1, 2, 3, 0]),
])
def test_multiplayer_ambush_each_seat_draws_on_its_neighbours_map(players, name, targets):
    g = game(players=players, cards=CARDS)
    s = g.new_game(0)
    deal(g, s, [name, "Orchard"], time=0)
    seen = []
    for drawer in range(players):
        assert s.meta[K.M_PHASE] == K.PHASE_AMBUSH and g.current_player(s) == drawer
        target = int(s.meta[K.M_TARGET])
        seen.append(target)
        legal = np.flatnonzero(g.legal_mask(s))
        assert all(K.AMBUSH_BASE <= a < K.AMBUSH_FALLBACK_BASE for a in legal)
        a = int(legal[len(legal) // 2])
        cells = g.decode_action(a, s)["cells"]
        g.step(s, a)
        assert all(s.grid[target, rc(r, c)] == K.MONSTER_T for r, c in cells)
    assert seen == targets
    assert [int((s.grid[p] == K.MONSTER_T).sum()) for p in range(players)] == \
        [len(g.data.card_shapes[card(g, name)][0])] * players
    assert s.current_card == card(g, "Orchard") and s.meta[K.M_PHASE] == K.PHASE_EXPLORE


def test_multiplayer_ambush_fallback_single_monster_cell_and_mountain_coin_for_owner():
    g = game(players=2, cards=CARDS)
    s = g.new_game(0)
    fill_all_but(s, 1, {(0, 0), (6, 5)})  # the opponent's map: only isolated cells remain
    s.mtn_done[1, :] = True
    s.mtn_done[1, 2] = False  # mountain (5,5) still open; (6,5) is its last empty neighbour
    coins_before = int(s.coins[1])
    deal(g, s, ["Goblin Attack", "Orchard"], time=0)
    assert s.meta[K.M_TARGET] == 1
    legal = np.flatnonzero(g.legal_mask(s))
    assert sorted(int(a) - K.AMBUSH_FALLBACK_BASE for a in legal) == [rc(0, 0), rc(6, 5)]
    g.step(s, K.AMBUSH_FALLBACK_BASE + rc(6, 5))
    assert s.grid[1, rc(6, 5)] == K.MONSTER_T and s.coins[1] == coins_before + 1 and s.coins[0] == 0


def test_multiplayer_explore_each_seat_decides_on_its_own_map():
    g = game(players=3, cards=CARDS)
    s = g.new_game(0)
    at_card(g, s, "Rift Lands")
    for p in range(3):
        assert g.current_player(s) == p
        g.step(s, g.encode_action("place", (0, p), terrain=p))
    assert [int(s.grid[p, rc(0, p)]) for p in range(3)] == [K.FOREST, K.VILLAGE, K.FARM]
    assert int((s.grid != g.tb.base).sum()) == 3


# ---- end of game ------------------------------------------------------------------------------

def test_tie_break_fewer_monster_points_then_shared():
    g = game(players=3, cards=CARDS)
    s = g.new_game(0)
    s.record[:, :, K.R_TOTAL] = [[10, 10, 10, 10], [15, 5, 10, 10], [5, 5, 5, 5]]
    s.record[:, :, K.R_MONSTERS] = [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]]
    assert g.winners(s) == [1]
    s.record[1, 0, K.R_MONSTERS] = 1
    assert g.winners(s) == [0, 1]
    assert g.scores(s)[1].extra["monsters_lost"] == 2


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_every_player_count_plays_to_the_end(players):
    g = game(players=players)
    s = g.new_game(players)
    rng = np.random.default_rng(players)
    steps = 0
    while not g.is_over(s):
        assert g.current_player(s) == s.meta[K.M_ACTOR]
        legal = np.flatnonzero(g.legal_mask(s))
        g.step(s, int(rng.choice(legal)))
        steps += 1
    sheets = g.scores(s)
    assert len(sheets) == players and s.season == 4 and steps >= 4 * players
    for sheet in sheets:
        assert sheet.total == sum(sheet.categories[f"{n}_total"] for n in g.data.season_names)
        assert sheet.extra["seasons_scored"] == 4
    assert 1 <= len(g.winners(s)) <= players
    assert g.legal_mask(s).sum() == 0
    assert g.observation(s, 0).shape == g.observation_shape()
    assert "season over" in g.render_ansi(s)
    assert g.render_rgb(s).shape == (176, 176, 3)


def test_multiplayer_ruins_then_ambush_carries_the_constraint():
    g = game(players=2, cards=CARDS)
    s = g.new_game(0)
    deal(g, s, ["Outpost Ruins", "Kobold Onslaught", "Hamlet", "Orchard"], time=0)
    assert s.meta[K.M_PHASE] == K.PHASE_AMBUSH and s.meta[K.M_RUINS] == 1
    ruins = {divmod(int(i), 11) for i in np.flatnonzero(g.tb.ruins)}
    # the monster need not cover ruins: some legal ambush placement avoids them
    cells = [frozenset(g.decode_action(int(a), s)["cells"]) for a in np.flatnonzero(g.legal_mask(s))]
    assert any(not (c & ruins) for c in cells)
    g.step(s, first_legal(g, s))
    g.step(s, first_legal(g, s))
    assert s.current_card == card(g, "Hamlet") and s.meta[K.M_RUINS] == 1
    for _ in range(2):
        placements = [frozenset(g.decode_action(int(a), s)["cells"]) for a in np.flatnonzero(g.legal_mask(s))]
        assert placements and all(p & ruins for p in placements)
        g.step(s, first_legal(g, s))
    assert s.current_card == card(g, "Orchard") and s.meta[K.M_RUINS] == 0


@pytest.mark.parametrize("players", [1, 3])
def test_mask_agrees_with_check_action_on_every_action(players):
    g = game(players=players)
    s = g.new_game(21)
    rng = np.random.default_rng(1)
    for _ in range(12):
        mask = g.legal_mask(s)
        legal_by_check = np.array([K.check_action(s.arrays(), g.tb, a) == K.OK for a in range(K.NUM_ACTIONS)])
        assert np.array_equal(mask, legal_by_check)
        g.step(s, int(rng.choice(np.flatnonzero(mask))))
        if g.is_over(s):
            break

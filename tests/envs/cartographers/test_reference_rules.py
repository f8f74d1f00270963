"""Reference rules other than the cards: seasons, monsters, mountains, drawing, solo ambush.

Expected values are counted by hand from seed 000 and the rules decisions.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.cartographers import reference as ref
from envs.cartographers.reference import map_from_text

SIDE_A_MOUNTAINS = [(1, 3), (2, 8), (5, 5), (8, 2), (9, 7)]
SIDE_A_RUINS = [(1, 5), (2, 1), (2, 9), (8, 1), (8, 9), (9, 5)]

DOMINO = [(0, 0), (1, 0)]
I3 = [(0, 0), (1, 0), (2, 0)]
PLUS = [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)]
DIAGONAL_PAIR = [(0, 0), (1, 1)]
L_TETROMINO = [(0, 0), (0, 1), (0, 2), (1, 2)]
MONOMINO = [(0, 0)]

# the four ambush cards: shape as printed, solo corner, arrow
GOBLIN = ([(0, 0), (1, 1), (2, 2)], "bottom_right", "counterclockwise")
BUGBEAR = ([(0, 0), (0, 2), (1, 0), (1, 2)], "top_right", "clockwise")
KOBOLD = ([(0, 0), (1, 0), (1, 1), (2, 0)], "bottom_left", "clockwise")
GNOLL = ([(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)], "top_left", "counterclockwise")
AMBUSHES = {"goblin": GOBLIN, "bugbear": BUGBEAR, "kobold": KOBOLD, "gnoll": GNOLL}


def side_a() -> tuple[np.ndarray, np.ndarray]:
    grid = np.zeros((11, 11), np.int8)
    ruins = np.zeros((11, 11), bool)
    for r, c in SIDE_A_MOUNTAINS:
        grid[r, c] = ref.MOUNTAIN
    for r, c in SIDE_A_RUINS:
        ruins[r, c] = True
    return grid, ruins


def empty_map() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((11, 11), np.int8), np.zeros((11, 11), bool)


# ---- the seed's worked examples --------------------------------------------------------------

def spring_position() -> tuple[np.ndarray, np.ndarray]:
    """Side A after some drawing: a 6-village cluster (Wildholds 8), Mages Valley 5, one monster
    with 4 empty neighbours."""
    grid, ruins = side_a()
    grid[0, 0:6] = ref.VILLAGE                  # Wildholds: one cluster of 6 -> 8
    grid[4, 5] = grid[5, 4] = ref.WATER         # Mages Valley: 2 waters next to (5,5) -> 4
    grid[5, 6] = ref.FARM                       # and a farm next to it -> 1
    grid[7, 7] = ref.MONSTER                    # (6,7) (8,7) (7,6) (7,8) are empty -> -4
    return grid, ruins


def test_seed_spring_example_8_plus_5_plus_2_minus_4_is_11():
    grid, ruins = spring_position()
    assert ref.score_card(8, grid, ruins) == 8
    assert ref.score_card(5, grid, ruins) == 5
    assert ref.monster_penalty(grid) == 4
    season = ref.season_score(grid, ruins, card_a=8, card_b=5, coins=2)
    assert season == {"card_a": 8, "card_b": 5, "coins": 2, "monsters": -4, "total": 11}


def test_seed_final_score_adds_the_recorded_seasons():
    assert ref.final_score([11, 17, 24, 19]) == 71
    with pytest.raises(ValueError, match="4 seasons"):
        ref.final_score([11, 17, 24])


def test_seed_solo_evaluation_71_minus_60_is_11():
    assert ref.evaluation_points(71, 60) == 11
    assert ref.solo_title(11) == "Journeyman Topographer"


def test_solo_evaluation_with_real_cards():
    # Treetower 17 + Golden Granary 20 + Wildholds 16 + Shieldgate 20 = 73
    assert ref.solo_evaluation(71, [2, 6, 8, 11]) == (-2, "Amateur Assessor")
    assert ref.solo_evaluation(73, [2, 6, 8, 11]) == (0, "Apprentice Surveyor")
    assert ref.solo_evaluation(103, [2, 6, 8, 11]) == (30, "Legendary Cartographer")
    assert ref.solo_evaluation(0, [2, 6, 8, 11])[1] == "Oblivious Inkdrinker"
    with pytest.raises(ValueError, match="4 scoring cards"):
        ref.solo_evaluation(71, [2, 6, 8])


def test_season_edicts_rotate_a_b_c_d():
    assert ref.SEASON_EDICTS == ((0, 1), (1, 2), (2, 3), (3, 0))


# ---- monsters --------------------------------------------------------------------------------

def test_monster_penalty_counts_each_empty_cell_once():
    grid, _ = empty_map()
    grid[5, 5] = ref.MONSTER
    assert ref.monster_penalty(grid) == 4
    grid[5, 7] = ref.MONSTER  # (5,6) touches both monsters: still one point
    assert ref.monster_penalty(grid) == 7
    grid[5, 6] = ref.MONSTER  # a monster is not empty: 3 + 3 + 3 cells around the row of three
    assert ref.monster_penalty(grid) == 8


def test_monster_penalty_ignores_diagonals_and_filled_cells():
    grid, _ = map_from_text("""
    ...........
    ....F......
    ...MXW.....
    ....T......
    """)
    assert ref.monster_penalty(grid) == 0  # the four diagonal cells are empty but do not count


def test_monster_penalty_counts_empty_ruins_and_corners():
    grid, _ = map_from_text("Xr.\nF..")
    assert ref.monster_penalty(grid) == 1  # corner monster: the ruins cell (0,1) only
    grid, _ = map_from_text("X..\n...")
    assert ref.monster_penalty(grid) == 2


# ---- mountains -------------------------------------------------------------------------------

def test_surrounded_mountains_need_four_filled_sides():
    grid, _ = side_a()
    assert ref.surrounded_mountains(grid) == set()
    grid[4, 5], grid[6, 5], grid[5, 4] = ref.FOREST, ref.MONSTER, ref.WASTELAND
    grid[4, 4] = grid[4, 6] = grid[6, 4] = grid[6, 6] = ref.FARM  # diagonals do not matter
    assert ref.surrounded_mountains(grid) == set()
    grid[5, 6] = ref.WATER
    assert ref.surrounded_mountains(grid) == {(5, 5)}


def test_empty_ruins_neighbour_leaves_a_mountain_open():
    grid, _ = map_from_text("""
    ...........
    ..FMr......
    ...F.......
    """)
    grid[0, 3] = ref.VILLAGE
    assert ref.surrounded_mountains(grid) == set()
    grid[1, 4] = ref.FARM
    assert ref.surrounded_mountains(grid) == {(1, 3)}


def test_mountain_on_the_edge_is_never_surrounded():
    grid, _ = map_from_text("FMF\n.F.")
    assert ref.surrounded_mountains(grid) == set()


# ---- drawing ---------------------------------------------------------------------------------

def test_is_legal_placement_basics():
    grid, ruins = side_a()
    grid[3, 3] = ref.FOREST
    grid[4, 4] = ref.WASTELAND
    assert ref.is_legal_placement(grid, [(0, 0), (0, 1)])
    assert ref.is_legal_placement(grid, [(1, 5), (1, 6)])          # an empty ruins cell is allowed
    assert not ref.is_legal_placement(grid, [(1, 2), (1, 3)])      # mountain
    assert not ref.is_legal_placement(grid, [(4, 4)])              # wasteland
    assert not ref.is_legal_placement(grid, [(3, 3), (3, 4)])      # already drawn
    assert not ref.is_legal_placement(grid, [(10, 10), (11, 10)])  # off the map
    assert not ref.is_legal_placement(grid, [(0, -1), (0, 0)])     # off the map
    assert not ref.is_legal_placement(grid, [(0, 0), (0, 0)])      # a repeated cell
    grid[1, 5] = ref.WATER
    assert not ref.is_legal_placement(grid, [(1, 5)])              # a drawn ruins cell is filled


def test_orientations_counts():
    assert len(ref.orientations(MONOMINO)) == 1
    assert len(ref.orientations(DOMINO)) == 2
    assert len(ref.orientations(DIAGONAL_PAIR)) == 2
    assert len(ref.orientations(PLUS)) == 1
    assert len(ref.orientations(L_TETROMINO)) == 8
    assert len(ref.orientations(GNOLL[0])) == 4


def test_legal_placements_on_an_empty_map():
    grid, ruins = empty_map()
    assert len(ref.legal_placements(grid, ruins, MONOMINO, False)) == 121
    assert len(ref.legal_placements(grid, ruins, DOMINO, False)) == 2 * 11 * 10
    assert len(ref.legal_placements(grid, ruins, I3, False)) == 2 * 11 * 9
    assert len(ref.legal_placements(grid, ruins, PLUS, False)) == 9 * 9
    assert len(ref.legal_placements(grid, ruins, DIAGONAL_PAIR, False)) == 2 * 10 * 10
    assert len(ref.legal_placements(grid, ruins, L_TETROMINO, False)) == 8 * 9 * 10


def test_legal_placements_avoid_filled_cells():
    grid, ruins = empty_map()
    grid[5, 5] = ref.MOUNTAIN
    assert len(ref.legal_placements(grid, ruins, DOMINO, False)) == 220 - 4
    assert all((5, 5) not in p for p in ref.legal_placements(grid, ruins, PLUS, False))
    assert len(ref.legal_placements(grid, ruins, PLUS, False)) == 81 - 5  # 5 plus centres cover it


def test_legal_placements_with_the_ruins_constraint():
    grid, ruins = empty_map()
    ruins[5, 5] = True
    assert ref.legal_placements(grid, ruins, MONOMINO, True) == {frozenset({(5, 5)})}
    assert len(ref.legal_placements(grid, ruins, DOMINO, True)) == 4
    assert len(ref.legal_placements(grid, ruins, PLUS, True)) == 5
    ruins[0, 0] = True
    assert len(ref.legal_placements(grid, ruins, DOMINO, True)) == 4 + 2
    grid[5, 5] = ref.FARM  # the ruins at (5,5) is drawn on: it no longer satisfies the constraint
    assert len(ref.legal_placements(grid, ruins, DOMINO, True)) == 2


def test_fallback_only_when_no_offered_shape_fits():
    grid = np.full((11, 11), ref.FOREST, np.int8)
    ruins = np.zeros((11, 11), bool)
    grid[0, 0] = grid[0, 1] = ref.EMPTY
    assert not ref.fallback_allowed(grid, ruins, [I3, DOMINO], False)  # the domino fits
    assert ref.fallback_allowed(grid, ruins, [I3, PLUS], False)
    assert ref.fallback_allowed(grid, ruins, [DOMINO], True)  # no empty ruins cell at all
    ruins[0, 1] = True
    assert not ref.fallback_allowed(grid, ruins, [DOMINO], True)
    assert ref.fallback_allowed(grid, ruins, [I3], True)


def test_fallback_under_ruins_when_the_shape_fits_elsewhere():
    grid, ruins = side_a()
    for r, c in SIDE_A_RUINS:
        grid[r, c] = ref.VILLAGE  # every ruins cell drawn on
    assert not ref.fallback_allowed(grid, ruins, [DOMINO], False)
    assert ref.fallback_allowed(grid, ruins, [DOMINO], True)  # decision 5


# ---- solo ambush (decision 9) ----------------------------------------------------------------

def test_ring_walks():
    walk = ref.ring_walk(0, "top_left", "clockwise")
    assert len(walk) == 40 and len(set(walk)) == 40
    assert walk[:3] == [(0, 0), (0, 1), (0, 2)] and walk[-1] == (1, 0)
    assert ref.ring_walk(0, "top_left", "counterclockwise")[:3] == [(0, 0), (1, 0), (2, 0)]
    assert ref.ring_walk(0, "bottom_right", "counterclockwise")[:2] == [(10, 10), (9, 10)]
    assert ref.ring_walk(0, "top_right", "clockwise")[:2] == [(0, 10), (1, 10)]
    assert ref.ring_walk(0, "bottom_left", "clockwise")[:2] == [(10, 0), (9, 0)]
    assert ref.ring_walk(1, "top_right", "counterclockwise")[:2] == [(1, 9), (1, 8)]
    assert ref.ring_walk(5, "bottom_left", "clockwise") == [(5, 5)]
    for k in range(6):
        assert all(ref.ring_of(r, c) == k for r, c in ref.ring_walk(k, "top_left", "clockwise"))
    with pytest.raises(ValueError, match="corner"):
        ref.ring_walk(0, "left", "clockwise")
    with pytest.raises(ValueError, match="arrow"):
        ref.ring_walk(0, "top_left", "sunwise")


@pytest.mark.parametrize("name, expected", [
    ("goblin", {(8, 8), (9, 9), (10, 10)}),              # holds the corner (10,10), walk position 0
    ("bugbear", {(0, 8), (0, 10), (1, 8), (1, 10)}),     # positions (0, 1, 38): only one holds (0,10)
    ("kobold", {(8, 0), (9, 0), (9, 1), (10, 0)}),       # positions (0, 1, 2) going north
    ("gnoll", {(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)}),  # positions (0, 1, 2, 39)
])
def test_solo_ambush_on_an_empty_map_starts_at_the_card_corner(name, expected):
    shape, corner, arrow = AMBUSHES[name]
    grid, _ = empty_map()
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) == frozenset(expected)


@pytest.mark.parametrize("name, expected", [
    ("goblin", {(7, 7), (8, 8), (9, 9)}),
    ("bugbear", {(1, 7), (1, 9), (2, 7), (2, 9)}),
    ("kobold", {(7, 1), (8, 1), (8, 2), (9, 1)}),
    ("gnoll", {(1, 1), (1, 2), (2, 1), (3, 1), (3, 2)}),
])
def test_solo_ambush_moves_inward_when_the_outer_ring_is_full(name, expected):
    shape, corner, arrow = AMBUSHES[name]
    grid, _ = empty_map()
    for r, c in ref.ring_walk(0, "top_left", "clockwise"):
        grid[r, c] = ref.FOREST
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) == frozenset(expected)


def test_solo_ambush_follows_the_walk_past_blocked_cells():
    shape, corner, arrow = KOBOLD
    grid, _ = empty_map()
    grid[4:11, 0] = ref.FARM  # walk positions 0..6 (rows 10..4 of the left edge) are blocked
    # first free position is 7 = (3,0); the only legal shape through it there is rows 1-3
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) == frozenset(
        {(1, 0), (2, 0), (2, 1), (3, 0)})


def test_solo_ambush_bugbear_blocked_beside_the_corner():
    shape, corner, arrow = BUGBEAR
    grid, _ = empty_map()
    grid[1, 10] = ref.FOREST  # position 1: the two placements holding (0,10) or (1,10) fail
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) == frozenset(
        {(2, 8), (2, 10), (3, 8), (3, 10)})


@pytest.mark.parametrize("name", sorted(AMBUSHES))
def test_solo_ambush_that_fits_nowhere_is_ignored(name):
    shape, corner, arrow = AMBUSHES[name]
    grid = np.full((11, 11), ref.VILLAGE, np.int8)
    grid[5, 5] = grid[3, 7] = grid[7, 3] = ref.EMPTY  # scattered single holes
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) is None


def test_solo_ambush_never_rotates_the_shape():
    # the Goblin is a top-left to bottom-right diagonal: its mirror image does not count
    shape, corner, arrow = GOBLIN
    grid = np.full((11, 11), ref.VILLAGE, np.int8)
    grid[2, 6] = grid[3, 5] = grid[4, 4] = ref.EMPTY  # an anti-diagonal: needs a mirror image
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) is None
    grid[5, 5] = grid[6, 6] = ref.EMPTY  # (4,4) (5,5) (6,6) is the printed diagonal
    assert ref.solo_ambush_placement(grid, shape, corner, arrow) == frozenset({(4, 4), (5, 5), (6, 6)})


def test_map_from_text_letters_and_errors():
    grid, ruins = map_from_text("Fr\npX")
    assert grid[0, 0] == ref.FOREST and grid[1, 0] == ref.FARM and grid[1, 1] == ref.MONSTER
    assert ruins[0, 1] and ruins[1, 0] and grid[0, 1] == ref.EMPTY and ruins.sum() == 2
    with pytest.raises(ValueError, match="unknown map letter"):
        map_from_text("Q")
    with pytest.raises(ValueError, match="more than 11"):
        map_from_text("F" * 12)

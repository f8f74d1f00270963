"""The 16 scoring cards of the plain-Python reference, on hand-built maps.

Every expected value is counted by hand from the map picture and the card text of seed 000 (plus
rules decisions 10-13); the comment next to it shows the count.
Letters: . empty, F forest, V village, P farm, W water, X monster, M mountain, T wasteland,
r empty ruins, lower case = drawn on a ruins cell.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.cartographers import reference as ref
from envs.cartographers.reference import map_from_text

SENTINEL_WOOD, GREENBOUGH, TREETOWER, STONESIDE = 0, 1, 2, 3
CANAL_LAKE, MAGES_VALLEY, GOLDEN_GRANARY, SHORESIDE = 4, 5, 6, 7
WILDHOLDS, GREAT_CITY, GREENGOLD, SHIELDGATE = 8, 9, 10, 11
BORDERLANDS, LOST_BARONY, BROKEN_ROAD, CAULDRONS = 12, 13, 14, 15


def score(card: int, text: str) -> int:
    grid, ruins = map_from_text(text)
    return ref.score_card(card, grid, ruins)


def test_card_names_follow_printed_ids_26_to_41():
    assert ref.CARD_NAMES[0] == "Sentinel Wood" and ref.CARD_NAMES[15] == "The Cauldrons"
    assert ref.CARD_NAMES[9] == "Great City" and ref.CARD_NAMES[13] == "Lost Barony"
    assert len(ref.CARD_NAMES) == len(ref.SOLO_VALUES) == 16


@pytest.mark.parametrize("card", range(16))
def test_every_card_scores_zero_on_an_empty_map(card):
    assert ref.score_card(card, np.zeros((11, 11), np.int8), np.zeros((11, 11), bool)) == 0


def test_full_forest_map():
    grid = np.full((11, 11), ref.FOREST, np.int8)
    ruins = np.zeros((11, 11), bool)
    assert ref.score_card(SENTINEL_WOOD, grid, ruins) == 40   # the 40 edge cells
    assert ref.score_card(GREENBOUGH, grid, ruins) == 22      # 11 rows + 11 columns
    assert ref.score_card(TREETOWER, grid, ruins) == 121
    assert ref.score_card(BORDERLANDS, grid, ruins) == 6 * 22
    assert ref.score_card(LOST_BARONY, grid, ruins) == 33
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 33     # 11 diagonals
    assert ref.score_card(CAULDRONS, grid, ruins) == 0


def test_flat_121_arrays_are_accepted():
    grid, ruins = map_from_text("F")
    assert ref.score_card(SENTINEL_WOOD, grid.ravel(), ruins.ravel()) == 1


def test_bad_card_index_is_named():
    with pytest.raises(ValueError, match="0..15"):
        ref.score_card(16, np.zeros((11, 11), np.int8), np.zeros((11, 11), bool))


def test_bad_map_shape_is_named():
    with pytest.raises(ValueError, match="11 x 11"):
        ref.score_card(0, np.zeros((10, 11), np.int8), np.zeros((11, 11), bool))


# ---- forest ----------------------------------------------------------------------------------

def test_sentinel_wood_counts_edge_forests_and_corners_once():
    text = """
    F.........F
    F..........
    ...........
    ....F......
    ...........
    ...........
    ...........
    ...........
    ...........
    ..........F
    F...F.....F
    """
    # edge forests: (0,0) (0,10) (1,0) (9,10) (10,0) (10,4) (10,10); (3,4) is inside
    assert score(SENTINEL_WOOD, text) == 7
    assert score(SENTINEL_WOOD, "F") == 1  # a corner cell touches two edges but counts once


def test_greenbough_counts_rows_and_columns_with_forest():
    text = """
    F....F.....
    ...........
    ...........
    .....F.F...
    """
    # rows {0, 3} + columns {0, 5, 7}
    assert score(GREENBOUGH, text) == 5
    assert score(GREENBOUGH, ".....\n...F") == 2  # one forest: its row and its column


def test_treetower_uses_filled_neighbours_and_the_edge():
    text = """
    FV..PFW....
    P....V.....
    ...........
    ...........
    .....M.....
    ....VF.....
    .....W.....
    .......P...
    ......PFr..
    .......W...
    """
    # (0,0): edge, edge, V, P -> 1; (0,5): edge, P, W, V -> 1;
    # (5,5): M, W, V and an empty side -> 0; (8,7): P, P, W and an empty ruins cell -> 0
    assert score(TREETOWER, text) == 2
    grid, ruins = map_from_text(text)
    grid[5, 6] = ref.MONSTER  # the last open side of (5,5) filled by a monster
    assert ref.score_card(TREETOWER, grid, ruins) == 3


def test_treetower_forest_neighbours_count_as_filled():
    text = """
    FFV........
    FFV........
    PP.........
    """
    # each forest of the corner 2x2 block: two sides forest or edge, the others village or farm
    assert score(TREETOWER, text) == 4
    assert score(TREETOWER, "FF.\nFFV\nPP.") == 3  # (0,1) now has an empty right side


def test_stoneside_forest_chain_of_three_mountains_and_shared_mountain_counted_once():
    # side-A mountains (1,3) (2,8) (5,5) (8,2) (9,7)
    text = """
    ...........
    ...M.......
    ...F....M..
    ...F.......
    ...FFF.....
    .....M.....
    .....F.....
    .....F.....
    ..MF.FFF...
    .......M...
    """
    # cluster A links (1,3)-(5,5); cluster B links (5,5)-(9,7); (5,5) touches both but counts once;
    # (8,3) touches only (8,2) -> nothing; mountain (2,8) has no forest
    assert score(STONESIDE, text) == 9


def test_stoneside_forest_one_mountain_touched_twice_scores_nothing():
    text = """
    ..FF.......
    ..FM.......
    """
    assert score(STONESIDE, text) == 0


def test_stoneside_forest_mountains_with_separate_clusters_do_not_link():
    text = """
    ...........
    ...MF.FM...
    """
    # two clusters, each touching one mountain: the gap at (1,5) breaks the link
    assert score(STONESIDE, text) == 0
    assert score(STONESIDE, "...........\n...MFFFM...") == 6


# ---- farm and water --------------------------------------------------------------------------

def test_canal_lake_counts_each_cell_once():
    text = """
    PW.WPP.....
    W..P.......
    """
    # (0,0)P touches two waters -> 1; (0,1)W 1; (1,0)W 1; (0,3)W touches two farms -> 1;
    # (0,4)P 1; (1,3)P 1; (0,5)P touches only farm -> 0
    assert score(CANAL_LAKE, text) == 6


def test_mages_valley_per_space_not_per_adjacency():
    text = """
    ...........
    ...........
    ..MWM......
    ...P.......
    .....W.....
    ....PMW....
    .....PW....
    """
    # (2,3)W touches two mountains -> 2 once; (3,3)P no mountain -> 0; (4,5)W 2; (5,4)P 1;
    # (5,6)W 2; (6,5)P 1; (6,6)W only diagonal to the mountain -> 0
    assert score(MAGES_VALLEY, text) == 8


def test_golden_granary_farm_on_ruins_three_water_next_to_ruins_one():
    text = """
    ...........
    .W.........
    .pW........
    .P.........
    ...........
    .....w.....
    ...........
    ...........
    Wr.........
    r..........
    """
    # (2,1) farm on ruins 3; (1,1)W and (2,2)W touch that (drawn) ruins cell 1 + 1;
    # (8,0)W touches two empty ruins cells -> 1; (5,5) water ON a ruins cell touches none -> 0;
    # (3,1) farm next to ruins but not on it -> 0
    assert score(GOLDEN_GRANARY, text) == 6


def test_shoreside_expanse_edge_and_contact_disqualify_whole_clusters():
    text = """
    .....P.....
    .....P.....
    .PP..P.....
    .....P...W.
    ...........
    ..PP.......
    ....W......
    ...........
    ..PW.......
    ...........
    ........WW.
    """
    # (2,1-2) farm 3; the farm column 0..3 at col 5 touches the top edge -> 0; (3,9) water 3
    # (column 9 is not the edge); (5,2-3) farm 3; (6,4) water only diagonal to farm 3;
    # (8,2)P and (8,3)W touch each other -> 0 + 0; the water on the bottom edge -> 0
    assert score(SHORESIDE, text) == 12


def test_shoreside_expanse_right_edge_disqualifies():
    assert score(SHORESIDE, "...........\n.........PP") == 0
    assert score(SHORESIDE, "...........\n........PP.") == 3


# ---- village ---------------------------------------------------------------------------------

def test_wildholds_counts_clusters_of_six_or_more():
    text = """
    VVVVVV.....
    ...........
    VVVVV......
    ...........
    VVV........
    ...VVV.....
    ...........
    VVVV.......
    VVV........
    """
    # 6 -> 8; 5 -> 0; two 3s touching only diagonally -> 0; 7 -> 8
    assert score(WILDHOLDS, text) == 16


def test_great_city_excludes_clusters_next_to_mountains():
    text = """
    ...........
    VVVM.......
    VVVV.......
    ...........
    ...VVVV....
    .......M...
    .........VV
    """
    # the 7-cell cluster touches (1,3) -> excluded; (4,3..6) only diagonal to (5,7) -> 4; 2 -> smaller
    assert score(GREAT_CITY, text) == 4
    assert score(GREAT_CITY, "VM") == 0  # every cluster touches a mountain


def test_greengold_plains_counts_types_per_cluster():
    text = """
    FVP........
    .W.........
    .P.........
    FVT........
    .r.........
    ...........
    ....M......
    ....VVX....
    ....FF.....
    ........F..
    .......FVF.
    """
    # (0,1): forest, farm, water -> 3; (3,1): forest, farm (+ wasteland, empty ruins) -> 0;
    # (7,4-5): mountain, monster, forest (twice) -> 3; (10,8): three forests, one type -> 0
    assert score(GREENGOLD, text) == 6


def test_greengold_plains_wasteland_and_empty_ruins_are_not_types():
    base = """
    ...........
    ...F.......
    ..TVP......
    ...r.......
    """
    assert score(GREENGOLD, base) == 0  # forest, farm (+ wasteland, empty ruins) = 2 types
    assert score(GREENGOLD, base.replace("...r", "...w")) == 3  # water drawn on the ruins: 3 types
    assert score(GREENGOLD, base.replace("..TVP", "..XVP")) == 3  # a monster is a type


def test_greengold_plains_many_cells_of_one_type_are_one_type():
    text = """
    .FFF.......
    FVVVP......
    .FFF.......
    """
    assert score(GREENGOLD, text) == 0


def test_shieldgate_second_largest_cluster():
    text = """
    VVVVV......
    ...........
    VVV........
    ...........
    VV.........
    """
    assert score(SHIELDGATE, text) == 6  # sizes 5, 3, 2 -> 2 x 3


def test_shieldgate_tie_for_largest_scores_the_tied_size():
    text = """
    VVVV.......
    ...........
    VV.VV......
    ...........
    V..........
    """
    assert score(SHIELDGATE, text) == 4  # sizes 4, 2, 2, 1 -> 2 x 2
    assert score(SHIELDGATE, "VVVV.......\n...........\nVVVV.......\n...........\nV") == 8  # 4, 4, 1


def test_shieldgate_single_cluster_or_none_scores_zero():
    assert score(SHIELDGATE, "VVVVVVV") == 0
    assert score(SHIELDGATE, "FFFF") == 0


# ---- arrangement -----------------------------------------------------------------------------

def test_borderlands_full_rows_and_columns():
    text = """
    FVPWXMTFVPW
    ..........F
    ..........F
    ..........F
    ..........F
    FFFrFFFFFFF
    ..........F
    ..........F
    ..........F
    ..........F
    ..........F
    """
    # row 0 full (mountain, wasteland, monster count as filled) 6; column 10 full 6;
    # row 5 has an empty ruins cell -> not complete
    assert score(BORDERLANDS, text) == 12


def test_lost_barony_three_by_three_scores_nine():
    text = """
    ...........
    .FFF.......
    .FMF.......
    .VVV.......
    """
    assert score(LOST_BARONY, text) == 9  # seed: a 3x3 filled square is 9, not 9 x 3


def test_lost_barony_largest_square_not_rectangle():
    text = """
    FFFFF......
    FFFFF......
    FFFFF......
    FFrFF......
    """
    # 3x3 squares fit in rows 0-2; every 4x4 square meets the empty ruins at (3,2)
    assert score(LOST_BARONY, text) == 9
    assert score(LOST_BARONY, "F") == 3
    assert score(LOST_BARONY, "FF\nFF") == 6


def test_broken_road_single_cell_diagonal_and_gap():
    grid = np.zeros((11, 11), np.int8)
    ruins = np.zeros((11, 11), bool)
    grid[10, 0] = ref.FOREST  # diagonal 10 is the single cell (10,0)
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 3
    grid[9, 0] = grid[10, 1] = ref.FARM  # diagonal 9
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 6
    grid[8, 0] = grid[9, 1] = ref.WATER  # diagonal 8 misses (10,2)
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 6
    for i in range(11):
        grid[i, i] = ref.MOUNTAIN if i == 5 else ref.VILLAGE  # diagonal 0, the long one
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 9
    grid[10, 2] = ref.MONSTER  # closes diagonal 8
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 12


def test_broken_road_other_diagonals_do_not_count():
    grid = np.zeros((11, 11), np.int8)
    ruins = np.zeros((11, 11), bool)
    grid[0, 10] = ref.FOREST  # the top-right corner alone
    for i in range(10):
        grid[i, i + 1] = ref.FOREST  # from the top edge: does not start on the left edge
    for i in range(10):
        grid[i, 10 - i] = ref.FOREST  # the anti-diagonal, short of (10,0) which is diagonal 10
    assert ref.score_card(BROKEN_ROAD, grid, ruins) == 0
    assert ref.broken_road_diagonal(10) == [(10, 0)]
    assert ref.broken_road_diagonal(0)[-1] == (10, 10)


def test_cauldrons_edge_corner_interior_and_ruins():
    text = """
    .F..F.F....
    F....F.....
    ...........
    ....F......
    ...F.F.....
    ....F......
    ...........
    ....F......
    ...FrF.....
    ....F......
    .....F.F...
    """
    # (0,0) corner: two edges + two forests -> 1; (0,5) edge + three forests -> 1;
    # (4,4) four forests -> 1; (8,4) an empty ruins cell inside four forests -> 1;
    # (10,6) bottom edge + forests (10,5),(10,7) but (9,6) empty -> 0
    assert score(CAULDRONS, text) == 4


def test_cauldrons_two_adjacent_holes_do_not_score():
    text = """
    ...........
    ..FF.......
    .F..F......
    ..FF.......
    """
    assert score(CAULDRONS, text) == 0

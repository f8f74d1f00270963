"""Wildlife cards A, corridors, majority and solo bonuses on hand-built positions."""

from __future__ import annotations

import numpy as np
import pytest

from envs.cascadia import kernels as K
from envs.cascadia import reference as R
from envs.cascadia.game import CascadiaGame
from tests.envs.cascadia.helpers import animals_board, empty_areas, put, to_reference, wildlife

GAME = CascadiaGame(players=1)
BEAR, ELK, SALMON, HAWK, FOX = range(5)


def line(n: int, animal: str, q0: int = 0, r0: int = 0) -> dict:
    return {(q0 + i, r0): animal for i in range(n)}


def check(layout: dict, animal: int, expected: int) -> None:
    s = animals_board(GAME, layout)
    assert wildlife(GAME, s)[animal] == expected
    assert R.wildlife_scores(to_reference(GAME, s, 0))[animal] == expected


@pytest.mark.parametrize("layout, expected", [
    (line(2, "b"), 4),
    ({**line(2, "b"), **line(2, "b", 5)}, 11),
    ({**line(2, "b"), **line(2, "b", 5), **line(2, "b", 0, 4)}, 19),
    ({**line(2, "b"), **line(2, "b", 5), **line(2, "b", 0, 4), **line(2, "b", 5, 4)}, 27),
    ({**line(2, "b"), **line(2, "b", 5), **line(2, "b", 0, 4), **line(2, "b", 5, 4),
      **line(2, "b", 0, 8)}, 27),
    (line(1, "b"), 0),
    (line(3, "b"), 0),  # a triple scores nothing
    (line(4, "b"), 0),  # two pairs touching form one group of four
    ({(0, 0): "b", (1, 0): "b", (0, 1): "b"}, 0),
])
def test_bear_pairs(layout, expected):
    check(layout, BEAR, expected)


@pytest.mark.parametrize("layout, expected", [
    (line(1, "e"), 2), (line(2, "e"), 5), (line(3, "e"), 9), (line(4, "e"), 13),
    (line(5, "e"), 15),  # a straight five splits into 4 + 1
    (line(8, "e"), 26),
    ({(0, 0): "e", (1, 0): "e", (2, 0): "e", (2, 1): "e"}, 11),  # an L: line of 3 + a single
    ({(0, 0): "e", (1, 0): "e", (0, 1): "e"}, 7),  # a triangle: a pair and a single
    ({(0, 0): "e", (0, 1): "e", (0, 2): "e", (-1, 3): "e"}, 11),  # a bent line of 4: 3 + 1
    ({(0, 0): "e", (1, -1): "e", (2, -2): "e", (3, -3): "e"}, 13),  # NE diagonal line of 4
    ({(0, 0): "e", (2, 0): "e"}, 4),  # not adjacent: two singles
])
def test_elk_lines(layout, expected):
    check(layout, ELK, expected)


@pytest.mark.parametrize("layout, expected", [
    (line(1, "s"), 2), (line(2, "s"), 5), (line(3, "s"), 8), (line(4, "s"), 12), (line(5, "s"), 16),
    (line(6, "s"), 20), (line(7, "s"), 25), (line(9, "s"), 25),
    ({(0, 0): "s", (1, 0): "s", (0, 1): "s"}, 8),  # a triangle of 3 is a run
    ({(0, 0): "s", (1, 0): "s", (-1, 0): "s", (0, 1): "s"}, 0),  # a branch spoils the run
    ({(0, 0): "s", (1, 0): "s", (-1, 0): "s", (0, 1): "s", (5, 5): "s"}, 2),
    ({(0, 0): "s", (1, 0): "s", (2, 0): "b", (3, 0): "s"}, 7),  # other animals do not matter
])
def test_salmon_runs(layout, expected):
    check(layout, SALMON, expected)


@pytest.mark.parametrize("layout, expected", [
    (line(1, "h"), 2),
    ({(0, 0): "h", (2, 0): "h", (4, 0): "h"}, 8),
    (line(2, "h"), 0),  # hawks in a pair score nothing
    ({(0, 0): "h", (1, 0): "h", (4, 0): "h"}, 2),
    ({(2 * i, 0): "h" for i in range(8)}, 26),
    ({(2 * i, 0): "h" for i in range(10)}, 26),
    ({(2 * i, 0): "h" for i in range(6)}, 18),
])
def test_hawks(layout, expected):
    check(layout, HAWK, expected)


def test_seed_fox_example_two_bears_salmon_hawk_scores_3():
    layout = {(0, 0): "f", (1, 0): "b", (-1, 0): "b", (0, 1): "s", (0, -1): "h"}
    check(layout, FOX, 3)


def test_fox_counts_another_fox_and_ignores_repeats():
    layout = {(0, 0): "f", (1, 0): "f", (0, 1): "e", (0, -1): "e"}
    # fox (0,0) sees a fox and two elk = 2 types; fox (1,0) sees the fox and the elk at (0,1) = 2
    s = animals_board(GAME, layout)
    assert wildlife(GAME, s)[FOX] == 2 + 2
    assert R.score_fox(to_reference(GAME, s, 0)) == 4


def test_fox_alone_scores_zero():
    check({(0, 0): "f"}, FOX, 0)


# ---- corridors -------------------------------------------------------------------------------

def test_corridor_worked_checks_from_the_reference_data():
    g = CascadiaGame(players=1)
    s = empty_areas(g)
    for j, at in enumerate(((0, 0), (-1, 1), (0, 1))):  # starter S_M
        put(g, s, 0, *at, kind=85 + j)
    assert [int(v) for v in g.score_table(s)[0, 5:10]] == [1, 1, 1, 1, 1]
    put(g, s, 0, -1, 0, kind=5)  # forest keystone west of K: links to b's forest NW edge only
    assert g.score_table(s)[0, 5 + 1] == 2
    put(g, s, 0, 1, 0, kind=22)  # river keystone east of K: links to c's river NE edge
    assert g.score_table(s)[0, 5 + 4] == 2
    assert g.score_table(s)[0, 5 + 0] == 1  # mountain K touches neither by mountain edges


def test_corridor_needs_matching_edges_and_counts_each_tile_once():
    g = CascadiaGame(players=1)
    s = empty_areas(g)
    # dual M/F tiles (kind 25) at rotation 0: mountain on NE, E, SE; forest on SW, W, NW
    put(g, s, 0, 0, 0, kind=25, rot=0)
    put(g, s, 0, 1, 0, kind=25, rot=0)  # touches by E (mountain) against W (forest): no link
    table = g.score_table(s)[0]
    assert table[5] == 1 and table[6] == 1
    put(g, s, 0, 2, 0, kind=25, rot=3)  # rotation 3: forest on NE, E, SE; mountain on SW, W, NW
    table = g.score_table(s)[0]
    assert table[5] == 2  # (1,0) E mountain meets (2,0) W mountain
    assert table[6] == 1
    # two separate forest areas of 3 and 4 keystones: forest scores 4
    s = empty_areas(g)
    for q in range(3):
        put(g, s, 0, q, 0, kind=5)
    for q in range(4):
        put(g, s, 0, q, 3, kind=5)
    assert g.score_table(s)[0, 6] == 4
    assert R.corridor(to_reference(g, s, 0), 1) == 4


# ---- bonuses ---------------------------------------------------------------------------------

def bonuses(sizes: list[list[int]], tie_mode: int = 0) -> list[list[int]]:
    corr = np.array(sizes, dtype=np.int32)
    out = np.zeros_like(corr)
    K.habitat_bonuses(corr, corr.shape[0], tie_mode, 7, 2, out)
    ref = R.majority_bonuses(sizes, "share" if tie_mode else "zero")
    assert out.tolist() == ref
    return out.tolist()


def col(values: list[int]) -> list[list[int]]:
    """One habitat's sizes per player, the other habitats all tied at 0 (ignored by the checks)."""
    return [[v, 0, 0, 0, 0] for v in values]


def first(res: list[list[int]]) -> list[int]:
    return [row[0] for row in res]


def test_rulebook_three_player_example():
    sizes = [[6, 4, 7, 8, 5], [5, 4, 3, 7, 7], [6, 4, 8, 6, 7]]
    assert bonuses(sizes) == [[2, 1, 1, 3, 0], [0, 1, 0, 1, 2], [2, 1, 3, 0, 2]]


@pytest.mark.parametrize("sizes, expected", [
    ([5, 3], [2, 0]), ([3, 5], [0, 2]), ([4, 4], [1, 1]),
])
def test_two_player_majority(sizes, expected):
    assert first(bonuses(col(sizes))) == expected


@pytest.mark.parametrize("sizes, expected, shared", [
    ([9, 5, 3, 1], [3, 1, 0, 0], [3, 1, 0, 0]),  # unique first and second
    ([9, 5, 5, 1], [3, 0, 0, 0], [3, 1, 1, 0]),  # tie for second: 0 (decision 1) or shared
    ([9, 5, 5, 5], [3, 0, 0, 0], [3, 1, 1, 1]),
    ([9, 9, 5, 1], [2, 2, 0, 0], [2, 2, 0, 0]),  # two tied first: 2 each, no second
    ([9, 9, 9, 1], [1, 1, 1, 0], [1, 1, 1, 0]),  # three tied first: 1 each
    ([9, 9, 9, 9], [1, 1, 1, 1], [1, 1, 1, 1]),
    ([4, 8, 6], [0, 3, 1], [0, 3, 1]),
    ([4, 8, 4], [0, 3, 0], [1, 3, 1]),
    ([8, 8, 4], [2, 2, 0], [2, 2, 0]),
    ([8, 8, 8], [1, 1, 1], [1, 1, 1]),
])
def test_three_four_player_majority_and_ties(sizes, expected, shared):
    assert first(bonuses(col(sizes))) == expected
    assert first(bonuses(col(sizes), tie_mode=1)) == shared


@pytest.mark.parametrize("size, expected", [(6, 0), (7, 2), (12, 2)])
def test_solo_bonus_threshold(size, expected):
    assert bonuses([[size, 1, 1, 1, 1]])[0][0] == expected


def test_total_is_wildlife_plus_corridors_plus_bonus_plus_nature():
    """The seed's composition (52 + 28 + 6 + 2 = 88) holds for every sheet: full = base + bonuses."""
    g = CascadiaGame(players=3)
    s = g.new_game(5)
    g.play_random_compiled(s, np.array([12345], dtype=np.uint64))
    for sheet in g.scores(s):
        c = sheet.categories
        wild = sum(c[w] for w in ("bear", "elk", "salmon", "hawk", "fox"))
        hab = sum(v for k, v in c.items() if k.startswith("corridor_"))
        bonus = sum(v for k, v in c.items() if k.startswith("bonus_"))
        assert sheet.total == wild + hab + bonus + c["nature_tokens"]
        assert sheet.extra["base"] == sheet.total - bonus


def test_seed_88_example_composition():
    """Wildlife 52 + corridor tiles 28 + majority bonuses 6 + 2 nature tokens = 88 (3 players)."""
    g = CascadiaGame(players=3)
    s = empty_areas(g)
    keystone = {"M": 0, "F": 5, "P": 10, "W": 15, "R": 20}
    rows = {0: "M", 2: "F", 4: "P", 6: "W", 8: "R"}
    lengths = [{"M": 6, "F": 6, "P": 6, "W": 5, "R": 5},
               {"M": 5, "F": 7, "P": 7, "W": 7, "R": 6},
               {"M": 4, "F": 7, "P": 3, "W": 3, "R": 4}]
    tokens = {**line(2, "b"), **line(2, "b", 4), **line(4, "e", 0, 2), **line(5, "s", 0, 4),
              (0, 6): "h", (2, 6): "h", (4, 6): "h", (1, 8): "h", (2, 8): "f"}
    for p in range(3):
        for r, hab in rows.items():
            for q in range(lengths[p][hab]):
                put(g, s, p, q, r, kind=keystone[hab], token=tokens.get((q, r)) if p == 0 else None)
    s.pinfo[0, K.P_NATURE] = 2
    sheet = g.scores(s)[0]
    c = sheet.categories
    assert [c[w] for w in ("bear", "elk", "salmon", "hawk", "fox")] == [11, 13, 16, 11, 1]
    assert sheet.extra["wildlife"] == 52
    assert sheet.extra["habitat"] == 28
    assert sheet.extra["bonus"] == 6
    assert c["nature_tokens"] == 2
    assert sheet.total == 88
    assert sheet.extra["base"] == 82


def test_elk_split_stays_exact_and_fast_on_a_solid_blob():
    import time

    from envs.cascadia.data import hex_distance

    blob = {(q, r): "e" for q in range(-2, 3) for r in range(-2, 3) if hex_distance(q, r) <= 2}
    check(blob, ELK, R.score_elk(to_reference(GAME, animals_board(GAME, blob), 0)))
    rhombus = {(q, r): "e" for q in range(6) for r in range(4)}
    s = animals_board(GAME, rhombus)
    start = time.perf_counter()
    value = wildlife(GAME, s)[ELK]
    assert time.perf_counter() - start < 1.0
    assert value == 6 * 13  # six straight lines of four

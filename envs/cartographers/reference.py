"""Cartographers rules written plainly: the test oracle and the speed baseline.

Everything here follows the rule text (seed 000, which wins over seed 001) and the project's
rulings (shared/reference/rules-decisions.md, Cartographers 1-16) and nothing else. It is slow on
purpose: each rule is a short loop over the 11 x 11 map that can be read next to the seed.
It does not import the engine, so tests can compare the two.

Conventions (shared with the engine):

- The map is an 11 x 11 grid, row 0 at the top, ``(row, col)`` cells; any array-like with
  ``grid[r][c]`` works (numpy 11x11, nested lists, or a flat 121-long array via :func:`as_rows`).
- Terrain codes: 0 empty, 1 forest, 2 village, 3 farm, 4 water, 5 monster, 6 mountain,
  7 wasteland. Printed ruins are a separate boolean map of the same shape.
- "Filled" means any code other than 0: mountains and wastelands are filled from the start; a
  ruins cell is empty until something is drawn on it.
- Adjacency is orthogonal only; a cluster ("領域") is an orthogonally connected group of one
  terrain, a single cell included.
- Scoring cards are indexed 0..15 = printed ids 26..41, in :data:`CARD_NAMES` order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

SIZE = 11
EMPTY, FOREST, VILLAGE, FARM, WATER, MONSTER, MOUNTAIN, WASTELAND = range(8)

Cell = tuple[int, int]
Placement = frozenset[Cell]

CARD_NAMES: tuple[str, ...] = (
    "Sentinel Wood", "Greenbough", "Treetower", "Stoneside Forest",
    "Canal Lake", "Mages Valley", "The Golden Granary", "Shoreside Expanse",
    "Wildholds", "Great City", "Greengold Plains", "Shieldgate",
    "Borderlands", "Lost Barony", "The Broken Road", "The Cauldrons",
)
#: the number printed in each scoring card's lower corner, used by the solo evaluation
SOLO_VALUES: tuple[int, ...] = (25, 22, 17, 18, 24, 22, 20, 27, 16, 16, 21, 20, 24, 24, 24, 20)
#: solo titles, best first: (minimum evaluation points, title)
SOLO_TITLES: tuple[tuple[int, str], ...] = (
    (30, "Legendary Cartographer"),
    (20, "Master Mapsmith"),
    (10, "Journeyman Topographer"),
    (0, "Apprentice Surveyor"),
    (-5, "Amateur Assessor"),
    (-10, "Inept Assistant"),
    (-20, "Dimwitted Doodler"),
    (-30, "Oblivious Inkdrinker"),
)
#: the lowest title, for any evaluation below -30
SOLO_TITLE_FLOOR = "Oblivious Inkdrinker"

CORNERS = ("top_left", "top_right", "bottom_right", "bottom_left")
ARROWS = ("clockwise", "counterclockwise")


# ---- the map ---------------------------------------------------------------------------------

def as_rows(values: Sequence | np.ndarray) -> list[list[int]]:
    """An 11 x 11 list of lists from an 11x11 or flat 121-long array-like (a copy)."""
    arr = np.asarray(values)
    if arr.shape == (SIZE * SIZE,):
        arr = arr.reshape(SIZE, SIZE)
    if arr.shape != (SIZE, SIZE):
        raise ValueError(f"a map must be 11 x 11 (or 121 flat cells), got shape {arr.shape}")
    return [[int(v) for v in row] for row in arr]


def on_map(r: int, c: int) -> bool:
    """True if (r, c) lies on the 11 x 11 map."""
    return 0 <= r < SIZE and 0 <= c < SIZE


def neighbours(r: int, c: int) -> list[Cell]:
    """The orthogonal neighbours of (r, c) that lie on the map."""
    steps = ((-1, 0), (0, 1), (1, 0), (0, -1))
    return [(r + dr, c + dc) for dr, dc in steps if on_map(r + dr, c + dc)]


def is_edge(r: int, c: int) -> bool:
    """True if (r, c) touches the map's edge (first or last row or column)."""
    return r in (0, SIZE - 1) or c in (0, SIZE - 1)


def cells_of(grid: list[list[int]], terrain: int) -> list[Cell]:
    """All cells of one terrain, row-major."""
    return [(r, c) for r in range(SIZE) for c in range(SIZE) if grid[r][c] == terrain]


def touches(grid: list[list[int]], r: int, c: int, terrain: int) -> bool:
    """True if some orthogonal neighbour of (r, c) has ``terrain``."""
    return any(grid[nr][nc] == terrain for nr, nc in neighbours(r, c))


def surrounded(grid: list[list[int]], r: int, c: int) -> bool:
    """True if each of the 4 sides of (r, c) is a filled cell or the map's edge."""
    steps = ((-1, 0), (0, 1), (1, 0), (0, -1))
    for dr, dc in steps:
        nr, nc = r + dr, c + dc
        if on_map(nr, nc) and grid[nr][nc] == EMPTY:
            return False
    return True


def clusters(grid: list[list[int]], terrain: int) -> list[set[Cell]]:
    """The clusters of ``terrain``: orthogonally connected groups, found by flood fill."""
    seen: set[Cell] = set()
    found = []
    for start in cells_of(grid, terrain):
        if start in seen:
            continue
        group = {start}
        frontier = [start]
        while frontier:
            r, c = frontier.pop()
            for nb in neighbours(r, c):
                if nb not in group and grid[nb[0]][nb[1]] == terrain:
                    group.add(nb)
                    frontier.append(nb)
        seen |= group
        found.append(group)
    return found


def cluster_neighbour_codes(grid: list[list[int]], group: set[Cell]) -> set[int]:
    """The terrain codes of the cells outside ``group`` that touch it."""
    codes = set()
    for r, c in group:
        for nr, nc in neighbours(r, c):
            if (nr, nc) not in group:
                codes.add(grid[nr][nc])
    return codes


#: letters of :func:`map_from_text`; lower case = the same terrain drawn on a printed ruins cell
TEXT_CODES = {".": EMPTY, "F": FOREST, "V": VILLAGE, "P": FARM, "W": WATER, "X": MONSTER,
              "M": MOUNTAIN, "T": WASTELAND}


def map_from_text(text: str) -> tuple[np.ndarray, np.ndarray]:
    """A map from a picture, for tests and examples: ``(grid int8[11,11], ruins bool[11,11])``.

    One line per row from the top (at most 11; missing rows and columns are empty; blank lines
    around the picture are dropped; spaces are ignored). ``.`` empty, ``F`` forest, ``V`` village,
    ``P`` farm, ``W`` water, ``X`` monster,
    ``M`` mountain, ``T`` wasteland; ``r`` an empty ruins cell, and a lower-case terrain letter
    that terrain drawn on a ruins cell.
    """
    grid = np.zeros((SIZE, SIZE), dtype=np.int8)
    ruins = np.zeros((SIZE, SIZE), dtype=bool)
    lines = [line.replace(" ", "") for line in text.strip().splitlines()]
    if len(lines) > SIZE:
        raise ValueError(f"a map has 11 rows, the picture has {len(lines)}")
    for r, line in enumerate(lines):
        if len(line) > SIZE:
            raise ValueError(f"row {r} has {len(line)} cells, more than 11: {line!r}")
        for c, ch in enumerate(line):
            if ch == "r":
                ruins[r, c] = True
            elif ch.upper() in TEXT_CODES and (ch.isupper() or ch == "."):
                grid[r, c] = TEXT_CODES[ch]
            elif ch.upper() in TEXT_CODES and ch.upper() not in "MT.":
                grid[r, c] = TEXT_CODES[ch.upper()]
                ruins[r, c] = True
            else:
                raise ValueError(f"unknown map letter {ch!r} at row {r}, column {c}")
    return grid, ruins


# ---- the 16 scoring cards --------------------------------------------------------------------

def sentinel_wood(grid, ruins) -> int:
    """26 Sentinel Wood: 1 per forest cell on the map's edge (a corner cell counts once)."""
    return sum(1 for r, c in cells_of(grid, FOREST) if is_edge(r, c))


def greenbough(grid, ruins) -> int:
    """27 Greenbough: 1 per row and 1 per column holding at least one forest cell."""
    forests = cells_of(grid, FOREST)
    return len({r for r, _ in forests}) + len({c for _, c in forests})


def treetower(grid, ruins) -> int:
    """28 Treetower: 1 per forest cell whose 4 sides are each filled or the map's edge."""
    return sum(1 for r, c in cells_of(grid, FOREST) if surrounded(grid, r, c))


def stoneside_forest(grid, ruins) -> int:
    """29 Stoneside Forest: 3 per mountain that a forest cluster connects to another mountain.

    A mountain scores once however many clusters link it; a cluster touching a single mountain
    links nothing.
    """
    linked: set[Cell] = set()
    for group in clusters(grid, FOREST):
        mountains = {nb for r, c in group for nb in neighbours(r, c) if grid[nb[0]][nb[1]] == MOUNTAIN}
        if len(mountains) >= 2:
            linked |= mountains
    return 3 * len(linked)


def canal_lake(grid, ruins) -> int:
    """30 Canal Lake: 1 per water cell touching a farm, 1 per farm cell touching water."""
    water = sum(1 for r, c in cells_of(grid, WATER) if touches(grid, r, c, FARM))
    farm = sum(1 for r, c in cells_of(grid, FARM) if touches(grid, r, c, WATER))
    return water + farm


def mages_valley(grid, ruins) -> int:
    """31 Mages Valley: 2 per water cell touching a mountain, 1 per farm cell touching one
    (per cell, however many mountains it touches)."""
    water = sum(2 for r, c in cells_of(grid, WATER) if touches(grid, r, c, MOUNTAIN))
    farm = sum(1 for r, c in cells_of(grid, FARM) if touches(grid, r, c, MOUNTAIN))
    return water + farm


def golden_granary(grid, ruins) -> int:
    """32 The Golden Granary: 1 per water cell touching a ruins cell, 3 per farm cell on one.

    A ruins cell is any cell printed with the ruins symbol, drawn on or not (decision 13).
    """
    def next_to_ruins(r: int, c: int) -> bool:
        return any(ruins[nr][nc] for nr, nc in neighbours(r, c))

    water = sum(1 for r, c in cells_of(grid, WATER) if next_to_ruins(r, c))
    farm = sum(3 for r, c in cells_of(grid, FARM) if ruins[r][c])
    return water + farm


def shoreside_expanse(grid, ruins) -> int:
    """33 Shoreside Expanse: 3 per farm cluster touching neither water nor the map's edge, and 3
    per water cluster touching neither farm nor the edge (one bad cell disqualifies a cluster)."""
    points = 0
    for terrain, forbidden in ((FARM, WATER), (WATER, FARM)):
        for group in clusters(grid, terrain):
            on_edge = any(is_edge(r, c) for r, c in group)
            if not on_edge and forbidden not in cluster_neighbour_codes(grid, group):
                points += 3
    return points


def wildholds(grid, ruins) -> int:
    """34 Wildholds: 8 per village cluster of six or more cells."""
    return sum(8 for group in clusters(grid, VILLAGE) if len(group) >= 6)


def great_city(grid, ruins) -> int:
    """35 Great City: the size of the largest village cluster that touches no mountain (0 if none)."""
    sizes = [len(g) for g in clusters(grid, VILLAGE) if MOUNTAIN not in cluster_neighbour_codes(grid, g)]
    return max(sizes, default=0)


#: the terrain types Greengold Plains counts (decision 10): not village, not wasteland, not empty
GREENGOLD_TYPES = frozenset({FOREST, FARM, WATER, MOUNTAIN, MONSTER})


def greengold_plains(grid, ruins) -> int:
    """36 Greengold Plains: 3 per village cluster touching at least 3 different terrain types
    among forest, farm, water, mountain and monster (decision 10)."""
    points = 0
    for group in clusters(grid, VILLAGE):
        if len(cluster_neighbour_codes(grid, group) & GREENGOLD_TYPES) >= 3:
            points += 3
    return points


def shieldgate(grid, ruins) -> int:
    """37 Shieldgate: 2 per cell of the second largest village cluster; it may tie the largest;
    with fewer than two clusters, 0 (decision 12)."""
    sizes = sorted((len(g) for g in clusters(grid, VILLAGE)), reverse=True)
    return 2 * sizes[1] if len(sizes) >= 2 else 0


def borderlands(grid, ruins) -> int:
    """38 Borderlands: 6 per row and 6 per column whose 11 cells are all filled."""
    rows = sum(1 for r in range(SIZE) if all(grid[r][c] != EMPTY for c in range(SIZE)))
    cols = sum(1 for c in range(SIZE) if all(grid[r][c] != EMPTY for r in range(SIZE)))
    return 6 * (rows + cols)


def lost_barony(grid, ruins) -> int:
    """39 Lost Barony: 3 per cell along one side of the largest square of filled cells."""
    best = 0
    for top in range(SIZE):
        for left in range(SIZE):
            side = 1
            while top + side <= SIZE and left + side <= SIZE and all(
                grid[r][c] != EMPTY for r in range(top, top + side) for c in range(left, left + side)
            ):
                best = max(best, side)
                side += 1
    return 3 * best


def broken_road_diagonal(d: int) -> list[Cell]:
    """Diagonal ``d`` of The Broken Road: from (d, 0) on the left edge down-right to the bottom
    edge; diagonal 10 is the single cell (10, 0) (decision 11)."""
    return [(d + i, i) for i in range(SIZE - d)]


def broken_road(grid, ruins) -> int:
    """40 The Broken Road: 3 per diagonal from the left edge to the bottom edge that is all filled."""
    return sum(3 for d in range(SIZE) if all(grid[r][c] != EMPTY for r, c in broken_road_diagonal(d)))


def cauldrons(grid, ruins) -> int:
    """41 The Cauldrons: 1 per empty cell whose 4 sides are each filled or the map's edge."""
    return sum(1 for r, c in cells_of(grid, EMPTY) if surrounded(grid, r, c))


CARD_RULES = (
    sentinel_wood, greenbough, treetower, stoneside_forest,
    canal_lake, mages_valley, golden_granary, shoreside_expanse,
    wildholds, great_city, greengold_plains, shieldgate,
    borderlands, lost_barony, broken_road, cauldrons,
)


def score_card(card_index: int, grid, ruins) -> int:
    """Points that scoring card ``card_index`` (0..15 = printed 26..41) gives this map."""
    if not 0 <= int(card_index) < len(CARD_RULES):
        raise ValueError(f"scoring card index must be 0..15, got {card_index}")
    rule = CARD_RULES[int(card_index)]
    return int(rule(as_rows(grid), [[bool(v) for v in row] for row in as_rows(ruins)]))


# ---- monsters, mountains, seasons ------------------------------------------------------------

def monster_penalty(grid) -> int:
    """Points lost at a season's end: 1 per empty cell orthogonally touching at least one monster
    (each empty cell once; an undrawn ruins cell is empty)."""
    rows = as_rows(grid)
    return sum(1 for r, c in cells_of(rows, EMPTY) if touches(rows, r, c, MONSTER))


def surrounded_mountains(grid) -> set[Cell]:
    """The mountains whose 4 orthogonal neighbours are all filled (each earns one coin, once).

    Off the map never counts as a filled neighbour (decision 7); printed mountains are all
    interior cells, so this only matters for made-up maps.
    """
    rows = as_rows(grid)
    found = set()
    for r, c in cells_of(rows, MOUNTAIN):
        nbs = neighbours(r, c)
        if len(nbs) == 4 and all(rows[nr][nc] != EMPTY for nr, nc in nbs):
            found.add((r, c))
    return found


def season_score(grid, ruins, card_a: int, card_b: int, coins: int) -> dict[str, int]:
    """One season's score: the two edicts' cards + 1 per coin - 1 per empty cell next to a monster.

    Returns ``{"card_a", "card_b", "coins", "monsters" (<= 0), "total"}``.
    """
    if coins < 0:
        raise ValueError(f"coins must be >= 0, got {coins}")
    a = score_card(card_a, grid, ruins)
    b = score_card(card_b, grid, ruins)
    monsters = -monster_penalty(grid)
    return {"card_a": a, "card_b": b, "coins": int(coins), "monsters": monsters,
            "total": a + b + int(coins) + monsters}


#: the edicts scored at the end of each season: spring A+B, summer B+C, fall C+D, winter D+A
SEASON_EDICTS = ((0, 1), (1, 2), (2, 3), (3, 0))


def final_score(season_totals: Iterable[int]) -> int:
    """The final score: the four recorded season scores added (the map is not re-scored)."""
    totals = [int(t) for t in season_totals]
    if len(totals) != 4:
        raise ValueError(f"a game has 4 seasons, got {len(totals)} season scores")
    return sum(totals)


def evaluation_points(final: int, solo_value_sum: int) -> int:
    """Solo evaluation points: the final score minus the sum of the 4 cards' solo values."""
    return int(final) - int(solo_value_sum)


def solo_title(points: int) -> str:
    """The solo title earned with ``points`` evaluation points (decision 15)."""
    for minimum, title in SOLO_TITLES:
        if points >= minimum:
            return title
    return SOLO_TITLE_FLOOR


def solo_evaluation(final: int, cards: Sequence[int]) -> tuple[int, str]:
    """Solo evaluation points and title for a final score and the game's 4 scoring cards."""
    if len(cards) != 4:
        raise ValueError(f"solo evaluation needs the 4 scoring cards, got {len(cards)}")
    for card in cards:
        if not 0 <= int(card) < len(SOLO_VALUES):
            raise ValueError(f"scoring card index must be 0..15, got {card}")
    points = evaluation_points(final, sum(SOLO_VALUES[int(c)] for c in cards))
    return points, solo_title(points)


# ---- drawing shapes --------------------------------------------------------------------------

def normalise_shape(cells: Iterable[Cell]) -> tuple[Cell, ...]:
    """A shape moved so its bounding box starts at (0, 0), cells sorted (repeats rejected)."""
    cells = [(int(r), int(c)) for r, c in cells]
    if not cells:
        raise ValueError("a shape needs at least one cell")
    if len(set(cells)) != len(cells):
        raise ValueError(f"a shape has a repeated cell: {cells}")
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def orientations(shape_cells: Iterable[Cell]) -> set[tuple[Cell, ...]]:
    """The distinct shapes among the 4 rotations of the shape and of its mirror image."""
    shape = normalise_shape(shape_cells)
    found = set()
    for mirrored in (False, True):
        current = [(r, -c) for r, c in shape] if mirrored else list(shape)
        for _ in range(4):
            current = [(c, -r) for r, c in current]  # a quarter turn
            found.add(normalise_shape(current))
    return found


def is_legal_placement(grid, cells: Iterable[Cell]) -> bool:
    """True if every cell is on the map and empty (an undrawn ruins cell is empty; mountains,
    wastelands and drawn cells are not) and no cell repeats."""
    return _fits(as_rows(grid), list(cells))


def _fits(rows: list[list[int]], cells: list[Cell]) -> bool:
    if not cells or len(set(cells)) != len(cells):
        return False
    return all(on_map(r, c) and rows[r][c] == EMPTY for r, c in cells)


def _translations(shape: tuple[Cell, ...]) -> list[Placement]:
    height = max(r for r, _ in shape) + 1
    width = max(c for _, c in shape) + 1
    return [frozenset((top + r, left + c) for r, c in shape)
            for top in range(SIZE - height + 1) for left in range(SIZE - width + 1)]


def covers_empty_ruins(grid, ruins, cells: Iterable[Cell]) -> bool:
    """True if at least one of ``cells`` is a ruins cell that is still empty."""
    return any(ruins[r][c] and grid[r][c] == EMPTY for r, c in cells)


def legal_placements(grid, ruins, shape_cells, require_ruins: bool) -> set[Placement]:
    """Every distinct legal way to draw one shape, over its rotations and mirror images.

    With ``require_ruins`` (a ruins card was revealed) a placement must also cover at least one
    empty ruins cell.
    """
    rows = as_rows(grid)
    ruin_rows = [[bool(v) for v in row] for row in as_rows(ruins)]
    found = set()
    for shape in orientations(shape_cells):
        for placement in _translations(shape):
            if not _fits(rows, list(placement)):
                continue
            if require_ruins and not covers_empty_ruins(rows, ruin_rows, placement):
                continue
            found.add(placement)
    return found


def fallback_allowed(grid, ruins, shape_options, require_ruins: bool) -> bool:
    """True when none of the card's offered shapes can be drawn (under the ruins constraint when
    ``require_ruins``): only then may a single empty cell be drawn instead (decisions 4, 5)."""
    return all(not legal_placements(grid, ruins, shape, require_ruins) for shape in shape_options)


def decision_kind(grid, ruins, shape_options, require_ruins: bool) -> str:
    """What a seat may do on ``grid`` with a card offering ``shape_options``: "place" (a shape fits),
    "fallback" (only a single empty cell may be drawn) or "pass" (the project's full-map ruling: no
    empty cell is left, so nothing can be drawn and the seat passes the card; it also passes a
    multiplayer ambush aimed at such a map)."""
    if not any(v == EMPTY for row in as_rows(grid) for v in row):
        return "pass"
    return "fallback" if fallback_allowed(grid, ruins, shape_options, require_ruins) else "place"


# ---- solo ambush -----------------------------------------------------------------------------

def ring_of(r: int, c: int) -> int:
    """Ring number of a cell: 0 on the map's edge, 1 one cell in, ... 5 at the centre."""
    return min(r, c, SIZE - 1 - r, SIZE - 1 - c)


def ring_walk(k: int, corner: str, arrow: str) -> list[Cell]:
    """The cells of ring ``k`` in walking order, from the ring's corner cell on ``corner`` in the
    ``arrow`` direction (clockwise = east along the top, south down the right side, west along
    the bottom, north up the left side) (decision 9)."""
    if corner not in CORNERS:
        raise ValueError(f"corner must be one of {CORNERS}, got {corner!r}")
    if arrow not in ARROWS:
        raise ValueError(f"arrow must be one of {ARROWS}, got {arrow!r}")
    lo, hi = k, SIZE - 1 - k
    if not 0 <= k <= (SIZE - 1) // 2:
        raise ValueError(f"ring must be 0..{(SIZE - 1) // 2}, got {k}")
    if lo == hi:
        return [(lo, lo)]
    # the ring clockwise from its top-left corner
    clockwise = ([(lo, c) for c in range(lo, hi)] + [(r, hi) for r in range(lo, hi)]
                 + [(hi, c) for c in range(hi, lo, -1)] + [(r, lo) for r in range(hi, lo, -1)])
    corner_cell = {"top_left": (lo, lo), "top_right": (lo, hi),
                   "bottom_right": (hi, hi), "bottom_left": (hi, lo)}[corner]
    start = clockwise.index(corner_cell)
    walk = clockwise[start:] + clockwise[:start]
    if arrow == "counterclockwise":
        walk = [walk[0]] + walk[:0:-1]
    return walk


def solo_ambush_placement(grid, shape_cells, corner: str, arrow: str) -> Placement | None:
    """Where a solo ambush draws its monster (decision 9), or None when it is ignored.

    The shape is neither rotated nor mirrored. For ring k = 0, 1, 2, ...: the candidates are the
    on-map placements with at least one cell on ring k, ordered by the sorted tuple of the walk
    positions of their ring-k cells, then by the top-left cell of their bounding box (row-major);
    the first legal one is drawn. No ring with a legal placement: the ambush is ignored.
    """
    rows = as_rows(grid)
    shape = normalise_shape(shape_cells)
    placements = _translations(shape)
    for k in range((SIZE - 1) // 2 + 1):
        position = {cell: i for i, cell in enumerate(ring_walk(k, corner, arrow))}
        candidates = []
        for placement in placements:
            on_ring = sorted(position[cell] for cell in placement if cell in position)
            if on_ring:
                top_left = (min(r for r, _ in placement), min(c for _, c in placement))
                candidates.append((tuple(on_ring), top_left, placement))
        candidates.sort(key=lambda item: (item[0], item[1]))
        for _, _, placement in candidates:
            if _fits(rows, list(placement)):
                return placement
    return None

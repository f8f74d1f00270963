"""Cartographers component data: loads ``seeds/cartographers.yaml`` into frozen numpy tables.

Codes shared by the whole project:

- grid 11 x 11, flat cell ``r * 11 + c``, row 0 at the top;
- terrain (int8): 0 EMPTY, 1 FOREST, 2 VILLAGE, 3 FARM, 4 WATER, 5 MONSTER, 6 MOUNTAIN, 7 WASTELAND;
- scoring cards 0..15 = printed ids 26..41, stacks forest 0-3, farm & water 4-7, village 8-11,
  arrangement 12-15;
- deck cards: 0..12 = explore deck ids 5..17 (two ruins, eleven explore), 13..16 = ambush ids 1..4.

Every problem in the file raises :class:`DataFileError` naming the file, the key and the problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.errors import ConfigError, DataFileError
from envs.core.install import shipped_file
from envs.core.polyomino import normalize
from envs.core.textfile import parse_yaml, read_text

ROWS = COLS = 11
N_CELLS = ROWS * COLS

EMPTY, FOREST, VILLAGE, FARM, WATER, MONSTER, MOUNTAIN, WASTELAND = range(8)
TERRAIN_NAMES = ("empty", "forest", "village", "farm", "water", "monster", "mountain", "wasteland")
DRAWABLE = {"forest": FOREST, "village": VILLAGE, "farm": FARM, "water": WATER, "monster": MONSTER}

KIND_EXPLORE, KIND_RUINS, KIND_AMBUSH = 0, 1, 2
N_EXPLORE_CARDS = 13
N_AMBUSH_CARDS = 4
N_DECK_CARDS = N_EXPLORE_CARDS + N_AMBUSH_CARDS
N_SCORING_CARDS = 16
STACKS = ("forest", "farm_and_water", "village", "arrangement")
CORNERS = ("top_left", "top_right", "bottom_right", "bottom_left")
ARROWS = {"clockwise": 1, "counterclockwise": -1}
EDICT_LETTERS = "ABCD"

#: the shipped component file (the checkout's seeds/, or the installed data package)
DEFAULT_PATH = shipped_file("seeds", "cartographers.yaml")

Cells = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class MapSheet:
    """One side of the map sheet."""

    side: str
    name: str
    terrain: np.ndarray  # int8[121]: EMPTY, MOUNTAIN or WASTELAND
    ruins: np.ndarray  # bool[121]
    mountains: np.ndarray  # int16[k] flat cells


@dataclass(frozen=True)
class CartographersData:
    """All component tables (read-only numpy arrays and tuples)."""

    path: str
    maps: dict[str, MapSheet]
    coin_spaces: int
    # deck cards 0..16 (13 explore-deck cards, then 4 ambushes)
    card_ids: np.ndarray  # int16[17] printed ids
    card_names: tuple[str, ...]
    card_kind: np.ndarray  # int8[17] KIND_*
    card_time: np.ndarray  # int8[17]
    card_terrains: np.ndarray  # int8[17, 5] terrain codes, -1 padded
    card_n_terrains: np.ndarray  # int8[17]
    card_shapes: tuple[tuple[Cells, ...], ...]  # per card, its shape options (ambush: one shape)
    card_coin: np.ndarray  # bool[17, 2]
    ambush_arrow: np.ndarray  # int8[4] +1 clockwise, -1 counterclockwise
    ambush_corner: np.ndarray  # int8[4] index into CORNERS
    # scoring cards 0..15
    scoring_ids: np.ndarray  # int16[16]
    scoring_names: tuple[str, ...]
    scoring_stack: np.ndarray  # int8[16]
    scoring_solo: np.ndarray  # int16[16]
    # seasons 0..3
    season_names: tuple[str, ...]
    season_threshold: np.ndarray  # int8[4]
    season_edicts: np.ndarray  # int8[4, 2] edict indices 0..3 (A..D)
    titles: tuple[tuple[int, str], ...]  # (minimum evaluation, title), descending

    def scoring_index(self, name_or_index: str | int) -> int:
        """Index 0..15 of a scoring card given its name (case-insensitive), id 26..41 or index."""
        if isinstance(name_or_index, (int, np.integer)):
            value = int(name_or_index)
            if 0 <= value < N_SCORING_CARDS:
                return value
            if value in self.scoring_ids:
                return int(np.flatnonzero(self.scoring_ids == value)[0])
        else:
            key = str(name_or_index).strip().lower()
            for i, name in enumerate(self.scoring_names):
                if name.lower() == key or name.lower().removeprefix("the ") == key:
                    return i
        raise ConfigError(f"unknown scoring card {name_or_index!r}; known cards: "
                          + ", ".join(self.scoring_names))

    def title_for(self, evaluation: int) -> str:
        """Solo title for ``evaluation`` points: the first row whose minimum is reached."""
        for minimum, title in self.titles:
            if evaluation >= minimum:
                return title
        return self.titles[-1][1]


def _fail(path: Path, key: str, problem: str) -> DataFileError:
    return DataFileError(f"{path}: {key}: {problem}")


def _get(path: Path, obj: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(obj, dict):
        raise _fail(path, where, "expected a mapping")
    if key not in obj:
        raise _fail(path, f"{where}.{key}" if where else key, "missing")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise _fail(path, f"{where}.{key}" if where else key,
                    f"expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}")
    return value


def _cells(path: Path, raw: Any, where: str, limit: int = ROWS) -> list[tuple[int, int]]:
    if not isinstance(raw, list):
        raise _fail(path, where, "expected a list of [row, col] pairs")
    out = []
    for item in raw:
        if (not isinstance(item, list) or len(item) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in item)):
            raise _fail(path, where, f"bad cell {item!r}: expected [row, col] integers")
        if not (0 <= item[0] < limit and 0 <= item[1] < limit):
            raise _fail(path, where, f"cell {item!r} outside 0..{limit - 1}")
        out.append((item[0], item[1]))
    if len(set(out)) != len(out):
        raise _fail(path, where, "duplicate cells")
    return out


def _shape(path: Path, raw: Any, where: str) -> Cells:
    cells = _cells(path, raw, where, limit=5)
    if not cells:
        raise _fail(path, where, "a shape needs at least one cell")
    shape = normalize(cells)
    if shape != tuple(sorted(cells)):
        raise _fail(path, where, "shape cells must start at row 0 and col 0 (top-left of the bounding box)")
    return shape


def _load_maps(path: Path, doc: dict) -> dict[str, MapSheet]:
    raw_maps = _get(path, doc, "maps", "", dict)
    if "A" not in raw_maps:
        raise _fail(path, "maps.A", "missing")
    maps = {}
    for side, raw in raw_maps.items():
        where = f"maps.{side}"
        terrain = np.zeros(N_CELLS, dtype=np.int8)
        ruins = np.zeros(N_CELLS, dtype=bool)
        name = _get(path, raw, "name", where, str)
        mountains = _cells(path, _get(path, raw, "mountains", where, list), f"{where}.mountains")
        for r, c in mountains:
            if r in (0, ROWS - 1) or c in (0, COLS - 1):
                raise _fail(path, f"{where}.mountains", f"mountain {[r, c]} on the map edge")
            terrain[r * COLS + c] = MOUNTAIN
        for r, c in _cells(path, _get(path, raw, "wasteland", where, list), f"{where}.wasteland"):
            if terrain[r * COLS + c] != EMPTY:
                raise _fail(path, f"{where}.wasteland", f"cell {[r, c]} is already a mountain")
            terrain[r * COLS + c] = WASTELAND
        for r, c in _cells(path, _get(path, raw, "ruins", where, list), f"{where}.ruins"):
            if terrain[r * COLS + c] != EMPTY:
                raise _fail(path, f"{where}.ruins", f"ruins cell {[r, c]} is not an empty cell")
            ruins[r * COLS + c] = True
        mtn = np.array([r * COLS + c for r, c in mountains], dtype=np.int16)
        for arr in (terrain, ruins, mtn):
            arr.flags.writeable = False
        maps[str(side)] = MapSheet(str(side), name, terrain, ruins, mtn)
    return maps


def load_cartographers_data(path: str | Path | None = None) -> CartographersData:
    """Load and validate the Cartographers component file (default ``seeds/cartographers.yaml``)."""
    path = Path(path) if path is not None else DEFAULT_PATH
    text = read_text(path, "Cartographers data file", DataFileError)
    doc = parse_yaml(text, f"Cartographers data file {path}", DataFileError)
    if not isinstance(doc, dict):
        raise _fail(path, "<top level>", "expected a mapping")

    grid = _get(path, doc, "grid", "", dict)
    if _get(path, grid, "rows", "grid", int) != ROWS or _get(path, grid, "cols", "grid", int) != COLS:
        raise _fail(path, "grid", f"only an {ROWS} x {COLS} grid is supported")
    maps = _load_maps(path, doc)
    coin_spaces = _get(path, _get(path, doc, "coin_track", "", dict), "spaces", "coin_track", int)
    if coin_spaces < 1:
        raise _fail(path, "coin_track.spaces", "must be >= 1")

    explore = _get(path, doc, "explore_cards", "", list)
    ambush = _get(path, doc, "ambush_cards", "", list)
    if len(explore) != N_EXPLORE_CARDS:
        raise _fail(path, "explore_cards", f"expected {N_EXPLORE_CARDS} cards, found {len(explore)}")
    if len(ambush) != N_AMBUSH_CARDS:
        raise _fail(path, "ambush_cards", f"expected {N_AMBUSH_CARDS} cards, found {len(ambush)}")

    ids = np.zeros(N_DECK_CARDS, dtype=np.int16)
    kind = np.zeros(N_DECK_CARDS, dtype=np.int8)
    time = np.zeros(N_DECK_CARDS, dtype=np.int8)
    terrains = np.full((N_DECK_CARDS, 5), -1, dtype=np.int8)
    n_terrains = np.zeros(N_DECK_CARDS, dtype=np.int8)
    coin = np.zeros((N_DECK_CARDS, 2), dtype=bool)
    names: list[str] = []
    shapes: list[tuple[Cells, ...]] = []
    for i, raw in enumerate(explore):
        where = f"explore_cards[{i}]"
        ids[i] = _get(path, raw, "id", where, int)
        names.append(_get(path, raw, "name", where, str))
        time[i] = _get(path, raw, "time", where, int)
        card_kind = _get(path, raw, "kind", where, str)
        if card_kind not in ("explore", "ruins"):
            raise _fail(path, f"{where}.kind", f"unknown kind {card_kind!r} (explore or ruins)")
        if not 0 <= time[i] <= 2:
            raise _fail(path, f"{where}.time", f"time {time[i]} outside 0..2")
        if card_kind == "ruins":
            kind[i] = KIND_RUINS
            if time[i] != 0:
                raise _fail(path, f"{where}.time", "a ruins card has time 0")
            shapes.append(())
            continue
        terr = _get(path, raw, "terrains", where, list)
        if not 1 <= len(terr) <= 5:
            raise _fail(path, f"{where}.terrains", "expected 1..5 terrain names")
        for k, t in enumerate(terr):
            if t not in DRAWABLE:
                raise _fail(path, f"{where}.terrains", f"unknown terrain {t!r}; known: {', '.join(DRAWABLE)}")
            terrains[i, k] = DRAWABLE[t]
        n_terrains[i] = len(terr)
        options = _get(path, raw, "options", where, list)
        if not 1 <= len(options) <= 2:
            raise _fail(path, f"{where}.options", "expected 1 or 2 shape options")
        opts = []
        for k, opt in enumerate(options):
            opts.append(_shape(path, _get(path, opt, "cells", f"{where}.options[{k}]", list),
                               f"{where}.options[{k}].cells"))
            coin[i, k] = bool(_get(path, opt, "coin", f"{where}.options[{k}]", bool))
        shapes.append(tuple(opts))
    if sorted(kind[:N_EXPLORE_CARDS].tolist()).count(KIND_RUINS) != 2:
        raise _fail(path, "explore_cards", "expected exactly 2 ruins cards")

    arrow = np.zeros(N_AMBUSH_CARDS, dtype=np.int8)
    corner = np.zeros(N_AMBUSH_CARDS, dtype=np.int8)
    for j, raw in enumerate(ambush):
        i = N_EXPLORE_CARDS + j
        where = f"ambush_cards[{j}]"
        ids[i] = _get(path, raw, "id", where, int)
        names.append(_get(path, raw, "name", where, str))
        kind[i] = KIND_AMBUSH
        time[i] = _get(path, raw, "time", where, int)
        if time[i] != 0:
            raise _fail(path, f"{where}.time", "an ambush card has time 0")
        terrains[i, 0] = MONSTER
        n_terrains[i] = 1
        shapes.append((_shape(path, _get(path, raw, "cells", where, list), f"{where}.cells"),))
        a = _get(path, raw, "arrow", where, str)
        if a not in ARROWS:
            raise _fail(path, f"{where}.arrow", f"unknown arrow {a!r}; known: {', '.join(ARROWS)}")
        arrow[j] = ARROWS[a]
        c = _get(path, raw, "solo_corner", where, str)
        if c not in CORNERS:
            raise _fail(path, f"{where}.solo_corner", f"unknown corner {c!r}; known: {', '.join(CORNERS)}")
        corner[j] = CORNERS.index(c)
    if len(set(ids.tolist())) != N_DECK_CARDS:
        raise _fail(path, "explore_cards/ambush_cards", "card ids are not unique")

    scoring = _get(path, doc, "scoring_cards", "", list)
    if len(scoring) != N_SCORING_CARDS:
        raise _fail(path, "scoring_cards", f"expected {N_SCORING_CARDS} cards, found {len(scoring)}")
    s_ids = np.zeros(N_SCORING_CARDS, dtype=np.int16)
    s_stack = np.zeros(N_SCORING_CARDS, dtype=np.int8)
    s_solo = np.zeros(N_SCORING_CARDS, dtype=np.int16)
    s_names = []
    for i, raw in enumerate(scoring):
        where = f"scoring_cards[{i}]"
        s_ids[i] = _get(path, raw, "id", where, int)
        if s_ids[i] != 26 + i:
            raise _fail(path, f"{where}.id", f"expected id {26 + i} (cards are listed in id order 26..41)")
        s_names.append(_get(path, raw, "name", where, str))
        stack = _get(path, raw, "stack", where, str)
        if stack not in STACKS:
            raise _fail(path, f"{where}.stack", f"unknown stack {stack!r}; known: {', '.join(STACKS)}")
        if STACKS.index(stack) != i // 4:
            raise _fail(path, f"{where}.stack", f"card {i} belongs to stack {STACKS[i // 4]}")
        s_stack[i] = STACKS.index(stack)
        s_solo[i] = _get(path, raw, "solo", where, int)

    seasons = _get(path, doc, "seasons", "", list)
    if len(seasons) != 4:
        raise _fail(path, "seasons", f"expected 4 seasons, found {len(seasons)}")
    thresholds = np.zeros(4, dtype=np.int8)
    edicts = np.zeros((4, 2), dtype=np.int8)
    season_names = []
    for i, raw in enumerate(seasons):
        where = f"seasons[{i}]"
        season_names.append(_get(path, raw, "name", where, str))
        thresholds[i] = _get(path, raw, "threshold", where, int)
        if thresholds[i] < 1:
            raise _fail(path, f"{where}.threshold", "must be >= 1")
        pair = _get(path, raw, "edicts", where, list)
        if len(pair) != 2 or any(p not in EDICT_LETTERS for p in pair):
            raise _fail(path, f"{where}.edicts", "expected two edict letters among A, B, C, D")
        edicts[i] = [EDICT_LETTERS.index(p) for p in pair]

    raw_titles = _get(path, doc, "solo_titles", "", list)
    titles = []
    for i, raw in enumerate(raw_titles):
        titles.append((_get(path, raw, "min", f"solo_titles[{i}]", int),
                       _get(path, raw, "title", f"solo_titles[{i}]", str)))
    if not titles or [t[0] for t in titles] != sorted((t[0] for t in titles), reverse=True):
        raise _fail(path, "solo_titles", "expected a non-empty list in descending order of min")

    arrays = (ids, kind, time, terrains, n_terrains, coin, arrow, corner, s_ids, s_stack, s_solo,
              thresholds, edicts)
    for arr in arrays:
        arr.flags.writeable = False
    return CartographersData(
        path=str(path), maps=maps, coin_spaces=coin_spaces, card_ids=ids, card_names=tuple(names),
        card_kind=kind, card_time=time, card_terrains=terrains, card_n_terrains=n_terrains,
        card_shapes=tuple(shapes), card_coin=coin, ambush_arrow=arrow, ambush_corner=corner,
        scoring_ids=s_ids, scoring_names=tuple(s_names), scoring_stack=s_stack, scoring_solo=s_solo,
        season_names=tuple(season_names), season_threshold=thresholds, season_edicts=edicts,
        titles=tuple(titles))

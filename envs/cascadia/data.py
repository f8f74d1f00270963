"""Cascadia component data: ``seeds/cascadia.yaml`` loaded into immutable numpy tables.

Indices used everywhere in the engine:

* habitats ``0..4`` = mountain, forest, prairie, wetland, river;
* wildlife ``0..4`` = bear, elk, salmon, hawk, fox;
* directions ``0..5`` = NE, E, SE, SW, W, NW (clockwise, axial offsets in :data:`DIRECTIONS`);
* a *kind* is a hex face: ids ``0..84`` are the habitat tiles, ``85 + 3*s + j`` the hex ``j`` of
  starter ``s`` (``j`` = 0 keystone at (0, 0), 1 at (-1, 1), 2 at (0, 1));
* a *cell* is a position of the board window: every axial (q, r) within hex distance
  :data:`RADIUS` of the starter keystone, numbered row by row (r, then q).

The window is large enough for every legal move (rules decision 7): the starter hexes lie within
distance 1 of the origin and each of the 20 placed tiles touches an earlier one, so every tile ever
placed and every frontier position lies within distance 21 < :data:`RADIUS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from envs.core.errors import DataFileError
from envs.core.install import shipped_file
from envs.core.textfile import parse_yaml, read_text

HABITATS = ("mountain", "forest", "prairie", "wetland", "river")
HABITAT_CODES = "MFPWR"
WILDLIFE = ("bear", "elk", "salmon", "hawk", "fox")
WILDLIFE_CODES = "beshf"
NUM_HABITATS = 5
NUM_WILDLIFE = 5
NUM_TILES = 85
NUM_STARTERS = 5
NUM_KINDS = NUM_TILES + 3 * NUM_STARTERS

#: axial offsets of the 6 directions NE, E, SE, SW, W, NW
DIRECTIONS = np.array([[1, -1], [1, 0], [0, 1], [-1, 1], [-1, 0], [0, -1]], dtype=np.int32)
DIRECTION_NAMES = ("NE", "E", "SE", "SW", "W", "NW")
#: hex distance of the window edge from the starter keystone (reachable positions stop at 21)
RADIUS = 22
#: axial positions of the three starter hexes
STARTER_AT = ((0, 0), (-1, 1), (0, 1))

#: the shipped component file (the checkout's seeds/, or the installed data package)
DEFAULT_PATH = shipped_file("seeds", "cascadia.yaml")


def hex_distance(q: int, r: int) -> int:
    """Steps from the origin to (q, r)."""
    return max(abs(q), abs(r), abs(q + r))


def _window(radius: int) -> tuple[np.ndarray, dict[tuple[int, int], int], np.ndarray]:
    coords = [(q, r) for r in range(-radius, radius + 1) for q in range(-radius, radius + 1)
              if hex_distance(q, r) <= radius]
    index = {c: i for i, c in enumerate(coords)}
    nbr = np.full((len(coords), 6), -1, dtype=np.int32)
    for i, (q, r) in enumerate(coords):
        for d in range(6):
            nbr[i, d] = index.get((q + int(DIRECTIONS[d, 0]), r + int(DIRECTIONS[d, 1])), -1)
    return np.array(coords, dtype=np.int32), index, nbr


CELL_COORDS, CELL_INDEX, NEIGHBORS = _window(RADIUS)
NUM_CELLS = CELL_COORDS.shape[0]
STARTER_CELLS = np.array([CELL_INDEX[c] for c in STARTER_AT], dtype=np.int32)


def cell_of(q: int, r: int) -> int:
    """The window cell of axial (q, r); raises KeyError outside the window."""
    return CELL_INDEX[(q, r)]


def dual_edges(hab_a: int, hab_b: int, rotation: int) -> list[int]:
    """Edge habitats [NE..NW] of a tile with habitats A, B at ``rotation``: A on edges k..k+2."""
    return [hab_a if (d - rotation) % 6 < 3 else hab_b for d in range(6)]


@dataclass(frozen=True)
class CascadiaData:
    """Immutable tables of one component file."""

    tile_codes: tuple[str, ...]
    #: habitats A, B per kind (B == A for keystones)
    kind_habitats: np.ndarray  # int8 [NUM_KINDS, 2]
    #: edge habitat per kind, rotation and direction
    kind_edges: np.ndarray  # int8 [NUM_KINDS, 6, 6]
    #: per kind: [allowed wildlife bitmask, keystone wildlife or -1, distinct rotations]
    kind_info: np.ndarray  # int8 [NUM_KINDS, 3]
    starter_names: tuple[str, ...]
    #: point tables padded to 9 columns (last value repeats): bear, elk, salmon, hawk, fox
    score_tables: np.ndarray  # int32 [5, 9]
    wildlife_per_animal: int
    nature_tokens: int
    turns_per_player: int
    tiles_per_player: int
    tiles_extra: int
    solo_bonus_min: int
    solo_bonus_points: int

    def tiles_used(self, players: int) -> int:
        """Tiles dealt into the stack plus market: 20 n + 3 (solo: 43)."""
        return self.tiles_per_player * max(players, 2) + self.tiles_extra


def _fail(path: Path, what: str) -> DataFileError:
    return DataFileError(f"malformed Cascadia data file {path}: {what}")


def _wildlife_mask(path: Path, letters: str) -> int:
    mask = 0
    for ch in letters:
        if ch not in WILDLIFE_CODES:
            raise _fail(path, f"unknown wildlife code {ch!r}")
        mask |= 1 << WILDLIFE_CODES.index(ch)
    return mask


def _habitat(path: Path, ch: str) -> int:
    if ch not in HABITAT_CODES:
        raise _fail(path, f"unknown habitat code {ch!r}")
    return HABITAT_CODES.index(ch)


def _table(path: Path, raw: dict, key: str) -> list[int]:
    values = raw.get(key)
    if not isinstance(values, list) or not values or not all(isinstance(v, int) for v in values):
        raise _fail(path, f"scoring.{key} must be a list of integers")
    return values + [values[-1]] * (9 - len(values))


@lru_cache(maxsize=4)
def load_data(path: str | None = None) -> CascadiaData:
    """Load and validate the component file (default ``seeds/cascadia.yaml``)."""
    p = Path(path) if path else DEFAULT_PATH
    text = read_text(p, "Cascadia data file", DataFileError)
    raw = parse_yaml(text, f"Cascadia data file {p}", DataFileError)
    if not isinstance(raw, dict):
        raise _fail(p, "top level must be a mapping")
    for key in ("tiles", "starters", "counts", "scoring"):
        if key not in raw:
            raise _fail(p, f"missing section {key!r}")
    tiles = raw["tiles"]
    if not isinstance(tiles, list) or len(tiles) != NUM_TILES:
        raise _fail(p, f"expected {NUM_TILES} tiles, found {len(tiles) if isinstance(tiles, list) else 0}")
    habs = np.zeros((NUM_KINDS, 2), dtype=np.int8)
    edges = np.zeros((NUM_KINDS, 6, 6), dtype=np.int8)
    info = np.zeros((NUM_KINDS, 3), dtype=np.int8)
    for t, code in enumerate(tiles):
        if not isinstance(code, str) or code.count(":") != 1:
            raise _fail(p, f"tile {t}: code {code!r} is not '<habitats>:<wildlife>'")
        hab_part, wild_part = code.split(":")
        if len(hab_part) not in (1, 2) or not wild_part:
            raise _fail(p, f"tile {t}: code {code!r} needs 1-2 habitats and at least one animal")
        a = _habitat(p, hab_part[0])
        b = _habitat(p, hab_part[-1])
        keystone = len(hab_part) == 1
        if keystone and len(wild_part) != 1:
            raise _fail(p, f"tile {t}: a keystone tile shows exactly one animal")
        habs[t] = (a, b)
        for k in range(6):
            edges[t, k] = dual_edges(a, b, k)
        mask = _wildlife_mask(p, wild_part)
        info[t] = (mask, WILDLIFE_CODES.index(wild_part) if keystone else -1, 1 if keystone else 6)
    starters = raw["starters"]
    if not isinstance(starters, list) or len(starters) != NUM_STARTERS:
        raise _fail(p, f"expected {NUM_STARTERS} starter tiles")
    names = []
    for s, starter in enumerate(starters):
        hexes = starter.get("hexes") if isinstance(starter, dict) else None
        if not isinstance(hexes, list) or len(hexes) != 3:
            raise _fail(p, f"starter {s} must have 3 hexes")
        names.append(str(starter.get("name", f"S{s}")))
        for j, hx in enumerate(hexes):
            if tuple(hx.get("at", ())) != STARTER_AT[j]:
                raise _fail(p, f"starter {s} hex {j} must be at {list(STARTER_AT[j])}")
            edge_str = str(hx.get("edges", ""))
            if len(edge_str) != 6:
                raise _fail(p, f"starter {s} hex {j}: edges must list 6 habitats")
            e = [_habitat(p, ch) for ch in edge_str]
            kind = NUM_TILES + 3 * s + j
            distinct = sorted(set(e))
            habs[kind] = (e[0], distinct[0] if distinct[0] != e[0] else distinct[-1])
            edges[kind, :] = e
            mask = _wildlife_mask(p, str(hx.get("wildlife", "")))
            keystone = len(distinct) == 1
            if keystone and bin(mask).count("1") != 1:
                raise _fail(p, f"starter {s} keystone hex must show exactly one animal")
            info[kind] = (mask, int(mask).bit_length() - 1 if keystone else -1, 1)
    counts = raw["counts"]
    scoring = raw["scoring"]
    try:
        tables = np.array([_table(p, scoring, k) for k in
                           ("bear_pairs", "elk_line", "salmon_run", "hawk_isolated", "fox_types")],
                          dtype=np.int32)
        data = CascadiaData(
            tile_codes=tuple(tiles), kind_habitats=habs, kind_edges=edges, kind_info=info,
            starter_names=tuple(names), score_tables=tables,
            wildlife_per_animal=int(counts["wildlife_tokens_per_animal"]),
            nature_tokens=int(counts["nature_tokens"]),
            turns_per_player=int(counts["turns_per_player"]),
            tiles_per_player=int(counts["tiles_per_player"]),
            tiles_extra=int(counts["tiles_extra"]),
            solo_bonus_min=int(scoring["solo_corridor_bonus"]["min_tiles"]),
            solo_bonus_points=int(scoring["solo_corridor_bonus"]["points"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(p, f"counts/scoring section incomplete ({exc})") from exc
    for arr in (habs, edges, info, tables):
        arr.setflags(write=False)
    return data

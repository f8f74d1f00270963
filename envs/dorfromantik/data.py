"""Component tables of Dorfromantik loaded from ``seeds/dorfromantik.yaml``.

Tiles are numbered 0..47 (landscape, file order) and 48..72 (task tiles, file order). Terrains are
small integers (:data:`MEADOW` .. :data:`RIVER`); the five task types are the terrains 1..5, so a task's
type *is* the terrain its group is counted in.

Geometry: the board is an axial hex grid whose direction ``d`` is ``envs.core.hexgrid.HEX_DIRECTIONS[d]``
(E, NE, NW, W, SW, SE: counter-clockwise on screen). The file lists edges clockwise, so a tile placed
with rotation ``rot`` (``rot`` steps of 60 degrees clockwise) shows its file edge ``(-d - rot) % 6`` in
direction ``d``; :data:`DorfData.rot_edges` holds that table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from envs.core.errors import DataFileError
from envs.core.install import shipped_file
from envs.core.textfile import parse_yaml, read_text

MEADOW, FOREST, FIELD, VILLAGE, RAIL, RIVER = range(6)
TERRAIN_NAMES = ("meadow", "forest", "field", "village", "rail", "river")
#: the six hex directions, in the order of the kernels' edge index
DIRECTION_NAMES = ("E", "NE", "NW", "W", "SW", "SE")
TERRAIN_LETTERS = "MWGVTS"
#: the five task types, in terrain order 1..5
TASK_TYPES = TERRAIN_NAMES[1:]
NUM_LANDSCAPE = 48
NUM_TASK_TILES = 25
NUM_TILES = NUM_LANDSCAPE + NUM_TASK_TILES
MARKERS_PER_TYPE = 5

#: the shipped component file (the checkout's seeds/, or the installed data package)
DEFAULT_PATH = shipped_file("seeds", "dorfromantik.yaml")


@dataclass(frozen=True)
class DorfData:
    """Immutable component tables (numpy arrays are made read-only)."""

    tile_ids: tuple[str, ...]          # "L01".."L48", "T01".."T25"
    edges: np.ndarray                  # int8 (73, 6): terrain of file edge i (clockwise)
    rot_edges: np.ndarray              # int8 (73, 6 rotations, 6 directions)
    task_type: np.ndarray              # int8 (73,): terrain 1..5 of a task tile, 0 for landscape
    flag: np.ndarray                   # int8 (73,): terrain of the flag's area, 0 without flag
    markers: np.ndarray                # int8 (5, 5): marker values per task type (terrain - 1)
    set_aside_unseen: int              # landscape tiles returned to the box unseen at setup
    open_task_limit: int               # a task tile is drawn while fewer tasks than this are open
    forced_task_turns: int             # the first turns that always draw a task tile

    @property
    def rules(self) -> np.ndarray:
        """int32 (3,): the setup numbers in the order the kernels take them (``kernels.RULE_NAMES``)."""
        return np.array([self.set_aside_unseen, self.open_task_limit, self.forced_task_turns], np.int32)


def _fail(path: Path, msg: str) -> DataFileError:
    return DataFileError(f"{path}: {msg}")


def _parse_edges(path: Path, tid: str, code: object) -> list[int]:
    if not isinstance(code, str) or len(code) != 6 or any(c not in TERRAIN_LETTERS for c in code):
        raise _fail(path, f"tile {tid}: edges must be 6 letters of {TERRAIN_LETTERS}, got {code!r}")
    terrains = [TERRAIN_LETTERS.index(c) for c in code]
    for line in (RAIL, RIVER):
        if terrains.count(line) > 2:
            raise _fail(path, f"tile {tid}: more than two {TERRAIN_NAMES[line]} edges")
    return terrains


def load_data(path: str | Path = DEFAULT_PATH) -> DorfData:
    """Read and validate the component file; any problem raises DataFileError naming it."""
    path = Path(path)
    text = read_text(path, "Dorfromantik data file", DataFileError)
    raw = parse_yaml(text, f"Dorfromantik data file {path}", DataFileError)
    if not isinstance(raw, dict):
        raise _fail(path, "top level must be a mapping")
    for key in ("landscape_tiles", "task_tiles", "task_markers"):
        if key not in raw:
            raise _fail(path, f"missing key {key!r}")
    unknown = sorted(str(k) for k in raw if k not in TOP_LEVEL_KEYS)
    if unknown:
        raise _fail(path, f"unknown key(s) {', '.join(unknown)}; known keys: {', '.join(TOP_LEVEL_KEYS)}")
    land, tasks = raw["landscape_tiles"], raw["task_tiles"]
    if not isinstance(land, list) or len(land) != NUM_LANDSCAPE:
        raise _fail(path, f"landscape_tiles must list {NUM_LANDSCAPE} tiles")
    if not isinstance(tasks, list) or len(tasks) != NUM_TASK_TILES:
        raise _fail(path, f"task_tiles must list {NUM_TASK_TILES} tiles")
    ids: list[str] = []
    edges = np.zeros((NUM_TILES, 6), np.int8)
    task_type = np.zeros(NUM_TILES, np.int8)
    flag = np.zeros(NUM_TILES, np.int8)
    for i, entry in enumerate(land + tasks):
        if not isinstance(entry, dict) or "id" not in entry or "edges" not in entry:
            raise _fail(path, f"tile entry {i} needs 'id' and 'edges'")
        tid = str(entry["id"])
        if tid in ids:
            raise _fail(path, f"duplicate tile id {tid}")
        ids.append(tid)
        edges[i] = _parse_edges(path, tid, entry["edges"])
        if i < NUM_LANDSCAPE:
            if "task" in entry:
                raise _fail(path, f"landscape tile {tid} cannot have a task")
            if entry.get("flag") is not None:
                name = entry["flag"]
                if name not in ("forest", "field", "village"):
                    raise _fail(path, f"tile {tid}: flag must be forest, field or village, got {name!r}")
                flag[i] = TERRAIN_NAMES.index(name)
                if flag[i] not in edges[i]:
                    raise _fail(path, f"tile {tid}: flag {name} but no {name} edge")
        else:
            name = entry.get("task")
            if name not in TASK_TYPES:
                raise _fail(path, f"task tile {tid}: task must be one of {TASK_TYPES}, got {name!r}")
            task_type[i] = TERRAIN_NAMES.index(name)
            if task_type[i] not in edges[i]:
                raise _fail(path, f"task tile {tid}: no {name} edge")
    counts = np.bincount(task_type[NUM_LANDSCAPE:], minlength=6)[1:]
    if any(c != MARKERS_PER_TYPE for c in counts):
        raise _fail(path, f"need {MARKERS_PER_TYPE} task tiles per type, got {counts.tolist()}")
    markers = np.zeros((5, MARKERS_PER_TYPE), np.int8)
    spec = raw["task_markers"]
    for t, name in enumerate(TASK_TYPES):
        values = spec.get(name) if isinstance(spec, dict) else None
        if not isinstance(values, list) or len(values) != MARKERS_PER_TYPE or \
                not all(isinstance(v, int) and 1 <= v <= 60 for v in values):
            raise _fail(path, f"task_markers.{name} must list {MARKERS_PER_TYPE} positive integers")
        markers[t] = values
    rot_edges = np.zeros((NUM_TILES, 6, 6), np.int8)
    for rot in range(6):
        for d in range(6):
            rot_edges[:, rot, d] = edges[:, (-d - rot) % 6]
    for arr in (edges, rot_edges, task_type, flag, markers):
        arr.setflags(write=False)
    return DorfData(tuple(ids), edges, rot_edges, task_type, flag, markers,
                    *(_setting(path, raw, name) for name in SETTINGS))


#: every top-level key a data file may have (a misspelt setting is an error, never ignored)
TOP_LEVEL_KEYS = ("version", "set_aside_unseen", "open_task_limit", "forced_task_turns", "task_markers",
                  "landscape_tiles", "task_tiles")
#: the setup numbers of the file: key -> (smallest, largest, why the range)
SETTINGS = {
    # the board grid (radius 72) fits at most 71 placed tiles with their neighbours
    "set_aside_unseen": (2, NUM_LANDSCAPE - 1, "the board grid holds at most 71 placed tiles"),
    # the observation has three open-task slots, so never more than three tasks may be open
    "open_task_limit": (0, 3, "the observation shows at most three open tasks"),
    "forced_task_turns": (0, 3, "the observation shows at most three open tasks"),
}


def _setting(path: Path, raw: dict, name: str) -> int:
    """A setup number of the file (3, the rulebook's value, when absent), checked against its range."""
    low, high, why = SETTINGS[name]
    value = raw.get(name, 3)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(path, f"{name} must be an integer in {low}..{high} ({why}), got {value!r}")
    return value


_CACHE: dict[Path, DorfData] = {}


def default_data() -> DorfData:
    """The bundled component tables (loaded once per process)."""
    if DEFAULT_PATH not in _CACHE:
        _CACHE[DEFAULT_PATH] = load_data(DEFAULT_PATH)
    return _CACHE[DEFAULT_PATH]

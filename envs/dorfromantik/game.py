"""Dorfromantik: The Board Game, first campaign game (no boxes opened): the rules engine.

1-6 players build one landscape together and share one score. The state is a few numpy arrays (see
:mod:`envs.dorfromantik.kernels`); every rule runs in the numba kernels, so this engine and the
compiled whole-game loop play identical games. Rules notes: ``seeds/dorfromantik-rules.md``.

Action codec (one fixed ``Discrete(side * side * 6)``, ``side = 2 * window_radius + 1``)::

    action = ((r - cr + W) * side + (q - cq + W)) * 6 + rot

where (q, r) is the axial position of the placement, ``rot`` the clockwise rotation in 60-degree steps
and (cq, cr) the *window centre*: the midpoint (floor) of the bounding box of the placed tiles, (0, 0)
before the first tile. The window follows the board. With ``window_radius >= 36`` it provably holds
every position (70 tiles span at most 69 steps); the default 15 held every legal position in every
game the tests play (see ``lost_positions``), and a board that outgrows it recentres the window on
the drawn tile's legal positions. Positions outside the window are not expressible.
Decision 5 (a tile with no legal position) needs no action: the engine sets the tile aside and draws
again. Decision 4's fallback (no position keeps a new task achievable) shows up as a mask of every
edge-legal placement; the task then fails on placement.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, ScoreSheet, State
from envs.core.policies import rollout_policy
from envs.core.rng import new_stream
from envs.dorfromantik import kernels as K
from envs.dorfromantik.data import (
    DIRECTION_NAMES,
    NUM_LANDSCAPE,
    RAIL,
    TASK_TYPES,
    TERRAIN_NAMES,
    DorfData,
    default_data,
    load_data,
)
from envs.dorfromantik.layout import PLANES, VECTOR_SIZE, dorfromantik_layout
from envs.dorfromantik.legal import tile_signatures
from envs.dorfromantik.observation import observation_vector
from envs.dorfromantik.render import render_image, render_text

SAFE_WINDOW_RADIUS = 36


@dataclass
class DorfState(State):
    """One game: the kernel arrays plus the chance stream (``uint64[1]``)."""

    cells: np.ndarray
    frontier: np.ndarray
    placed: np.ndarray
    uf: np.ndarray
    tasks: np.ndarray
    deck: np.ndarray
    meta: np.ndarray
    stream: np.ndarray
    seed: int = 0

    def board(self) -> K.DorfBoard:
        """The 7 game arrays as the playout kernels' record (the same arrays, not copies)."""
        return K.DorfBoard(self.cells, self.frontier, self.placed, self.uf, self.tasks, self.deck,
                           self.meta)


class DorfromantikGame(Game):
    """Rules of Dorfromantik's first campaign game for ``players`` (1-6) seats sharing one score."""

    name = "dorfromantik"

    def __init__(self, players: int = 1, window_radius: int = 15, data_path: str | None = None):
        if isinstance(players, bool) or not isinstance(players, int | np.integer) or not 1 <= players <= 6:
            raise ConfigError(f"dorfromantik takes 1-6 players, got {players!r}")
        if isinstance(window_radius, bool) or not isinstance(window_radius, int | np.integer) or \
                not 4 <= window_radius <= SAFE_WINDOW_RADIUS:
            raise ConfigError(f"window_radius must be an integer in 4..{SAFE_WINDOW_RADIUS}, "
                              f"got {window_radius!r}")
        self.players = int(players)
        self.window_radius = int(window_radius)
        self.side = 2 * self.window_radius + 1
        self.num_actions = self.side * self.side * 6
        self.data: DorfData = load_data(data_path) if data_path else default_data()
        self._rot_edges = np.ascontiguousarray(self.data.rot_edges)
        self._task_type = np.ascontiguousarray(self.data.task_type)
        self._flag = np.ascontiguousarray(self.data.flag)
        self._markers = np.ascontiguousarray(self.data.markers)
        self._rules = self.data.rules
        self.tb = K.DorfTables(self._rot_edges, self._task_type, self._flag, tile_signatures(self._rot_edges),
                               self._markers, self._rules)
        self._mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
        self._out = np.zeros(K.SCORE_SIZE, np.int64)
        self._out2 = np.zeros(2, np.int64)

    # ---- setup and flow ---------------------------------------------------------------------

    def new_game(self, seed: int) -> DorfState:
        cells, frontier, placed, uf, tasks, deck, meta = K.new_arrays()
        stream = new_stream(int(seed), "dorfromantik/stacks")
        K.setup(cells, frontier, placed, uf, tasks, deck, meta, self._markers, self._rules, self.players,
                stream)
        K.advance(cells, frontier, deck, meta, self._rot_edges, self._task_type)
        return DorfState(cells, frontier, placed, uf, tasks, deck, meta, stream, int(seed))

    def new_game_with_stacks(self, seed: int, landscape: list[str] | None = None,
                             tasks: list[str] | None = None, markers: dict[str, list[int]] | None = None,
                             landscape_count: int | None = None) -> DorfState:
        """A game whose stacks start with the given tile ids (top first) and whose marker piles start
        with the given values; the rest keep the seed's shuffled order. ``landscape_count``
        (<= 48 - set_aside_unseen) shortens the landscape stack. For worked examples and puzzles."""
        cells, frontier, placed, uf, tasks_arr, deck, meta = K.new_arrays()
        stream = new_stream(int(seed), "dorfromantik/stacks")
        K.setup(cells, frontier, placed, uf, tasks_arr, deck, meta, self._markers, self._rules, self.players,
                stream)
        ids = self.data.tile_ids
        unseen = int(meta[K.M_UNSEEN])

        def reorder(order: list[int], wanted: list[str], kind: str, lo: int, hi: int) -> list[int]:
            try:
                first = [ids.index(w) for w in wanted]
            except ValueError as exc:
                raise ConfigError(f"unknown tile id in {wanted!r}") from exc
            if any(not lo <= t < hi for t in first) or len(set(first)) != len(first):
                raise ConfigError(f"{kind} stack must list distinct {kind} tile ids, got {wanted!r}")
            return first + [t for t in order if t not in first]

        if landscape:
            order = reorder(deck[unseen:K.NUM_LAND].tolist() + deck[:unseen].tolist(), landscape,
                            "landscape", 0, NUM_LANDSCAPE)
            deck[unseen:K.NUM_LAND] = order[:K.NUM_LAND - unseen]
            deck[:unseen] = order[K.NUM_LAND - unseen:]
        if landscape_count is not None:
            if not 0 <= landscape_count <= K.NUM_LAND - unseen:
                raise ConfigError(f"landscape_count must be in 0..{K.NUM_LAND - unseen}")
            stack = deck[unseen:unseen + landscape_count].copy()
            rest = deck[unseen + landscape_count:K.NUM_LAND].copy()
            deck[K.NUM_LAND - landscape_count:K.NUM_LAND] = stack
            deck[unseen:K.NUM_LAND - landscape_count] = rest
            meta[K.M_LAND_POS] = K.NUM_LAND - landscape_count
        if tasks:
            deck[K.DECK_TASK:K.DECK_MARKER] = reorder(deck[K.DECK_TASK:K.DECK_MARKER].tolist(), tasks,
                                                      "task", NUM_LANDSCAPE, K.NUM_TASK + NUM_LANDSCAPE)
        for name, values in (markers or {}).items():
            if name not in TASK_TYPES:
                raise ConfigError(f"unknown task type {name!r}")
            t = TASK_TYPES.index(name)
            pile = deck[K.DECK_MARKER + 5 * t:K.DECK_MARKER + 5 * t + 5]
            rest = pile.tolist()
            for v in values:
                if v not in rest:
                    raise ConfigError(f"no {name} marker {v} left for {values!r}")
                rest.remove(v)
            pile[:] = list(values) + rest
        K.advance(cells, frontier, deck, meta, self._rot_edges, self._task_type)
        return DorfState(cells, frontier, placed, uf, tasks_arr, deck, meta, stream, int(seed))

    def set_hand(self, state: DorfState, tile_id: str, marker: int = 0) -> None:
        """Put ``tile_id`` in hand instead of the drawn tile (a task tile needs its ``marker``).
        For building positions in tests and puzzles only: it bypasses the stacks."""
        if tile_id not in self.data.tile_ids:
            raise ConfigError(f"unknown tile id {tile_id!r}")
        tile = self.data.tile_ids.index(tile_id)
        if bool(self._task_type[tile]) != (marker > 0):
            raise ConfigError("a task tile needs a marker value and a landscape tile none")
        state.meta[K.M_DRAWN] = tile
        state.meta[K.M_MARKER] = marker
        state.meta[K.M_OVER] = 0

    def num_players(self) -> int:
        return self.players

    def current_player(self, state: DorfState) -> int:
        if self.is_over(state):
            return -1
        return int(state.meta[K.M_TURN]) % self.players

    def is_over(self, state: DorfState) -> bool:
        return bool(state.meta[K.M_OVER])

    def progress_marker(self, state: DorfState) -> int:
        return int(state.meta[K.M_PLACED]) // 10

    # ---- the action codec -------------------------------------------------------------------

    def window_centre(self, state: DorfState) -> tuple[int, int]:
        """Centre (q, r) of the action window: the floor midpoint of the placed tiles' bounding box,
        which keeps every empty neighbour inside while the board spans at most 2(W-1) along q and r.
        A wider board (never seen in play) centres on the bounding box of the drawn tile's legal
        positions instead, so that those still fit whenever they span at most 2W."""
        m = state.meta
        if m[K.M_PLACED] == 0:
            return 0, 0
        qmin, qmax, rmin, rmax = (int(m[i]) for i in (K.M_QMIN, K.M_QMAX, K.M_RMIN, K.M_RMAX))
        if max(qmax - qmin, rmax - rmin) > 2 * (self.window_radius - 1) and not self.is_over(state):
            legal = self.legal_placements(state)
            if legal:
                qs = [p[0] for p in legal]
                rs = [p[1] for p in legal]
                qmin, qmax, rmin, rmax = min(qs), max(qs), min(rs), max(rs)
        return (qmin + qmax) // 2, (rmin + rmax) // 2

    def decode_action(self, action: int) -> dict[str, Any]:
        """Window offsets (dq, dr) from the window centre and the rotation of ``action``."""
        action = int(action)
        if not 0 <= action < self.num_actions:
            raise IllegalActionError(action, f"outside the action space 0..{self.num_actions - 1}")
        index, rot = divmod(action, 6)
        wr, wq = divmod(index, self.side)
        return {"dq": wq - self.window_radius, "dr": wr - self.window_radius, "rot": rot}

    def encode_action(self, state: DorfState, q: int, r: int, rot: int) -> int | None:
        """The action placing at axial (q, r) with ``rot``, or None when (q, r) is outside the window."""
        cq, cr = self.window_centre(state)
        wq, wr = q - cq + self.window_radius, r - cr + self.window_radius
        if not (0 <= wq < self.side and 0 <= wr < self.side and 0 <= rot < 6):
            return None
        return (wr * self.side + wq) * 6 + rot

    def action_to_placement(self, state: DorfState, action: int) -> tuple[int, int, int]:
        """Axial (q, r) and rotation of ``action`` in ``state``."""
        f = self.decode_action(action)
        cq, cr = self.window_centre(state)
        return cq + f["dq"], cr + f["dr"], f["rot"]

    def describe_action(self, action: int) -> str:
        f = self.decode_action(action)
        return f"window offset ({f['dq']:+d}, {f['dr']:+d}), rotation {f['rot']}"

    # ---- legality ---------------------------------------------------------------------------

    def legal_placements(self, state: DorfState) -> list[tuple[int, int, int]]:
        """Every legal (q, r, rot) of the drawn tile, inside the window or not."""
        count = K.legal_moves(state.cells, state.frontier, state.uf, state.meta, self._rot_edges,
                              self._task_type, self._mask)
        if count == 0:
            return []
        n = int(state.meta[K.M_FRONT])
        slots, rots = np.nonzero(self._mask[:n])
        cells = state.frontier[slots]
        qs = cells % K.GRID_SIDE - K.GRID_RADIUS
        rs = cells // K.GRID_SIDE - K.GRID_RADIUS
        return list(zip(qs.tolist(), rs.tolist(), rots.tolist(), strict=True))

    def _position_key(self, state: DorfState) -> tuple[int, ...]:
        m = state.meta
        return tuple(int(m[i]) for i in (K.M_PLACED, K.M_DRAWN, K.M_MARKER, K.M_OVER, K.M_SET_ASIDE,
                                         K.M_TASK_POS, K.M_LAND_POS))

    def legal_mask(self, state: DorfState) -> np.ndarray:
        key = self._position_key(state)
        cached = getattr(self, "_mask_cache", None)
        if cached is not None and cached[0] is state and cached[1] == key:
            return cached[2].copy()
        mask = self._compute_mask(state)
        self._mask_cache = (state, key, mask)
        return mask.copy()

    def _compute_mask(self, state: DorfState) -> np.ndarray:
        mask = np.zeros(self.num_actions, np.bool_)
        if self.is_over(state):
            return mask
        count = K.legal_moves(state.cells, state.frontier, state.uf, state.meta, self._rot_edges,
                              self._task_type, self._mask)
        if count == 0:
            return mask
        n = int(state.meta[K.M_FRONT])
        slots, rots = np.nonzero(self._mask[:n])
        cells = state.frontier[slots]
        cq, cr = self.window_centre(state)
        wq = cells % K.GRID_SIDE - K.GRID_RADIUS - cq + self.window_radius
        wr = cells // K.GRID_SIDE - K.GRID_RADIUS - cr + self.window_radius
        inside = (wq >= 0) & (wq < self.side) & (wr >= 0) & (wr < self.side)
        mask[((wr[inside] * self.side + wq[inside]) * 6 + rots[inside])] = True
        return mask

    def lost_positions(self, state: DorfState) -> int:
        """Legal placements the action window cannot express (0 unless the board outgrows the window)."""
        return len(self.legal_placements(state)) - int(self.legal_mask(state).sum())

    def why_illegal(self, state: DorfState, action: int) -> str:
        q, r, rot = self.action_to_placement(state, action)
        return self.placement_problem(state, q, r, rot) or "not legal in this state"

    def placement_problem(self, state: DorfState, q: int, r: int, rot: int) -> str | None:
        """Why placing the drawn tile at (q, r) with ``rot`` is illegal, or None when it is legal."""
        if self.is_over(state):
            return "the game is over"
        if not 0 <= rot < 6:
            return f"rotation {rot} is not in 0..5"
        if max(abs(q), abs(r), abs(q + r)) > K.GRID_RADIUS - 2:
            return "not adjacent to any placed tile"
        cell = (r + K.GRID_RADIUS) * K.GRID_SIDE + (q + K.GRID_RADIUS)
        m = state.meta
        if state.cells[cell, 0] >= 0:
            return f"position ({q}, {r}) already holds a tile"
        if state.cells[cell, 3] < 0:
            if m[K.M_PLACED] == 0:
                return "the first tile goes at the origin (0, 0)"
            return f"position ({q}, {r}) is not adjacent to any placed tile"
        tile = int(m[K.M_DRAWN])
        for d in range(6):
            n = cell + int(K.DIR_OFFSETS[d])
            if state.cells[n, 0] < 0:
                continue
            a = int(self._rot_edges[tile, rot, d])
            b = int(self._rot_edges[state.cells[n, 0], state.cells[n, 1], (d + 3) % 6])
            if (a >= RAIL or b >= RAIL) and a != b:
                return (f"rail/river mismatch: the tile's {TERRAIN_NAMES[a]} edge toward "
                        f"{DIRECTION_NAMES[d]} meets a {TERRAIN_NAMES[b]} edge")
        terr = int(self._task_type[tile])
        if terr and not K.task_ok(state.cells, state.uf, self._rot_edges, tile, rot, cell, terr,
                                  int(m[K.M_MARKER]), self._out2):
            size = int(self._out2[0])
            target = int(m[K.M_MARKER])
            if (q, r, rot) in set(self.legal_placements(state)):
                return None  # decision 4 fallback: nothing keeps the task achievable
            if size > target:
                why = f"its {TERRAIN_NAMES[terr]} group would have {size} tiles, above the target {target}"
            else:
                why = (f"it would close its {TERRAIN_NAMES[terr]} group at {size} tiles, "
                       f"below the target {target}")
            return f"breaks the new task's limit: {why} (decision 4)"
        return None

    def step(self, state: DorfState, action: int) -> None:
        self.check_legal(state, action)
        q, r, rot = self.action_to_placement(state, action)
        self._apply(state, q, r, rot)

    def place_at(self, state: DorfState, q: int, r: int, rot: int) -> None:
        """Place the drawn tile at axial (q, r) with ``rot`` (any position, in the window or not)."""
        problem = self.placement_problem(state, q, r, rot)
        if problem is None and (q, r, rot) not in set(self.legal_placements(state)):
            problem = "not legal in this state"
        if problem:
            raise IllegalActionError(self.encode_action(state, q, r, rot) or -1, problem,
                                     f"place at ({q}, {r}) rotation {rot}")
        self._apply(state, q, r, rot)

    def _apply(self, state: DorfState, q: int, r: int, rot: int) -> None:
        cell = (r + K.GRID_RADIUS) * K.GRID_SIDE + (q + K.GRID_RADIUS)
        K.place(state.cells, state.frontier, state.placed, state.uf, state.tasks, state.meta,
                self._rot_edges, self._task_type, cell, rot)
        K.advance(state.cells, state.frontier, state.deck, state.meta, self._rot_edges, self._task_type)

    # ---- what is on the table ---------------------------------------------------------------

    def drawn_tile(self, state: DorfState) -> dict[str, Any] | None:
        """The tile in hand: id, edges (rotation 0, in direction order), task type and marker."""
        tile = int(state.meta[K.M_DRAWN])
        if tile < 0:
            return None
        terr = int(self._task_type[tile])
        return {"tile": tile, "id": self.data.tile_ids[tile],
                "edges": [TERRAIN_NAMES[e] for e in self._rot_edges[tile, 0]],
                "task": TERRAIN_NAMES[terr] if terr else None,
                "target": int(state.meta[K.M_MARKER]) if terr else None}

    def placed_tiles(self, state: DorfState) -> list[tuple[int, int, int, int]]:
        """(q, r, tile, rot) of every placed tile, in placement order."""
        out = []
        for p in range(int(state.meta[K.M_PLACED])):
            cell, tile, rot = (int(x) for x in state.placed[p])
            out.append((cell % K.GRID_SIDE - K.GRID_RADIUS, cell // K.GRID_SIDE - K.GRID_RADIUS, tile, rot))
        return out

    def tasks(self, state: DorfState) -> list[dict[str, Any]]:
        """Every task tile on the board: position, type, target, current group size, open edges, status."""
        out = []
        for k in range(int(state.meta[K.M_TASKS])):
            node, terr, target, status = (int(x) for x in state.tasks[k])
            root = K.uf_root(state.uf, node)
            cell = int(state.placed[node // 5, 0])
            out.append({"q": cell % K.GRID_SIDE - K.GRID_RADIUS, "r": cell // K.GRID_SIDE - K.GRID_RADIUS,
                        "type": TERRAIN_NAMES[terr], "target": target,
                        "size": int(state.uf[1, root]), "open_edges": int(state.uf[2, root]),
                        "status": ("open", "completed", "failed")[status]})
        return out

    def open_tasks(self, state: DorfState) -> list[dict[str, Any]]:
        return [t for t in self.tasks(state) if t["status"] == "open"]

    def stack_counts(self, state: DorfState) -> dict[str, int]:
        m = state.meta
        return {"landscape": NUM_LANDSCAPE - int(m[K.M_LAND_POS]), "task": K.NUM_TASK - int(m[K.M_TASK_POS]),
                "set_aside": int(m[K.M_SET_ASIDE])}

    # ---- scores -----------------------------------------------------------------------------

    def score_vector(self, state: DorfState) -> np.ndarray:
        """Kernel score breakdown (see kernels.score_breakdown)."""
        out = np.zeros(K.SCORE_SIZE, np.int64)
        K.score_breakdown(state.cells, state.placed, state.uf, state.meta, self._flag, out)
        return out

    def breakdown(self, state: DorfState) -> dict[str, int]:
        """Categories (tasks, flags, longest_rail, longest_river), the per-type detail and the total."""
        s = self.score_vector(state)
        out = {"tasks": int(s[0:5].sum()), "flags": int(s[5:8].sum()),
               "longest_rail": int(s[K.S_RAIL]), "longest_river": int(s[K.S_RIVER])}
        for t, name in enumerate(TASK_TYPES):
            out[f"tasks_{name}"] = int(s[t])
        for t, name in enumerate(TASK_TYPES[:3]):
            out[f"flags_{name}"] = int(s[5 + t])
        out["total"] = int(s[K.S_TOTAL])
        return out

    def scores(self, state: DorfState) -> list[ScoreSheet]:
        b = self.breakdown(state)
        cats = {k: b[k] for k in ("tasks", "flags", "longest_rail", "longest_river")}
        m = state.meta
        extra = {k: v for k, v in b.items() if k not in cats and k != "total"}
        extra.update(completed_tasks=int(m[K.M_DONE]), failed_tasks=int(m[K.M_FAILED]),
                     open_tasks=int(m[K.M_OPEN_TASKS]), tiles_placed=int(m[K.M_PLACED]))
        return [ScoreSheet(b["total"], dict(cats), dict(extra)) for _ in range(self.players)]

    def campaign_record(self, state: DorfState, players: list[str], date: str | None = None) -> dict:
        """The campaign-log entry of a game (decision 9): date, player names, categories, total."""
        if not players or len(players) != self.players:
            raise ConfigError(f"campaign_record needs {self.players} player name(s), got {players!r}")
        b = self.breakdown(state)
        return {"game": self.name, "date": date or _dt.date.today().isoformat(),
                "players": [str(p) for p in players], "seed": int(state.seed),
                "finished": self.is_over(state),
                "categories": {k: v for k, v in b.items() if k != "total"}, "total": b["total"]}

    # ---- hidden information -----------------------------------------------------------------

    def determinize(self, state: DorfState, rng: np.random.Generator) -> DorfState:
        """Resample what nobody has seen: the order of both stacks (the landscape tiles set aside
        unseen are mixed back into the unseen landscape tiles) and each type's unseen markers."""
        new = state.copy()
        deck, m = new.deck, new.meta
        # sorting first makes the result a function of the unseen *sets* only: the real order cannot leak
        unseen_slots = np.r_[0:int(m[K.M_UNSEEN]), int(m[K.M_LAND_POS]):K.NUM_LAND]
        deck[unseen_slots] = rng.permutation(np.sort(deck[unseen_slots]))
        start = K.DECK_TASK + int(m[K.M_TASK_POS])
        deck[start:K.DECK_MARKER] = rng.permutation(np.sort(deck[start:K.DECK_MARKER]))
        for t in range(5):
            lo = K.DECK_MARKER + 5 * t + int(m[K.M_MARKER_POS + t])
            hi = K.DECK_MARKER + 5 * t + 5
            deck[lo:hi] = rng.permutation(np.sort(deck[lo:hi]))
        new.stream = np.array([rng.integers(0, 2**63, dtype=np.uint64)], dtype=np.uint64)
        new.seed = -1  # the real seed would rebuild the real stacks: a determinized copy names no game
        return new

    def rollout_returns(self, state: DorfState, seed: int, policy: str = "random") -> np.ndarray:
        """Play ``state`` (consumed) to the end inside numba; the shared final score for every seat."""
        if policy != "random":  # the others come from above (envs.core.policies)
            return rollout_policy(self.name, policy)(self, state, seed)
        stream = new_stream(int(seed), "dorfromantik/rollout")
        log = np.zeros((0, 2), np.int32)
        K.play_random(state.cells, state.frontier, state.placed, state.uf, state.tasks, state.deck,
                      state.meta, self._rot_edges, self._task_type, stream, self._mask, log)
        total = float(self.score_vector(state)[K.S_TOTAL])
        return np.full(self.players, total, dtype=np.float64)

    # ---- observation and pictures -----------------------------------------------------------

    def observation_shape(self) -> tuple[int, ...]:
        return (PLANES * self.side * self.side + VECTOR_SIZE,)

    def observation(self, state: DorfState, player: int) -> np.ndarray:
        """The same vector for every seat (:func:`envs.dorfromantik.observation.observation_vector`)."""
        return observation_vector(self, state, player)

    def layout(self):
        """Board planes and placements in the action window (:mod:`envs.dorfromantik.layout`)."""
        return dorfromantik_layout(self.window_radius)

    def render_ansi(self, state: DorfState, player: int | None = None) -> str:
        return render_text(self, state)

    def render_rgb(self, state: DorfState, player: int | None = None) -> np.ndarray:
        return render_image(self, state)


"""Dorfromantik's rules in plain Python: slow on purpose, the oracle of the tests and the benchmark baseline.

The board is a dict ``(q, r) -> (tile, rot)``; areas and lines are found by walking the board each time
they are needed, never kept incrementally. Only the chance (deck shuffles) is shared with the engine,
so that both draw the same tiles for the same seed.
"""

from __future__ import annotations

import random
from collections import deque

import numpy as np

from envs.core.hexgrid import HEX_DIRECTIONS
from envs.core.rng import new_stream, shuffle_prefix
from envs.dorfromantik.data import FIELD, FOREST, RAIL, RIVER, VILLAGE, DorfData, default_data

Pos = tuple[int, int]


class ReferenceGame:
    """One game of the first campaign game, rules written out plainly."""

    def __init__(self, seed: int, players: int = 1, data: DorfData | None = None):
        self.data = data or default_data()
        self.players = players
        self._edges = [tuple(int(e) for e in row) for row in self.data.edges]
        self._task_type = [int(t) for t in self.data.task_type]
        stream = new_stream(int(seed), "dorfromantik/stacks")
        land = np.arange(48, dtype=np.int16)
        task = np.arange(48, 73, dtype=np.int16)
        markers = [np.array(self.data.markers[t], dtype=np.int16) for t in range(5)]
        shuffle_prefix(land, 48, stream)
        shuffle_prefix(task, 25, stream)
        for t in range(5):
            shuffle_prefix(markers[t], 5, stream)
        self.land = [int(x) for x in land[self.data.set_aside_unseen:]]   # the first ones set aside unseen
        self.task_stack = [int(x) for x in task]
        self.markers = [[int(x) for x in m] for m in markers]
        self.board: dict[Pos, tuple[int, int]] = {}
        self.tasks: list[dict] = []                      # pos, terrain, target, status
        self.points = [0] * 5
        self.turn = 0
        self.set_aside = 0
        self.over = False
        self.drawn = -1
        self.marker = 0
        self._draw()

    # ---- geometry ---------------------------------------------------------------------------

    def edge(self, tile: int, rot: int, d: int) -> int:
        """Terrain of ``tile`` turned ``rot`` steps clockwise, toward direction d."""
        return self._edges[tile][(-d - rot) % 6]

    @staticmethod
    def neighbour(pos: Pos, d: int) -> Pos:
        return pos[0] + HEX_DIRECTIONS[d][0], pos[1] + HEX_DIRECTIONS[d][1]

    def group(self, board: dict[Pos, tuple[int, int]], start: Pos, terrain: int) -> tuple[set[Pos], int]:
        """Tiles of the ``terrain`` area or line through ``start`` and its edges facing empty positions."""
        seen = {start}
        todo = deque([start])
        open_edges = 0
        while todo:
            pos = todo.popleft()
            tile, rot = board[pos]
            for d in range(6):
                if self.edge(tile, rot, d) != terrain:
                    continue
                nb = self.neighbour(pos, d)
                if nb not in board:
                    open_edges += 1
                    continue
                ntile, nrot = board[nb]
                if self.edge(ntile, nrot, (d + 3) % 6) == terrain and nb not in seen:
                    seen.add(nb)
                    todo.append(nb)
        return seen, open_edges

    # ---- legality ---------------------------------------------------------------------------

    def edge_legal(self, tile: int, pos: Pos, rot: int) -> bool:
        if pos in self.board:
            return False
        if not self.board:
            return pos == (0, 0)
        touching = False
        for d in range(6):
            nb = self.neighbour(pos, d)
            if nb not in self.board:
                continue
            touching = True
            mine = self.edge(tile, rot, d)
            ntile, nrot = self.board[nb]
            theirs = self.edge(ntile, nrot, (d + 3) % 6)
            if mine in (RAIL, RIVER) or theirs in (RAIL, RIVER):
                if mine != theirs:
                    return False
        return touching

    def candidate_positions(self) -> set[Pos]:
        if not self.board:
            return {(0, 0)}
        return {self.neighbour(p, d) for p in self.board for d in range(6)} - set(self.board)

    def keeps_task_possible(self, tile: int, pos: Pos, rot: int) -> bool:
        terrain = self._task_type[tile]
        board = dict(self.board)
        board[pos] = (tile, rot)
        tiles, open_edges = self.group(board, pos, terrain)
        if len(tiles) > self.marker:
            return False
        return not (open_edges == 0 and len(tiles) < self.marker)

    def legal_placements(self, tile: int | None = None) -> set[tuple[int, int, int]]:
        """Every legal (q, r, rot) for the drawn tile (decision 4 applied, with its fallback)."""
        tile = self.drawn if tile is None else tile
        if tile < 0:
            return set()
        legal = {(p[0], p[1], rot) for p in self.candidate_positions() for rot in range(6)
                 if self.edge_legal(tile, p, rot)}
        if self._task_type[tile] and tile == self.drawn:
            keep = {m for m in legal if self.keeps_task_possible(tile, (m[0], m[1]), m[2])}
            if keep:
                return keep
        return legal

    # ---- flow -------------------------------------------------------------------------------

    def _draw(self) -> None:
        while True:
            open_count = sum(1 for t in self.tasks if t["status"] == "open")
            if self.task_stack and (self.turn < self.data.forced_task_turns
                                    or open_count < self.data.open_task_limit):
                tile = self.task_stack.pop(0)
                kind = self._task_type[tile] - 1
                self.marker = self.markers[kind].pop(0)
            elif self.land:
                tile = self.land.pop(0)
                self.marker = 0
            else:
                self.over = True
                self.drawn = -1
                self.marker = 0
                return
            self.drawn = tile
            if any(self.edge_legal(tile, p, rot) for p in self.candidate_positions() for rot in range(6)):
                return
            self.set_aside += 1

    def place(self, q: int, r: int, rot: int) -> None:
        if (q, r, rot) not in self.legal_placements():
            raise ValueError(f"illegal placement {(q, r, rot)}")
        tile = self.drawn
        self.board[(q, r)] = (tile, rot)
        terrain = self._task_type[tile]
        if terrain:
            self.tasks.append({"pos": (q, r), "terrain": terrain, "target": self.marker, "status": "open"})
        for task in self.tasks:
            if task["status"] != "open":
                continue
            tiles, open_edges = self.group(self.board, task["pos"], task["terrain"])
            if len(tiles) == task["target"]:
                task["status"] = "completed"
                self.points[task["terrain"] - 1] += task["target"]
            elif len(tiles) > task["target"] or open_edges == 0:
                task["status"] = "failed"
        self.turn += 1
        self._draw()

    # ---- score ------------------------------------------------------------------------------

    def longest(self, terrain: int) -> int:
        best = 0
        for pos, (tile, rot) in self.board.items():
            if any(self.edge(tile, rot, d) == terrain for d in range(6)):
                best = max(best, len(self.group(self.board, pos, terrain)[0]))
        return best

    def flag_points(self) -> dict[int, int]:
        out = {FOREST: 0, FIELD: 0, VILLAGE: 0}
        for pos, (tile, _) in self.board.items():
            f = int(self.data.flag[tile])
            if f:
                tiles, open_edges = self.group(self.board, pos, f)
                if open_edges == 0:
                    out[f] += len(tiles)
        return out

    def breakdown(self) -> dict[str, int]:
        flags = self.flag_points()
        out = {"tasks": sum(self.points), "flags": sum(flags.values()),
               "longest_rail": self.longest(RAIL), "longest_river": self.longest(RIVER)}
        out["total"] = sum(out.values())
        return out


def play_random_reference(seed: int, players: int = 1, data: DorfData | None = None) -> ReferenceGame:
    """A whole game with uniformly random legal placements (Python's random, seeded)."""
    game = ReferenceGame(seed, players, data)
    chooser = random.Random(seed)
    while not game.over:
        options = sorted(game.legal_placements())
        game.place(*chooser.choice(options))
    return game

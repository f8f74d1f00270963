"""What the replay viewer draws, per game: plain JSON data read from a position.

Each game has a view with ``position(state)`` (the boards of every seat and what is on the
table), ``candidate(state, action)`` (where an action would go, to highlight it),
``label(state, action)`` (the action in a player's words), ``stage(state)``
(the season, round or tile count, to jump to), ``chart(scores)`` (the score categories over time)
and a ``legend``. The viewer's JavaScript only draws these; every rule question is answered here,
by the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.cartographers import kernels as K
from envs.cascadia import kernels as cascadia_kernels
from envs.cascadia.data import CELL_COORDS, WILDLIFE
from envs.core.errors import ConfigError
from envs.core.game import Game, State

# Colours close to the printed components.
CARTOGRAPHERS_TERRAINS = [("empty", "#f4ecd8"), ("forest", "#3c8d3f"), ("village", "#c8423b"),
                          ("farm", "#e9c53c"), ("water", "#3f86d4"), ("monster", "#7b3fa0"),
                          ("mountain", "#8a6e4b"), ("wasteland", "#a39e93")]
CASCADIA_HABITATS = [("mountain", "#8f939a"), ("forest", "#2f6f3e"), ("prairie", "#dcc65a"),
                     ("wetland", "#79b8a4"), ("river", "#3f7fcf")]
CASCADIA_WILDLIFE = [("bear", "#5a3a22"), ("elk", "#c99a62"), ("salmon", "#ea7a86"), ("hawk", "#9cc7e8"),
                     ("fox", "#e86a1e")]
DORFROMANTIK_TERRAINS = [("meadow", "#a9d27c"), ("forest", "#2f7a3b"), ("field", "#efc94c"),
                         ("village", "#c9573f"), ("rail", "#6b4a32"), ("river", "#3f8ad8")]


def _sum(scores: dict[str, Any], suffixes: tuple[str, ...]) -> int:
    return int(sum(v for k, v in scores.items() if k.endswith(suffixes) and isinstance(v, (int, float))))


class CartographersView:
    """An 11x11 map per seat: terrain codes, the printed ruins, mountains, coins."""

    def __init__(self, game: Game):
        self.game, self.K = game, K

    def legend(self) -> dict[str, Any]:
        return {"terrains": [{"name": n, "color": c} for n, c in CARTOGRAPHERS_TERRAINS],
                "symbols": [["ruins", "printed ruins"], ["coin", "coin (a surrounded mountain)"],
                            ["candidate", "dashed outlines: the agent's candidates; pink: the move played"]]}

    def static(self) -> dict[str, Any]:
        tb = self.game.tb
        return {"kind": "grid", "size": 11, "ruins": np.flatnonzero(tb.ruins).tolist(),
                "mountains": [int(c) for c in tb.mountains]}

    def position(self, state: State) -> dict[str, Any]:
        game, K, meta = self.game, self.K, state.meta
        season = int(meta[K.M_SEASON])
        boards = [{"cells": "".join(str(int(t)) for t in state.grid[p]), "coins": int(state.coins[p]),
                   "mountains_done": state.mtn_done[p].astype(int).tolist()} for p in range(game.players)]
        edicts = zip("ABCD", game.edict_names(state), strict=True)
        info = ["edicts " + "  ".join(f"{x}: {n}" for x, n in edicts)]
        if not game.is_over(state):
            card = int(meta[K.M_CARD])
            info.insert(0, f"{game.milestone_name(season)}, time {int(meta[K.M_TIME])}/"
                           f"{int(game.tb.seasons[season, 0])}; card {game.card_name(card)}"
                           + (" (must cover ruins)" if meta[K.M_RUINS] else "")
                           + (f"; ambush: seat {int(meta[K.M_ACTOR])} draws on seat "
                              f"{int(meta[K.M_TARGET])}'s map" if meta[K.M_PHASE] == K.PHASE_AMBUSH else ""))
        return {"boards": boards, "info": info}

    def candidate(self, state: State, action: int) -> dict[str, Any]:
        fields = self.game.decode_action(action, state)
        cells = fields.get("cells") or []
        return {"board": int(self.K.decision_map(state.meta)),
                "cells": [int(r) * 11 + int(c) for r, c in cells], "terrain": fields.get("terrain", "")}

    def label(self, state: State, action: int) -> str:
        f = self.game.decode_action(action, state)
        where = f.get("anchor") or f["cells"][0]
        at = f"at row {where[0]}, column {where[1]}"
        if f["kind"] == "place":
            terrain = f.get("terrain", f"terrain option {f['terrain_option']}")
            return f"{terrain} shape {f['shape'] + 1}, orientation {f['orientation']}, {at}"
        if f["kind"] == "ambush":
            return f"ambush monster, orientation {f['orientation']}, {at}"
        return f"1x1 {f['terrain']} {at}"

    def stage(self, state: State) -> str:
        return self.game.milestone_name(self.game.progress_marker(state))

    def chart(self, scores: dict[str, Any]) -> dict[str, int]:
        return {"edicts": _sum(scores, ("_A", "_B", "_C", "_D")), "coins": _sum(scores, ("_coins",)),
                "monsters": _sum(scores, ("_monsters",))}


class CascadiaView:
    """Every seat's hexes (habitat per edge, wildlife allowed and placed), and the market."""

    def __init__(self, game: Game):
        self.game, self.K, self.coords = game, cascadia_kernels, CELL_COORDS

    def legend(self) -> dict[str, Any]:
        return {"terrains": [{"name": n, "color": c} for n, c in CASCADIA_HABITATS],
                "wildlife": [{"name": n, "color": c, "letter": n[0].upper()} for n, c in CASCADIA_WILDLIFE],
                "symbols": [["keystone", "white ring: keystone tile (its animal there earns a nature token)"],
                            ["allowed", "small dots: wildlife the tile accepts"],
                            ["candidate", "dashed outlines: the agent's candidates; pink: the move "
                                          "played, its tile and token drawn faint (not yet placed)"]]}

    def static(self) -> dict[str, Any]:
        return {"kind": "hex"}

    def _hex(self, kind: int, edges: Any, token: int, q: int, r: int) -> list[int]:
        info = self.game.kind_info[kind]
        return [q, r, *(int(e) for e in edges), int(token), int(info[0]), int(info[1] >= 0)]

    def position(self, state: State) -> dict[str, Any]:
        game, K = self.game, self.K
        boards = []
        for p in range(game.players):
            hexes = []
            for c in state.cells[p, :state.pinfo[p, K.P_NCELLS]]:
                q, r = (int(v) for v in self.coords[c])
                kind, token = int(state.tiles[p, c]), int(state.tokens[p, c])
                hexes.append(self._hex(kind, state.edges[p, c], token, q, r))
            boards.append({"hexes": hexes, "nature": int(state.pinfo[p, K.P_NATURE])})
        market = []
        for i in range(4):
            tile, token = int(state.market[0, i]), int(state.market[1, i])
            market.append(None if tile < 0 else self._hex(tile, game.kind_edges[tile, 0], token, 0, 0))
        hand, hand_token = int(state.ctl[K.C_HAND_TILE]), int(state.ctl[K.C_HAND_TOKEN])
        info = [f"round {game.progress_marker(state)}" + ("" if game.is_over(state) else
                                                           f", {game.phase(state)} phase"),
                f"tiles left {int(state.ctl[K.C_STACK_LEN] - state.ctl[K.C_STACK_POS])}, "
                f"nature tokens in supply {int(state.ctl[K.C_SUPPLY])}"]
        over = game.is_over(state)
        placing = game.phase(state) == "tile" and hand >= 0  # in the token phase the tile is placed
        return {"boards": boards, "market": market, "info": info,
                "hand": self._hex(hand, game.kind_edges[hand, 0], -1, 0, 0) if placing else None,
                "hand_token": -1 if over else hand_token}

    def candidate(self, state: State, action: int) -> dict[str, Any]:
        f = self.game.decode_action(action)
        seat = self.game.current_player(state)
        if f["kind"] == "place_tile":  # with the tile in hand drawn in the candidate's rotation
            hand = int(state.ctl[self.K.C_HAND_TILE])
            preview = None if hand < 0 else self._hex(hand, self.game.kind_edges[hand, f["rotation"]], -1,
                                                      *f["at"])
            return {"board": seat, "hex": list(f["at"]), "rotation": f["rotation"], "preview": preview}
        if f["kind"] == "place_token":
            return {"board": seat, "hex": list(f["at"]), "token": int(state.ctl[self.K.C_HAND_TOKEN])}
        if f["kind"] == "pair":
            return {"board": seat, "market": [f["slot"], f["slot"]]}
        if f["kind"] == "nature_pair":
            return {"board": seat, "market": [f["tile_slot"], f["token_slot"]]}
        return {"board": seat}

    def label(self, state: State, action: int) -> str:
        f = self.game.decode_action(action)
        kind = f["kind"]
        if kind == "pair":
            return f"take tile and token of market slot {f['slot']}"
        if kind == "nature_pair":
            return f"nature token: tile of slot {f['tile_slot']}, token of slot {f['token_slot']}"
        if kind == "nature_redraw":
            slots = [str(i) for i in range(4) if f["subset"] >> i & 1]
            return f"nature token: redraw the tokens of slots {', '.join(slots)}"
        if kind == "three_redraw":
            return "redraw the three identical tokens"
        if kind == "place_tile":
            return f"tile at {tuple(f['at'])}, rotation {f['rotation']}"
        if kind == "place_token":
            token = int(state.ctl[self.K.C_HAND_TOKEN])
            return f"{WILDLIFE[token] if token >= 0 else 'token'} on {tuple(f['at'])}"
        return "return the token to the bag"

    def stage(self, state: State) -> str:
        return f"round {self.game.progress_marker(state)}"

    def chart(self, scores: dict[str, Any]) -> dict[str, int]:
        keys = ("bear", "elk", "salmon", "hawk", "fox", "habitat", "bonus", "nature_tokens")
        return {k: int(scores.get(k, 0)) for k in keys}


class DorfromantikView:
    """The shared landscape: tiles with their six edges, task markers with targets, flags."""

    def __init__(self, game: Game):
        self.game = game

    def legend(self) -> dict[str, Any]:
        return {"terrains": [{"name": n, "color": c} for n, c in DORFROMANTIK_TERRAINS],
                "symbols": [["task", "task marker: its target (white open, gold done, grey failed)"],
                            ["flag", "flag"],
                            ["candidate", "dashed outlines: the agent's candidates; pink: the move "
                                          "played, its tile drawn faint (not yet placed)"]]}

    def static(self) -> dict[str, Any]:
        return {"kind": "hex"}

    def position(self, state: State) -> dict[str, Any]:
        game = self.game
        tasks = {(t["q"], t["r"]): t for t in game.tasks(state)}
        status = {"open": 0, "completed": 1, "failed": 2}
        hexes = []
        for q, r, tile, rot in game.placed_tiles(state):
            task = tasks.get((q, r))
            hexes.append([q, r, *(int(e) for e in game._rot_edges[tile, rot]),
                          task["target"] if task else -1, status[task["status"]] if task else -1,
                          int(game._flag[tile]), task["size"] if task else 0])
        drawn = game.drawn_tile(state)
        counts = game.stack_counts(state)
        info = [f"tiles placed {len(hexes)}; stacks: landscape {counts['landscape']}, task {counts['task']}"]
        hand = None
        if drawn:
            hand = self._drawn_hex(drawn, 0, 0, 0)
            info.append(f"drawn tile {drawn['id']}" + (f": {drawn['task']} task, target {drawn['target']}"
                                                        if drawn["task"] else ""))
        return {"boards": [{"hexes": hexes}], "info": info, "hand": hand}

    def candidate(self, state: State, action: int) -> dict[str, Any]:
        game = self.game
        q, r, rot = game.action_to_placement(state, action)
        drawn = game.drawn_tile(state)
        preview = None if drawn is None else self._drawn_hex(drawn, rot, q, r)
        return {"board": 0, "hex": [q, r], "rotation": rot, "preview": preview}

    def _drawn_hex(self, drawn: dict[str, Any], rot: int, q: int, r: int) -> list[int]:
        """The tile in hand as a hex of the board (its task marker open, with its target)."""
        game = self.game
        return [q, r, *(int(e) for e in game._rot_edges[drawn["tile"], rot]),
                drawn["target"] if drawn["task"] else -1, 0 if drawn["task"] else -1,
                int(game._flag[drawn["tile"]]), 0]

    def label(self, state: State, action: int) -> str:
        q, r, rot = self.game.action_to_placement(state, action)
        return f"tile at ({q}, {r}), rotation {rot}"

    def stage(self, state: State) -> str:
        low = 10 * self.game.progress_marker(state)
        return f"tiles {low}-{low + 9}"

    def chart(self, scores: dict[str, Any]) -> dict[str, int]:
        return {k: int(scores.get(k, 0)) for k in ("tasks", "flags", "longest_rail", "longest_river")}


VIEWS = {"cartographers": CartographersView, "cascadia": CascadiaView, "dorfromantik": DorfromantikView}


def view_for(game: Game):
    """The view of ``game`` (ConfigError for a game the viewer cannot draw)."""
    if game.name not in VIEWS:
        raise ConfigError(f"the replay viewer cannot draw {game.name!r}; it draws {', '.join(VIEWS)}")
    return VIEWS[game.name](game)

"""Cascadia (base game, wildlife cards A) for 1-4 players: the rules engine behind the Game contract.

All rules live in :mod:`envs.cascadia.kernels`; this module owns the state layout, validation,
precise illegal-action reasons, score sheets, determinization, observations and the codec.
The Python path and the compiled loop call the same kernels, so they play identical games.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.cascadia import kernels as K
from envs.cascadia.data import (
    CELL_COORDS,
    CELL_INDEX,
    HABITATS,
    NEIGHBORS,
    NUM_CELLS,
    NUM_TILES,
    STARTER_CELLS,
    WILDLIFE,
    CascadiaData,
    load_data,
)
from envs.cascadia.kernels import CascadiaBoard
from envs.cascadia.layout import cascadia_layout
from envs.cascadia.observation import CELL_FEATURES, GLOBAL_FEATURES, observation_vector
from envs.cascadia.render import render_image, render_text
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, ScoreSheet, State, action_index
from envs.core.policies import rollout_policy
from envs.core.rng import derive_seed, new_stream

PHASE_NAMES = ("market", "tile", "token", "over")


@dataclass
class CascadiaState(State):
    """Arrays of one Cascadia game (layout documented in :mod:`envs.cascadia.kernels`)."""

    tiles: np.ndarray
    rots: np.ndarray
    edges: np.ndarray
    tokens: np.ndarray
    front: np.ndarray
    cells: np.ndarray
    flist: np.ndarray
    pinfo: np.ndarray
    market: np.ndarray
    stack: np.ndarray
    bag: np.ndarray
    ctl: np.ndarray
    rng: np.ndarray
    starters: np.ndarray

    def board_args(self) -> CascadiaBoard:
        """The argument block shared by apply/play kernels, as a named record."""
        return CascadiaBoard(*(getattr(self, name) for name in CascadiaBoard._fields))


class CascadiaGame(Game):
    """Cascadia with all five wildlife cards A.

    Options: ``players`` (1-4; 1 is the solo variant), ``second_place_tie`` ("zero", rules decision
    1, or "share": players tied for second each get 1), ``data_path`` (another component file).
    """

    name = "cascadia"
    num_actions = K.NUM_ACTIONS

    def __init__(self, players: int = 1, second_place_tie: str = "zero", data_path: str | None = None):
        if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not 1 <= players <= 4:
            raise ConfigError(f"cascadia: players must be an integer 1-4, got {players!r}")
        if second_place_tie not in ("zero", "share"):
            raise ConfigError("cascadia: second_place_tie must be 'zero' or 'share', "
                              f"got {second_place_tie!r}")
        self.players = int(players)
        self.second_place_tie = second_place_tie
        self.data: CascadiaData = load_data(data_path)
        if self.data.tiles_per_player + 3 > K.MAX_CELLS or self.data.tiles_used(self.players) > NUM_TILES:
            raise ConfigError(f"cascadia: the data file deals more tiles than the engine holds "
                              f"({self.data.tiles_used(self.players)} for {self.players} players)")
        self.nbr = NEIGHBORS
        self.kind_edges = self.data.kind_edges
        self.kind_info = self.data.kind_info
        self.tables = self.data.score_tables
        #: the constant tables as one record, for the kernels that take several of them
        self.tb = K.CascadiaTables(self.nbr, self.kind_edges, self.kind_info, self.tables,
                                   self.data.solo_bonus_min, self.data.solo_bonus_points)
        self._legal_buf = np.empty(K.MAX_LEGAL, dtype=np.int32)
        self._kind_features: np.ndarray | None = None  # observation table, built on first use

    # ---- setup and flow ----------------------------------------------------------------------

    def new_state_arrays(self) -> CascadiaState:
        """Uninitialised arrays of the right shapes for this game's player count."""
        n = self.players
        return CascadiaState(
            tiles=np.empty((n, NUM_CELLS), np.int16), rots=np.empty((n, NUM_CELLS), np.int8),
            edges=np.empty((n, NUM_CELLS, 6), np.int8), tokens=np.empty((n, NUM_CELLS), np.int8),
            front=np.empty((n, NUM_CELLS), np.int8), cells=np.empty((n, K.MAX_CELLS), np.int16),
            flist=np.empty((n, K.MAX_FRONT), np.int16), pinfo=np.empty((n, 4), np.int32),
            market=np.empty((2, 4), np.int16), stack=np.empty(NUM_TILES, np.int16),
            bag=np.empty(5, np.int32), ctl=np.empty(K.NUM_CTL, np.int32),
            rng=np.zeros(1, np.uint64), starters=np.empty(5, np.int16))

    def new_game(self, seed: int) -> CascadiaState:
        s = self.new_state_arrays()
        s.rng[:] = new_stream(seed, "chance")
        K.setup_game(self.players, s.starters, s.tiles, s.rots, s.edges, s.tokens, s.front, s.cells,
                     s.flist, s.pinfo, s.market, s.stack, s.bag, s.ctl, s.rng, self.nbr, self.kind_edges,
                     STARTER_CELLS, NUM_TILES, self.data.tiles_used(self.players),
                     self.data.wildlife_per_animal, self.data.nature_tokens,
                     1 if self.second_place_tie == "share" else 0)
        return s

    def num_players(self) -> int:
        return self.players

    def current_player(self, state: CascadiaState) -> int:
        return -1 if self.is_over(state) else int(state.ctl[K.C_CUR])

    def phase(self, state: CascadiaState) -> str:
        """"market", "tile", "token" or "over"."""
        return PHASE_NAMES[int(state.ctl[K.C_PHASE])]

    def is_over(self, state: CascadiaState) -> bool:
        return int(state.ctl[K.C_PHASE]) == K.PHASE_OVER

    def legal_actions(self, state: CascadiaState) -> np.ndarray:
        """The legal actions, ascending."""
        s = state
        n = K.legal_actions(s.tiles, s.tokens, s.cells, s.flist, s.pinfo, s.market, s.bag, s.ctl,
                            self.kind_info, self._legal_buf)
        return self._legal_buf[:n].copy()

    def legal_mask(self, state: CascadiaState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=bool)
        if not self.is_over(state):
            mask[self.legal_actions(state)] = True
        return mask

    def check_legal(self, state: CascadiaState, action: int) -> None:
        index = action_index(action, self.num_actions)
        if self.is_over(state):
            raise IllegalActionError(index, "the game is over")
        if index not in set(self.legal_actions(state).tolist()):
            raise IllegalActionError(index, self.why_illegal(state, index), self.describe_action(index))

    def step(self, state: CascadiaState, action: int) -> None:
        self.check_legal(state, action)
        K.apply_action(int(action), *state.board_args(), self.nbr, self.kind_edges, self.kind_info)

    def why_illegal(self, state: CascadiaState, action: int) -> str:
        """The precise reason ``action`` is illegal now."""
        f = self.decode_action(action)
        phase = self.phase(state)
        wanted = {"market": "market", "tile": "place_tile", "token": "place_token"}.get(phase)
        kind = f["kind"]
        family = {"pair": "market", "nature_pair": "market", "nature_redraw": "market",
                  "three_redraw": "market", "place_tile": "place_tile", "place_token": "place_token",
                  "return_token": "place_token"}[kind]
        if family != wanted:
            return f"wrong phase: the current decision is the {phase} phase, not {family}"
        p = int(state.ctl[K.C_CUR])
        if kind in ("nature_pair", "nature_redraw") and state.pinfo[p, K.P_NATURE] <= 0:
            return "no nature token to spend"
        if kind == "three_redraw":
            if state.ctl[K.C_THREE_USED]:
                return "the free three-token redraw was already used this turn"
            if state.ctl[K.C_ACTED]:
                return "the free three-token redraw is only allowed at the start of the turn"
            return "the market does not show exactly three identical tokens"
        if kind == "nature_redraw":
            return "the redraw subset includes an empty token slot or the bag is empty"
        if kind == "place_tile":
            cell = CELL_INDEX[f["at"]]
            if state.tiles[p, cell] >= 0:
                return f"occupied hex {f['at']}"
            if state.front[p, cell] == 0:
                return f"hex {f['at']} does not touch the player's area along an edge"
            return "a keystone tile looks the same in every rotation: use rotation 0"
        if kind == "place_token":
            cell = CELL_INDEX[f["at"]]
            if state.tiles[p, cell] < 0:
                return f"no tile at {f['at']}"
            if state.tokens[p, cell] >= 0:
                return f"occupied hex {f['at']}: it already holds a {WILDLIFE[state.tokens[p, cell]]}"
            animal = WILDLIFE[state.ctl[K.C_HAND_TOKEN]]
            return f"wrong animal: the tile at {f['at']} does not show a {animal}"
        return "not legal in this state"

    # ---- codec -------------------------------------------------------------------------------

    @staticmethod
    def encode_action(kind: str, slot: int = 0, tile_slot: int = 0, token_slot: int = 0, subset: int = 0,
                      at: tuple[int, int] = (0, 0), rotation: int = 0) -> int:
        """Action integer of a decision (inverse of :meth:`decode_action`)."""
        if kind == "pair":
            return K.A_PAIR + slot
        if kind == "nature_pair":
            return K.A_FREE + 4 * tile_slot + token_slot
        if kind == "nature_redraw":
            if not 1 <= subset <= 15:
                raise ValueError("subset is a bitmask 1..15 of token slots")
            return K.A_REDRAW + subset
        if kind == "three_redraw":
            return K.A_THREE
        if kind == "place_tile":
            return K.A_TILE + 6 * CELL_INDEX[tuple(at)] + rotation
        if kind == "place_token":
            return K.A_TOKEN + CELL_INDEX[tuple(at)]
        if kind == "return_token":
            return K.A_RETURN
        raise ValueError(f"unknown action kind {kind!r}")

    def decode_action(self, action: int) -> dict[str, Any]:
        a = int(action)
        if not 0 <= a < self.num_actions:
            raise IllegalActionError(a, f"outside the action space 0..{self.num_actions - 1}")
        if a < K.A_FREE:
            return {"kind": "pair", "slot": a}
        if a <= K.A_REDRAW:
            return {"kind": "nature_pair", "tile_slot": (a - K.A_FREE) // 4, "token_slot": (a - K.A_FREE) % 4}
        if a < K.A_THREE:
            return {"kind": "nature_redraw", "subset": a - K.A_REDRAW}
        if a == K.A_THREE:
            return {"kind": "three_redraw"}
        if a < K.A_TOKEN:
            cell, rot = divmod(a - K.A_TILE, 6)
            return {"kind": "place_tile", "at": tuple(int(v) for v in CELL_COORDS[cell]), "rotation": rot}
        if a < K.A_RETURN:
            return {"kind": "place_token", "at": tuple(int(v) for v in CELL_COORDS[a - K.A_TOKEN])}
        return {"kind": "return_token"}

    # ---- scores ------------------------------------------------------------------------------

    def score_table(self, state: CascadiaState) -> np.ndarray:
        """Raw score matrix (players x kernels.NUM_CAT)."""
        out = np.zeros((self.players, K.NUM_CAT), dtype=np.int32)
        K.score_all(state.edges, state.tokens, state.cells, state.pinfo, state.ctl, self.nbr, self.tables,
                    self.data.solo_bonus_min, self.data.solo_bonus_points, out)
        return out

    def scores(self, state: CascadiaState) -> list[ScoreSheet]:
        table = self.score_table(state)
        sheets = []
        for p in range(self.players):
            row = table[p]
            cats = {w: int(row[K.CAT_WILDLIFE + i]) for i, w in enumerate(WILDLIFE)}
            cats.update({f"corridor_{h}": int(row[K.CAT_CORRIDOR + i]) for i, h in enumerate(HABITATS)})
            cats.update({f"bonus_{h}": int(row[K.CAT_BONUS + i]) for i, h in enumerate(HABITATS)})
            cats["nature_tokens"] = int(row[K.CAT_NATURE])
            sheets.append(ScoreSheet(int(row[K.CAT_TOTAL]), cats,
                                     {"base": int(row[K.CAT_BASE]), "wildlife": int(row[0:5].sum()),
                                      "habitat": int(row[5:10].sum()), "bonus": int(row[10:15].sum())}))
        return sheets

    def winners(self, state: CascadiaState) -> list[int]:
        """Seats with the highest total; ties broken by more unused nature tokens, then shared."""
        table = self.score_table(state)
        keys = [(int(table[p, K.CAT_TOTAL]), int(table[p, K.CAT_NATURE])) for p in range(self.players)]
        best = max(keys)
        return [p for p in range(self.players) if keys[p] == best]

    def score_sheet_text(self, state: CascadiaState) -> str:
        lines = []
        for p, sheet in enumerate(self.scores(state)):
            c = sheet.categories
            wild = " ".join(f"{w}={c[w]}" for w in WILDLIFE)
            cor = " ".join(f"{h[:3]}={c['corridor_' + h]}+{c['bonus_' + h]}" for h in HABITATS)
            lines.append(f"player_{p}: total {sheet.total} (base {sheet.extra['base']})  wildlife {wild}  "
                         f"corridors+bonus {cor}  nature={c['nature_tokens']}")
        return "\n".join(lines)

    def progress_marker(self, state: CascadiaState) -> int:
        """The round number (1-based; every seat plays once per round)."""
        return int(state.ctl[K.C_TURN]) // self.players + 1

    # ---- hidden information and rollouts ------------------------------------------------------

    def determinize(self, state: CascadiaState, rng: np.random.Generator) -> CascadiaState:
        """Copy with the unseen tiles (stack and box together) reshuffled and a fresh chance stream
        for bag draws; everything the players have seen stays as it is."""
        s = state.copy()
        pos = int(s.ctl[K.C_STACK_POS])
        unseen = np.sort(s.stack[pos:])  # canonical order first, so the real order cannot leak
        rng.shuffle(unseen)
        s.stack[pos:] = unseen
        s.rng[0] = np.uint64(int(rng.integers(0, 2**63)))
        return s

    def rollout_returns(self, state: CascadiaState, seed: int, policy: str = "random") -> np.ndarray:
        """Finish ``state`` (consumed) with a compiled policy ("random", or "greedy": the greedy
        agent's epsilon-greedy playout); final totals per seat (float64)."""
        if policy != "random":  # the others come from above (envs.core.policies)
            return rollout_policy(self.name, policy)(self, state, seed)
        agent = np.array([derive_seed(seed, "rollout")], dtype=np.uint64)
        if not self.is_over(state):
            K.play_random(*state.board_args(), self.nbr, self.kind_edges, self.kind_info, agent)
        return self.score_table(state)[:, K.CAT_TOTAL].astype(np.float64)

    def play_random_compiled(self, state: CascadiaState, agent_stream: np.ndarray) -> int:
        """Finish ``state`` in place with the compiled random policy on ``agent_stream``."""
        return int(K.play_random(*state.board_args(), self.nbr, self.kind_edges, self.kind_info,
                                 agent_stream))

    # ---- observation and rendering ----------------------------------------------------------

    def observation_bounds(self) -> tuple[float, float]:
        """Range of every observation entry: counts scaled by 10-30 (a full fox card is 100/30)."""
        return 0.0, 10.0

    def observation_shape(self) -> tuple[int, ...]:
        return (NUM_CELLS * CELL_FEATURES + GLOBAL_FEATURES,)

    def observation(self, state: CascadiaState, player: int) -> np.ndarray:
        return observation_vector(self, state, player)

    def layout(self):
        """Board planes on the hex window, vector features, spatial and market actions
        (:mod:`envs.cascadia.layout`)."""
        return cascadia_layout()

    def render_ansi(self, state: CascadiaState, player: int | None = None) -> str:
        return render_text(self, state, player)

    def render_rgb(self, state: CascadiaState, player: int | None = None) -> np.ndarray:
        return render_image(self, state, player)

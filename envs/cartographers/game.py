"""The Cartographers rules engine (1-6 players, solo included) over the numba kernels.

The turn flow itself (revealing cards, ruins chains, solo ambushes, season scoring, the
reshuffle, the game end) lives in :mod:`envs.cartographers.kernels`; this class validates
options and actions, explains illegal actions, and presents scores, observations and pictures.

Action codec (``num_actions`` = 11374, see kernels.py):

- PLACE ``((t * 2 + k) * 8 + o) * 121 + anchor``: terrain option t of the card (0..4), shape
  option k (0..1), orientation o (0..7, the distinct orientations of the shape in
  :func:`envs.core.polyomino.all_orientations` order), anchor = top-left cell of the bounding box;
- FALLBACK ``9680 + t * 121 + cell``: the 1x1 of terrain t (forest, village, farm, water,
  monster), legal only when no offered option fits;
- AMBUSH ``10285 + o * 121 + anchor``: multiplayer, the neighbour draws the ambush shape;
- AMBUSH_1x1 ``11253 + cell``: one monster cell when the ambush shape fits nowhere.

Multiplayer: the seats decide one after another on the shared card, each on its own map; on
an ambush each seat in turn draws on the map of the seat whose map it receives (maps pass in
the arrow's direction, clockwise = to seat + 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.cartographers import kernels as K
from envs.cartographers.data import (
    DRAWABLE,
    EDICT_LETTERS,
    N_AMBUSH_CARDS,
    N_CELLS,
    N_DECK_CARDS,
    N_EXPLORE_CARDS,
    TERRAIN_NAMES,
    CartographersData,
    load_cartographers_data,
)
from envs.cartographers.layout import cartographers_layout
from envs.cartographers.observation import observation_vector
from envs.cartographers.render import render_ansi, render_rgb
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, ScoreSheet, State, action_index
from envs.core.policies import rollout_policy
from envs.core.polyomino import all_orientations
from envs.core.rng import new_stream

FALLBACK_TERRAINS = tuple(DRAWABLE)  # forest, village, farm, water, monster
_DATA_CACHE: dict[str | None, CartographersData] = {}
_TABLE_CACHE: dict[tuple[str, str], K.Tables] = {}


def _data(path: str | None) -> CartographersData:
    if path not in _DATA_CACHE:
        _DATA_CACHE[path] = load_cartographers_data(path)
    return _DATA_CACHE[path]


def _tables(data: CartographersData, side: str) -> K.Tables:
    key = (data.path, side)
    if key not in _TABLE_CACHE:
        _TABLE_CACHE[key] = K.build_tables(data, side)
    return _TABLE_CACHE[key]


@dataclass
class CartographersState(State):
    """All arrays of one game (see kernels.py for the meaning of every field)."""

    grid: np.ndarray  # int8[P, 121]
    coins: np.ndarray  # int16[P]
    mtn_done: np.ndarray  # bool[P, M]
    deck: np.ndarray  # int8[17]
    amb: np.ndarray  # int8[4]
    edicts: np.ndarray  # int8[4]
    meta: np.ndarray  # int32[N_META]
    rng: np.ndarray  # uint64[1]
    record: np.ndarray  # int16[P, 4, 5]

    def arrays(self) -> tuple:
        """The ``st`` tuple the kernels take."""
        return (self.grid, self.coins, self.mtn_done, self.deck, self.amb, self.edicts, self.meta,
                self.rng, self.record)

    @property
    def season(self) -> int:
        return int(self.meta[K.M_SEASON])

    @property
    def season_time(self) -> int:
        return int(self.meta[K.M_TIME])

    @property
    def current_card(self) -> int:
        return int(self.meta[K.M_CARD])


class CartographersGame(Game):
    """Cartographers with options ``players`` (1-6), ``side`` ("A" or "B"), ``edict_order``
    ("random": decision 1, or "fixed": A forest, B farm & water, C village, D arrangement),
    ``cards`` (4 names/indices/ids for edicts A-D, overrides the draw), ``coin_cap`` ("track", the
    default: the data file's ``coin_track.spaces``, 14 printed spaces; an integer; None for no cap),
    ``ambushes`` (True; False is the learning game, decision 16), ``data_path``."""

    name = "cartographers"
    num_actions = K.NUM_ACTIONS

    def __init__(self, players: int = 1, side: str = "A", edict_order: str = "random",
                 cards: list[str | int] | tuple | None = None, coin_cap: int | str | None = "track",
                 ambushes: bool = True, data_path: str | None = None):
        if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not 1 <= players <= 6:
            raise ConfigError(f"players must be an integer from 1 to 6, got {players!r}")
        self.data = _data(data_path)
        side = str(side).upper()
        if side not in self.data.maps:
            raise ConfigError(f"unknown map side {side!r}; known sides: {', '.join(self.data.maps)}")
        if edict_order not in ("random", "fixed"):
            raise ConfigError(f"edict_order must be 'random' or 'fixed', got {edict_order!r}")
        if coin_cap == "track":
            coin_cap = self.data.coin_spaces
        elif coin_cap is not None and (isinstance(coin_cap, bool)
                                       or not isinstance(coin_cap, (int, np.integer)) or coin_cap < 0):
            raise ConfigError(f"coin_cap must be 'track', None or an integer >= 0, got {coin_cap!r}")
        if not isinstance(ambushes, (bool, np.bool_)):
            raise ConfigError(f"ambushes must be True or False, got {ambushes!r}")
        self.forced = np.full(4, -1, dtype=np.int8)
        if cards is not None:
            if isinstance(cards, str) or len(cards) != 4:
                raise ConfigError(f"cards must list 4 scoring cards for edicts A-D, got {cards!r}")
            idx = [self.data.scoring_index(c) for c in cards]
            if len(set(idx)) != 4:
                raise ConfigError(f"cards must be 4 different scoring cards, got {cards!r}")
            self.forced[:] = idx
        self.players = int(players)
        self.side = side
        self.edict_order = edict_order
        self.coin_cap = coin_cap
        self.ambushes = bool(ambushes)
        self.tb = _tables(self.data, side)
        self._buf = np.empty((4096, 2), dtype=np.int32)
        self._solo_values = [int(v) for v in self.data.scoring_solo]
        self._mask_cache: tuple[bytes, np.ndarray | None] = (b"", None)
        self._scores_cache: tuple[bytes, list[ScoreSheet]] = (b"", [])
        self._category_keys = []
        for s, name in enumerate(self.data.season_names):
            x, y = (EDICT_LETTERS[e] for e in self.data.season_edicts[s])
            self._category_keys.append((f"{name}_{x}", f"{name}_{y}", f"{name}_coins", f"{name}_monsters",
                                        f"{name}_total"))

    # ---- the Game contract -------------------------------------------------------------------

    def num_players(self) -> int:
        return self.players

    def new_game(self, seed: int) -> CartographersState:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError(f"seed must be an integer >= 0, got {seed!r}")
        p = self.players
        meta = np.zeros(K.N_META, dtype=np.int32)
        meta[K.M_PLAYERS] = p
        meta[K.M_CAP] = -1 if self.coin_cap is None else int(self.coin_cap)
        meta[K.M_AMBUSHES] = int(self.ambushes)
        state = CartographersState(
            grid=np.zeros((p, N_CELLS), dtype=np.int8), coins=np.zeros(p, dtype=np.int16),
            mtn_done=np.zeros((p, self.tb.mountains.shape[0]), dtype=bool),
            deck=np.full(N_DECK_CARDS, -1, dtype=np.int8), amb=np.zeros(N_AMBUSH_CARDS, dtype=np.int8),
            edicts=np.zeros(4, dtype=np.int8), meta=meta, rng=new_stream(int(seed), "cartographers/chance"),
            record=np.zeros((p, 4, 5), dtype=np.int16))
        K.setup(state.arrays(), self.tb, self.forced, self.edict_order == "random")
        K.step(state.arrays(), self.tb, -1)
        return state

    def current_player(self, state: CartographersState) -> int:
        if state.meta[K.M_PHASE] == K.PHASE_OVER:
            return -1
        return int(state.meta[K.M_ACTOR])

    def legal_mask(self, state: CartographersState) -> np.ndarray:
        """A fresh bool mask; the last one is remembered by the content of ``grid`` and ``meta``
        (all it depends on), since envs ask twice per step."""
        key = state.grid.tobytes() + state.meta.tobytes()
        if self._mask_cache[0] != key:
            mask = np.zeros(K.NUM_ACTIONS, dtype=bool)
            K.legal_mask_into(state.arrays(), self.tb, self._buf, mask)
            self._mask_cache = (key, mask)
        return self._mask_cache[1].copy()

    def step(self, state: CartographersState, action: int) -> None:
        self.check_legal(state, action)
        K.step(state.arrays(), self.tb, int(action))

    def check_legal(self, state: CartographersState, action: int) -> None:
        a = action_index(action, K.NUM_ACTIONS)
        cached = self._mask_cache[1]
        if cached is not None and cached[a] \
                and self._mask_cache[0] == state.grid.tobytes() + state.meta.tobytes():
            return  # legal in the remembered mask of this very position
        code = K.check_action(state.arrays(), self.tb, a)
        if code != K.OK:
            raise IllegalActionError(a, self.why_illegal(state, a), self.describe_action(a))

    def is_over(self, state: CartographersState) -> bool:
        return bool(state.meta[K.M_PHASE] == K.PHASE_OVER)

    def progress_marker(self, state: CartographersState) -> int:
        return state.season

    def milestone_name(self, marker: int) -> str:
        """The season a progress marker stands for ("spring" ... "winter")."""
        return self.data.season_names[marker] if 0 <= marker < 4 else "the game"

    def score_sheet_text(self, state: CartographersState) -> str:
        """The score sheet as printed on the map: one row per season (the two edicts, coins,
        monsters, total), the final score, and for solo the evaluation points and the title."""
        lines = []
        for p, sheet in enumerate(self.scores(state)):
            lines.append(f"player_{p}" + ("" if self.players == 1 else f"  (monster points lost "
                                                                    f"{sheet.extra['monsters_lost']})"))
            lines.append(f"  {'season':<8}{'edict':>8}{'edict':>8}{'coins':>7}{'monsters':>10}{'total':>7}")
            for s, keys in enumerate(self._category_keys):
                a, b, coins, monsters, total = (sheet.categories[k] for k in keys)
                x, y = (EDICT_LETTERS[e] for e in self.data.season_edicts[s])
                lines.append(f"  {self.data.season_names[s]:<8}{f'{x} {a}':>8}{f'{y} {b}':>8}{coins:>7}"
                             f"{monsters:>10}{total:>7}")
            lines.append(f"  final score {sheet.total}")
            if self.players == 1:
                extra = sheet.extra
                lines.append(f"  solo: {sheet.total} - threshold {extra['threshold']} = evaluation "
                             f"{extra['evaluation']:+d} ({extra['title']})")
        if self.players > 1 and self.is_over(state):
            lines.append("winner(s): " + ", ".join(f"player_{w}" for w in self.winners(state)))
        return "\n".join(lines)

    # ---- scores --------------------------------------------------------------------------------

    def solo_threshold(self, state: CartographersState) -> int:
        """Sum of the solo values of the 4 scoring cards in play."""
        solo = self._solo_values
        e = state.edicts.tolist()
        return solo[e[0]] + solo[e[1]] + solo[e[2]] + solo[e[3]]

    def evaluation(self, state: CartographersState) -> int:
        """Solo evaluation points: final score minus :meth:`solo_threshold` (decision 15)."""
        return int(state.record[0, :, K.R_TOTAL].sum()) - self.solo_threshold(state)

    def scores(self, state: CartographersState) -> list[ScoreSheet]:
        """Per seat: total = sum of the recorded season totals; categories per season
        (``spring_A``, ``spring_B``, ``spring_coins``, ``spring_monsters`` (<= 0), ``spring_total``,
        then summer B/C, autumn C/D, winter D/A); extra: seasons scored, coins, monster points
        lost over the game (the tie-break), and for solo the threshold, evaluation and title.
        The sheets of the last call are reused while the record, coins, edicts and season are
        unchanged: treat them as read-only."""
        cache_key = state.record.tobytes() + state.coins.tobytes() + state.edicts.tobytes() \
            + state.meta[K.M_SEASON:K.M_SEASON + 1].tobytes()
        if self._scores_cache[0] == cache_key:
            return list(self._scores_cache[1])
        record = state.record.tolist()
        done = min(state.season, 4)
        coins = state.coins.tolist()
        threshold = self.solo_threshold(state) if self.players == 1 else 0
        sheets = []
        for p in range(self.players):
            cats: dict[str, int] = {}
            total = 0
            lost = 0
            for s, keys in enumerate(self._category_keys):
                rec = record[p][s]
                for key, value in zip(keys, (rec[0], rec[1], rec[2], -rec[3], rec[4]), strict=True):
                    cats[key] = value
                total += rec[4]
                lost += rec[3]
            extra: dict[str, Any] = {"seasons_scored": done, "coins": coins[p], "monsters_lost": lost}
            if self.players == 1:
                extra["threshold"] = threshold
                extra["evaluation"] = total - threshold
                extra["title"] = self.data.title_for(total - threshold)
            sheets.append(ScoreSheet(total, cats, extra))
        self._scores_cache = (cache_key, sheets)
        return list(sheets)

    def returns(self, state: CartographersState) -> np.ndarray:
        return state.record[:, :, K.R_TOTAL].sum(axis=1).astype(np.float64)

    def winners(self, state: CartographersState) -> list[int]:
        """Seats with the best total; ties broken by fewer monster points lost (decision 14)."""
        totals = K.totals(state.record)
        lost = state.record[:, :, K.R_MONSTERS].sum(axis=1)
        best = max((int(totals[p]), -int(lost[p])) for p in range(self.players))
        return [p for p in range(self.players) if (int(totals[p]), -int(lost[p])) == best]

    # ---- planning ------------------------------------------------------------------------------

    def determinize(self, state: CartographersState, rng: np.random.Generator) -> CartographersState:
        """Copy with the unrevealed deck order and the ambush pile resampled. The revealed cards
        of this season and the number of ambushes still hidden in the deck are known; which
        ambushes are in the deck and which in the pile is not."""
        new = state.copy()
        meta = new.meta
        pos, length = int(meta[K.M_POS]), int(meta[K.M_LEN])
        # sorted before shuffling: the result depends on the rng and on what is known, never on
        # the real hidden order
        hidden = sorted(int(c) for c in new.deck[pos:length])
        n_amb_in_deck = sum(1 for c in hidden if c >= N_EXPLORE_CARDS)
        unseen_amb = sorted([c for c in hidden if c >= N_EXPLORE_CARDS]
                            + [int(c) for c in new.amb[int(meta[K.M_AMB_POS]):]])
        rng.shuffle(unseen_amb)
        rest = [c for c in hidden if c < N_EXPLORE_CARDS] + unseen_amb[:n_amb_in_deck]
        rng.shuffle(rest)
        new.deck[pos:length] = rest
        new.amb[int(meta[K.M_AMB_POS]):] = unseen_amb[n_amb_in_deck:]
        # the chance stream itself is hidden future too (reshuffles): give it fresh bits
        new.rng[0] = np.uint64(int(rng.integers(0, 2**63)))
        return new

    def rollout_returns(self, state: CartographersState, seed: int, policy: str = "random") -> np.ndarray:
        """Finish ``state`` (consumed) in a compiled loop: "random", or "greedy" (the greedy
        agent's playout); final totals per seat (float64)."""
        if policy != "random":  # the others come from above (envs.core.policies)
            return rollout_policy(self.name, policy)(self, state, seed)
        stream = new_stream(int(seed), "cartographers/rollout")
        K.play_random(state.arrays(), self.tb, stream, np.zeros(0, dtype=np.int32))
        return K.totals(state.record).astype(np.float64)

    def play_random(self, state: CartographersState, seed: int) -> list[int]:
        """Play ``state`` to the end in the compiled loop with the random policy seeded by
        ``seed``; returns the actions taken (replayable through :meth:`step`)."""
        stream = new_stream(int(seed), "cartographers/rollout")
        out = np.zeros(4096, dtype=np.int32)
        n = K.play_random(state.arrays(), self.tb, stream, out)
        return [int(a) for a in out[:n]]

    # ---- the codec -----------------------------------------------------------------------------

    def encode_action(self, kind: str, cell: int | tuple[int, int], terrain: int = 0, shape: int = 0,
                      orientation: int = 0) -> int:
        """Inverse of :meth:`decode_action`. ``kind`` is place, fallback, ambush or ambush_1x1;
        ``cell`` the anchor (top-left of the bounding box) or the 1x1 cell, flat or (row, col);
        ``terrain`` the card's terrain option (place) or 0..4 forest..monster (fallback)."""
        if isinstance(cell, tuple):
            cell = cell[0] * 11 + cell[1]
        if not 0 <= cell < N_CELLS:
            raise ConfigError(f"cell {cell} outside the map")
        if kind == "place":
            if not (0 <= terrain < 5 and 0 <= shape < 2 and 0 <= orientation < 8):
                raise ConfigError("place needs terrain 0..4, shape 0..1, orientation 0..7")
            return ((terrain * 2 + shape) * 8 + orientation) * N_CELLS + cell
        if kind == "fallback":
            if not 0 <= terrain < 5:
                raise ConfigError("fallback terrain must be 0..4 (forest, village, farm, water, monster)")
            return K.FALLBACK_BASE + terrain * N_CELLS + cell
        if kind == "ambush":
            if not 0 <= orientation < 8:
                raise ConfigError("orientation must be 0..7")
            return K.AMBUSH_BASE + orientation * N_CELLS + cell
        if kind == "ambush_1x1":
            return K.AMBUSH_FALLBACK_BASE + cell
        raise ConfigError(f"unknown action kind {kind!r}; known: place, fallback, ambush, ambush_1x1")

    def decode_action(self, action: int, state: CartographersState | None = None) -> dict[str, Any]:
        """Fields of ``action``; with ``state`` (or for 1x1s) also the terrain name and cells."""
        a = int(action)
        if not 0 <= a < K.NUM_ACTIONS:
            raise IllegalActionError(a, f"outside the action space 0..{K.NUM_ACTIONS - 1}")
        card = state.current_card if state is not None else -1
        if a < K.FALLBACK_BASE:
            anchor = a % N_CELLS
            rest = a // N_CELLS
            o, rest = rest % 8, rest // 8
            k, t = rest % 2, rest // 2
            out: dict[str, Any] = {"kind": "place", "terrain_option": t, "shape": k, "orientation": o,
                                   "anchor": (anchor // 11, anchor % 11)}
            if 0 <= card < N_DECK_CARDS and self.data.card_kind[card] == 0:
                if t < self.data.card_n_terrains[card]:
                    out["terrain"] = TERRAIN_NAMES[self.data.card_terrains[card, t]]
                out["cells"] = self._cells(card, k, o, anchor)
            return out
        if a < K.AMBUSH_BASE:
            rel = a - K.FALLBACK_BASE
            cell = rel % N_CELLS
            return {"kind": "fallback", "terrain": FALLBACK_TERRAINS[rel // N_CELLS],
                    "cells": [(cell // 11, cell % 11)]}
        if a < K.AMBUSH_FALLBACK_BASE:
            rel = a - K.AMBUSH_BASE
            anchor = rel % N_CELLS
            out = {"kind": "ambush", "terrain": "monster", "orientation": rel // N_CELLS,
                   "anchor": (anchor // 11, anchor % 11)}
            if card >= N_EXPLORE_CARDS:
                out["cells"] = self._cells(card, 0, rel // N_CELLS, anchor)
            return out
        cell = a - K.AMBUSH_FALLBACK_BASE
        return {"kind": "ambush_1x1", "terrain": "monster", "cells": [(cell // 11, cell % 11)]}

    def describe_action(self, action: int) -> str:
        f = self.decode_action(action)
        if f["kind"] == "place":
            return (f"place terrain option {f['terrain_option']}, shape option {f['shape']}, "
                    f"orientation {f['orientation']} at {f['anchor']}")
        if f["kind"] == "ambush":
            return f"ambush shape orientation {f['orientation']} at {f['anchor']}"
        return f"{f['kind']} {f['terrain']} at {f['cells'][0]}"

    def _cells(self, card: int, k: int, o: int, anchor: int) -> list[tuple[int, int]] | None:
        shapes = self.data.card_shapes[card]
        if k >= len(shapes):
            return None
        orients = all_orientations(shapes[k])
        if o >= len(orients):
            return None
        r0, c0 = divmod(anchor, 11)
        return [(r0 + r, c0 + c) for r, c in orients[o]]

    def why_illegal(self, state: CartographersState, action: int) -> str:
        a = int(action)
        code = K.check_action(state.arrays(), self.tb, a)
        card = state.current_card
        name = self.data.card_names[card] if 0 <= card < N_DECK_CARDS else "?"
        if code == K.OK:
            return "the action is legal"
        if code == K.E_OVER:
            return "the game is over"
        if code == K.E_RANGE:
            return f"outside the action space 0..{K.NUM_ACTIONS - 1}"
        if code == K.E_PHASE:
            phase = "an ambush (draw the monster on your neighbour's map)" \
                if state.meta[K.M_PHASE] == K.PHASE_AMBUSH else f"an explore card ({name})"
            return f"wrong kind of action: the decision now is {phase}"
        f = self.decode_action(a, state)
        if code == K.E_TERRAIN:
            return (f"{name} offers {int(self.data.card_n_terrains[card])} terrain option(s), "
                    f"not option {f['terrain_option']}")
        if code == K.E_SHAPE:
            n = len(self.data.card_shapes[card])
            return f"{name} offers {n} shape option(s), not option {f['shape']}"
        if code == K.E_ORIENT:
            k = f.get("shape", 0)
            n = len(all_orientations(self.data.card_shapes[card][k]))
            return f"orientation {f['orientation']} does not exist: this shape has {n} distinct orientations"
        if code == K.E_OFFMAP:
            return "shape leaves the map"
        grid = state.grid[K.decision_map(state.meta)]
        if code in (K.E_FILLED, K.E_CELL_FILLED):
            for r, c in f["cells"]:
                t = int(grid[r * 11 + c])
                if t != 0:
                    return f"cell ({r},{c}) is {'a ' if t != 7 else ''}{TERRAIN_NAMES[t]}"
        if code == K.E_RUINS:
            if not np.any(self.tb.ruins & (grid == 0)):
                return "ruins constraint: no empty ruins cell is left, so only the 1x1 fallback is allowed"
            return "ruins constraint: must cover an empty ruins cell"
        if code == K.E_FALLBACK_WHILE_FITS:
            return "fallback 1x1 is only allowed when no offered shape fits"
        return f"illegal (code {code})"

    # ---- views ---------------------------------------------------------------------------------

    def observation(self, state: CartographersState, player: int) -> np.ndarray:
        """What ``player`` sees (:func:`envs.cartographers.observation.observation_vector`)."""
        return observation_vector(self, state, player)

    def layout(self):
        """Board planes, vector features and spatial actions (:mod:`envs.cartographers.layout`)."""
        return cartographers_layout()

    def observation_bounds(self) -> tuple[float, float]:
        """Range of every observation entry: one-hots and ratios (coins/14 <= 21/14, time/8 <= 10/8)."""
        return 0.0, 2.0

    def observation_shape(self) -> tuple[int, ...]:
        return (K.OBS_SIZE,)

    def render_ansi(self, state: CartographersState, player: int | None = None) -> str:
        return render_ansi(self, state, player)

    def render_rgb(self, state: CartographersState, player: int | None = None) -> np.ndarray:
        return render_rgb(self, state, player)

    def card_name(self, card: int) -> str:
        """Name of deck card ``card`` (0..16)."""
        return self.data.card_names[card]

    def edict_names(self, state: CartographersState) -> list[str]:
        """The scoring card under each edict A-D."""
        return [self.data.scoring_names[c] for c in state.edicts]

"""A complete, tiny Game for testing the env wrappers without a real engine: scoring Nim.

A heap of 10..20 stones (drawn from the game seed) lies on the table. Seats take turns; a turn
takes 1, 2 or 3 stones (actions 0, 1, 2; never more than the heap holds, and 3 only from an odd
heap, so the legal set changes). Each stone taken is a
point ("stones"), and whoever empties the heap gets a bonus of 5 ("last"). With one seat it is
a solitaire: the score is 10..20 stones plus the bonus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, ScoreSheet, State
from envs.core.rng import numpy_generator

LAST_BONUS = 5


@dataclass
class NimState(State):
    heap: int
    turn: int
    stones: np.ndarray  # per seat
    last: np.ndarray  # per seat: 1 for the seat that emptied the heap


class NimGame(Game):
    """Scoring Nim for ``players`` seats (see the module docstring)."""

    name = "nim"
    num_actions = 3

    def __init__(self, players: int = 2):
        if not 1 <= int(players) <= 4:
            raise ConfigError(f"nim takes 1..4 players, got {players}")
        self.players = int(players)

    def new_game(self, seed: int) -> NimState:
        heap = int(numpy_generator(seed, "setup").integers(10, 21))
        return NimState(heap=heap, turn=0, stones=np.zeros(self.players, np.int64),
                        last=np.zeros(self.players, np.int64))

    def num_players(self) -> int:
        return self.players

    def current_player(self, state: NimState) -> int:
        return -1 if self.is_over(state) else state.turn % self.players

    def legal_mask(self, state: NimState) -> np.ndarray:
        mask = np.zeros(3, dtype=bool)
        if not self.is_over(state):
            mask[: min(3, state.heap)] = True
            mask[2] &= state.heap % 2 == 1
        return mask

    def why_illegal(self, state: NimState, action: int) -> str:
        return f"taking {action + 1} stones from a heap of {state.heap} (3 only from an odd heap)"

    def step(self, state: NimState, action: int) -> None:
        self.check_legal(state, action)
        seat = self.current_player(state)
        take = int(action) + 1
        state.heap -= take
        state.stones[seat] += take
        if state.heap == 0:
            state.last[seat] = 1
        state.turn += 1

    def is_over(self, state: NimState) -> bool:
        return state.heap == 0

    def scores(self, state: NimState) -> list[ScoreSheet]:
        sheets = []
        for i in range(self.players):
            stones, last = int(state.stones[i]), int(LAST_BONUS * state.last[i])
            sheets.append(ScoreSheet(total=stones + last, categories={"stones": stones, "last": last}))
        return sheets

    def determinize(self, state: NimState, rng: np.random.Generator) -> NimState:
        return state.copy()  # no hidden information

    def decode_action(self, action: int) -> dict[str, Any]:
        if not 0 <= int(action) < 3:
            raise IllegalActionError(action, "outside the action space 0..2")
        return {"take": int(action) + 1}

    def observation_shape(self) -> tuple[int, ...]:
        return (2 + self.players,)

    def observation(self, state: NimState, player: int) -> np.ndarray:
        obs = np.zeros(2 + self.players, dtype=np.float32)
        obs[0] = state.heap / 20.0
        obs[1] = state.heap % 4 / 3.0
        obs[2 + (player % self.players)] = 1.0
        return obs

    def render_ansi(self, state: NimState, player: int | None = None) -> str:
        return f"heap {'o' * state.heap} ({state.heap}); scores {[s.total for s in self.scores(state)]}"

    def render_rgb(self, state: NimState, player: int | None = None) -> np.ndarray:
        img = np.zeros((8, 80, 3), dtype=np.uint8)
        img[2:6, : 4 * state.heap] = 200
        return img

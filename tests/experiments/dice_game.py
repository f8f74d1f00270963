"""A tiny but complete Game for testing the experiment tools: "dice race".

Each player has ``rounds`` turns. At the start of a turn one die (1-6) is rolled from the
state's chance stream; the player then chooses:

- 0 ``bank``: add the die to the "dice" category;
- 1 ``safe``: add 3 to the "safe" category;
- 2 ``gamble``: add twice the die if it shows 4 or more, else nothing ("gamble" category);
  at most two gambles per player per game (so legal masks change).

One die is rolled per turn whatever the choices, so common random numbers hold exactly: two
agents on the same seed see the same dice. Highest total wins.

Solo (one player) mimics Cartographers' solo evaluation so ``solo-eval`` can be tested: two
"cards" are dealt from their own stream at setup, each with a target value; the score sheet's
extras hold ``threshold`` (sum of the targets), ``evaluation`` (total - threshold) and ``title``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.core.errors import IllegalActionError
from envs.core.game import Game, ScoreSheet, State
from envs.core.rng import derive_seed, new_stream, randint

ACTIONS = ("bank", "safe", "gamble")
MAX_GAMBLES = 2
CARDS = (("Low Road", 8), ("Middle Way", 10), ("High Hill", 12), ("Summit", 14))
TITLES = ((10, "High Roller"), (0, "Steady Hand"), (-10, "Gambler"), (-1000, "Busted"))


@dataclass
class DiceState(State):
    stream: np.ndarray
    points: np.ndarray  # (players, 3) points per category
    gambles: np.ndarray  # (players,)
    turn: int
    die: int
    cards: np.ndarray  # (2,) indices into CARDS


class DiceRaceGame(Game):
    """Dice race with ``players`` seats and ``rounds`` turns each."""

    name = "dice-race"
    num_actions = 3

    def __init__(self, players: int = 1, rounds: int = 6):
        if players < 1:
            raise ValueError("players must be >= 1")
        self.players = int(players)
        self.rounds = int(rounds)

    def new_game(self, seed: int) -> DiceState:
        state = DiceState(stream=new_stream(seed, "dice"), points=np.zeros((self.players, 3), np.int64),
                          gambles=np.zeros(self.players, np.int64), turn=0, die=0,
                          cards=np.zeros(2, np.int64))
        deal = new_stream(seed, "dice/cards")
        state.cards[0] = randint(deal, 4)
        state.cards[1] = (state.cards[0] + 1 + randint(deal, 3)) % 4
        state.die = 1 + randint(state.stream, 6)
        return state

    def num_players(self) -> int:
        return self.players

    def current_player(self, state: DiceState) -> int:
        return -1 if self.is_over(state) else state.turn % self.players

    def legal_mask(self, state: DiceState) -> np.ndarray:
        mask = np.zeros(3, dtype=bool)
        if self.is_over(state):
            return mask
        mask[0] = mask[1] = True
        mask[2] = state.gambles[self.current_player(state)] < MAX_GAMBLES
        return mask

    def step(self, state: DiceState, action: int) -> None:
        self.check_legal(state, action)
        seat = self.current_player(state)
        if action == 0:
            state.points[seat, 0] += state.die
        elif action == 1:
            state.points[seat, 1] += 3
        else:
            state.gambles[seat] += 1
            state.points[seat, 2] += 2 * state.die if state.die >= 4 else 0
        state.turn += 1
        if not self.is_over(state):
            state.die = 1 + randint(state.stream, 6)

    def is_over(self, state: DiceState) -> bool:
        return state.turn >= self.players * self.rounds

    def scores(self, state: DiceState) -> list[ScoreSheet]:
        sheets = []
        for p in range(self.players):
            total = int(state.points[p].sum())
            extra = {"gambles": int(state.gambles[p]), "label": f"p{p}"}
            if self.players == 1:
                threshold = sum(CARDS[c][1] for c in state.cards)
                extra.update(threshold=threshold, evaluation=total - threshold,
                             title=next(t for low, t in TITLES if total - threshold >= low))
            sheets.append(ScoreSheet(total=total, extra=extra, categories={
                name: int(state.points[p, i]) for i, name in enumerate(ACTIONS)}))
        return sheets

    def edict_names(self, state: DiceState) -> list[str]:
        """The two cards dealt (like Cartographers' scoring cards under edicts A-D)."""
        return [CARDS[c][0] for c in state.cards]

    @property
    def solo_titles(self) -> tuple[tuple[int, str], ...]:
        return TITLES

    def determinize(self, state: DiceState, rng: np.random.Generator) -> DiceState:
        new = state.copy()
        new.stream[0] = derive_seed(int(rng.integers(2**31)), "determinize")
        return new

    def decode_action(self, action: int) -> dict[str, Any]:
        if not 0 <= action < 3:
            raise IllegalActionError(action, "outside the action space")
        return {"choice": ACTIONS[action]}

    def observation(self, state: DiceState, player: int) -> np.ndarray:
        return np.concatenate([state.points.ravel(), [state.die, state.turn]]).astype(np.float32)

    def observation_shape(self) -> tuple[int, ...]:
        return (self.players * 3 + 2,)

    def render_rgb(self, state: DiceState, player: int | None = None) -> np.ndarray:
        return np.zeros((8, 8, 3), dtype=np.uint8)

    def render_ansi(self, state: DiceState, player: int | None = None) -> str:
        return f"turn {state.turn} die {state.die}\n" + self.score_sheet_text(state)


class PreferAgent:
    """Test agent: plays ``action`` when legal, else the lowest legal action."""

    name = "prefer"

    def __init__(self, game: Game, action: int = 0):
        self.action = int(action)

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        if legal_mask[self.action]:
            return self.action
        return int(np.flatnonzero(legal_mask)[0])

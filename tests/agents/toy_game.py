"""A tiny but complete Game with a hidden, shuffled deck, for testing agents without a real engine.

"Hidden draw": a deck of 12 cards (values 1..6, twice each) is shuffled from the game seed. One
card lies face up. Seats take turns (``turns`` in all); on a turn the acting seat chooses

* 0 ``take``: score the face-up card; the top of the deck becomes the new face-up card;
* 1 ``blind``: score the top card of the deck unseen (it is discarded; the face-up card stays);
* 2 ``gamble`` (legal only when the face-up card is 3 or less): the top card is revealed and
  discarded; score 7 if it is even, else 0;
* 3 ``pass``: nothing (legal only after the first turn).

Revealed and discarded cards are public; the order of the rest of the deck is hidden, so the
value of ``blind`` and ``gamble`` depends on the future and an agent that peeks plays
differently from one that does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.core.game import Game, ScoreSheet, State

DECK = np.array([1, 2, 3, 4, 5, 6] * 2, dtype=np.int64)
TAKE, BLIND, GAMBLE, PASS = range(4)


@dataclass
class ToyState(State):
    deck: np.ndarray
    pos: int
    up: int
    scores: np.ndarray
    turn: int


class ToyGame(Game):
    """The hidden-draw game for 1..3 seats (see module doc)."""

    name = "toy"
    num_actions = 4

    def __init__(self, players: int = 2, turns: int = 8):
        self.players = players
        self.turns = turns

    def new_game(self, seed: int) -> ToyState:
        deck = np.random.default_rng(seed).permutation(DECK)
        return ToyState(deck=deck, pos=1, up=int(deck[0]), scores=np.zeros(self.players, np.int64), turn=0)

    def num_players(self) -> int:
        return self.players

    def current_player(self, state: ToyState) -> int:
        return -1 if self.is_over(state) else state.turn % self.players

    def legal_mask(self, state: ToyState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=bool)
        if self.is_over(state):
            return mask
        mask[TAKE] = mask[BLIND] = True
        mask[GAMBLE] = state.up <= 3
        mask[PASS] = state.turn > 0
        return mask

    def step(self, state: ToyState, action: int) -> None:
        self.check_legal(state, action)
        seat = state.turn % self.players
        top = int(state.deck[state.pos])
        if action == TAKE:
            state.scores[seat] += state.up
            state.up = top
        elif action == BLIND:
            state.scores[seat] += top
        elif action == GAMBLE:
            state.scores[seat] += 7 if top % 2 == 0 else 0
        if action != PASS:
            state.pos += 1
        state.turn += 1

    def is_over(self, state: ToyState) -> bool:
        return state.turn >= self.turns

    def scores(self, state: ToyState) -> list[ScoreSheet]:
        return [ScoreSheet(int(s), {"cards": int(s)}) for s in state.scores]

    def determinize(self, state: ToyState, rng: np.random.Generator) -> ToyState:
        new = state.copy()
        hidden = np.sort(state.deck[state.pos:])  # canonical order first: the real order cannot leak
        new.deck[state.pos:] = rng.permutation(hidden)
        return new

    def rollout_returns(self, state: ToyState, seed: int, policy: str = "random") -> np.ndarray:
        rng = np.random.default_rng(seed)
        while not self.is_over(state):
            legal = np.flatnonzero(self.legal_mask(state))
            action = TAKE if policy == "greedy" else int(legal[rng.integers(legal.size)])
            self.step(state, action)
        return self.returns(state)

    def decode_action(self, action: int) -> dict[str, Any]:
        return {"move": ("take", "blind", "gamble", "pass")[action]}

    def observation(self, state: ToyState, player: int) -> np.ndarray:
        return np.array([state.up, state.turn, *state.scores], dtype=np.float32)

    def observation_shape(self) -> tuple[int, ...]:
        return (2 + self.players,)

    def render_rgb(self, state: ToyState, player: int | None = None) -> np.ndarray:
        return np.zeros((4, 4, 3), dtype=np.uint8)

    def render_ansi(self, state: ToyState, player: int | None = None) -> str:
        return f"up={state.up} turn={state.turn} scores={state.scores.tolist()}"


def play_game(game: Game, agents: list, seed: int) -> State:
    """Play one full game with one agent per seat; asserts every chosen action is legal."""
    state = game.new_game(seed)
    rngs = [np.random.default_rng([seed, seat]) for seat in range(game.num_players())]
    while not game.is_over(state):
        seat = game.current_player(state)
        mask = game.legal_mask(state)
        action = agents[seat].act(state.copy(), mask.copy(), rngs[seat])
        assert mask[action], f"agent {agents[seat].name} chose illegal action {action}"
        game.step(state, action)
    return state

"""The one function that plays a game: :func:`play_game`.

Common random numbers follow from the seed: ``game.new_game(seed)`` fixes every chance event
(the state carries its own chance stream), and seat ``i``'s agent draws from its own generator
``numpy_generator(seed, f"seat{i}")``. Two agents given the same seed therefore see the same
deck, bag and draws until their first different choice. Agents are built fresh for every game,
so a game's result depends only on (game options, agent specs, seed), never on which games were
played before it, in which process, or in which order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent, agent_label, make_agent
from agents.explain import enable_explanations, take_explanation
from envs.core.game import Game, State
from envs.core.rng import numpy_generator

#: called before every decision with (state, seat, action chosen); for tests and tracing
StepHook = Callable[[State, int, int], None]
#: game-level facts read from the final state (e.g. which scoring cards were in play)
FinalInfo = Callable[[State], dict[str, Any]]


@dataclass
class GameRecord:
    """The result of one game, per seat."""

    seed: int
    agents: list[str]
    totals: list[float]
    categories: list[dict[str, float]]
    extras: list[dict[str, Any]]
    decisions: list[int]
    decision_seconds: list[float]
    max_decision_seconds: list[float]
    wall_seconds: float
    winning_seats: list[int] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    actions: list[int] = field(default_factory=list)
    final_state: State | None = None
    #: per decision, the acting agent's view of its choice (``explain=True``; None where it offers none)
    explanations: list[dict[str, Any] | None] = field(default_factory=list)

    def seat_rows(self, timing: bool = True) -> list[dict[str, Any]]:
        """One flat row per seat (categories as ``cat_<name>``, scalar extras as ``x_<name>``).

        ``timing=False`` leaves out the wall-clock columns, so rows are a pure function of the
        seed (what :mod:`experiments.sim.simulate` writes)."""
        rows = []
        for seat, agent in enumerate(self.agents):
            row: dict[str, Any] = {"seed": self.seed, "seat": seat, "agent": agent,
                                   "total": self.totals[seat], "decisions": self.decisions[seat]}
            if len(self.agents) > 1:
                row["win"] = 1.0 / len(self.winning_seats) if seat in self.winning_seats else 0.0
            row.update(self.info)
            row.update({f"cat_{k}": v for k, v in self.categories[seat].items()})
            row.update({f"x_{k}": v for k, v in self.extras[seat].items() if _is_scalar(v)})
            if timing:
                n = max(1, self.decisions[seat])
                row["decision_ms_mean"] = 1000.0 * self.decision_seconds[seat] / n
                row["decision_ms_max"] = 1000.0 * self.max_decision_seconds[seat]
                row["game_seconds"] = self.wall_seconds
            rows.append(row)
        return rows


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str, np.integer, np.floating, np.bool_))


def _plain(value: Any) -> Any:
    """numpy scalars to Python scalars (so records pickle, print and serialise simply)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def build_agents(game: Game, agent_specs_by_seat: Sequence[str | dict[str, Any]]) -> list[Agent]:
    """One agent per seat, built from its spec (raises ConfigError on a bad name or option)."""
    return [make_agent(spec, game) for spec in agent_specs_by_seat]


def play_game(game: Game, agent_specs_by_seat: Sequence[str | dict[str, Any]], seed: int,
              keep_final_state: bool = False, on_step: StepHook | None = None,
              final_info: FinalInfo | None = None, explain: bool = False) -> GameRecord:
    """Play one game of ``game`` from ``seed`` with one agent spec per seat; return its record.

    Winners come from ``game.winners(state)`` when the game has its own tie-breaks, else from
    the totals (a tie is a shared win). ``explain`` keeps each agent's view of its choices
    (:mod:`agents.explain`; for game records), which never changes a choice."""
    players = game.num_players()
    if len(agent_specs_by_seat) != players:
        raise ValueError(f"{game.name} has {players} seats but {len(agent_specs_by_seat)} agents were given")
    agents = build_agents(game, agent_specs_by_seat)
    explanations: list[dict[str, Any] | None] = []
    if explain:
        enable_explanations(agents)
    rngs = [numpy_generator(seed, f"seat{i}") for i in range(players)]
    decisions = [0] * players
    seconds = [0.0] * players
    slowest = [0.0] * players
    actions: list[int] = []
    started = time.perf_counter()
    state = game.new_game(seed)
    while not game.is_over(state):
        seat = game.current_player(state)
        mask = game.legal_mask(state)
        tick = time.perf_counter()
        action = int(agents[seat].act(state, mask, rngs[seat]))
        spent = time.perf_counter() - tick
        decisions[seat] += 1
        seconds[seat] += spent
        slowest[seat] = max(slowest[seat], spent)
        if on_step is not None:
            on_step(state, seat, action)
        actions.append(action)
        if explain:
            explanations.append(take_explanation(agents[seat]))
        game.step(state, action)
    wall = time.perf_counter() - started
    sheets = game.scores(state)
    totals = [float(s.total) for s in sheets]
    game_winners = getattr(game, "winners", None)
    return GameRecord(
        seed=int(seed),
        agents=[agent_label(spec) for spec in agent_specs_by_seat],
        totals=totals,
        categories=[{k: float(v) for k, v in s.categories.items()} for s in sheets],
        extras=[{k: _plain(v) for k, v in s.extra.items()} for s in sheets],
        decisions=decisions,
        decision_seconds=seconds,
        max_decision_seconds=slowest,
        wall_seconds=wall,
        winning_seats=list(game_winners(state)) if callable(game_winners) else winners(totals),
        info={k: _plain(v) for k, v in final_info(state).items()} if final_info else {},
        actions=actions,
        final_state=state if keep_final_state else None,
        explanations=explanations,
    )


def winners(totals: Sequence[float]) -> list[int]:
    """Seats with the highest total (several on a tie; the games' tie-breaks are not in totals)."""
    best = max(totals)
    return [i for i, t in enumerate(totals) if t == best or math.isclose(t, best)]

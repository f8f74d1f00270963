"""Candidate views: a game's decision as a short list of moves, each a row of features.

A :class:`CandidateView` is what :class:`envs.core.candidate_env.CandidateEnv` needs of a game;
the agents package builds one per game from its learned candidate modules and registers it with
:func:`envs.core.policies.register_candidate_view` (envs never import agents).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from envs.core.game import Game, State
from envs.core.policies import build_agent

#: ``candidates(game, state) -> (actions int64[n], features float32[n, d])``
CandidateFn = Callable[[Game, State], tuple[np.ndarray, np.ndarray]]
#: the context columns every view has before its phase one-hot
BASE_CONTEXT = ("progress", "score", "margin")


class CandidateView(NamedTuple):
    """One game's candidate moves, their features and how to play them.

    Fields: ``candidates`` (the current decision's moves and features; empty when the decision
    has none, e.g. a Cartographers ambush), ``feature_names`` (d column names), ``phase``
    (``(game, state) -> int`` in ``[0, n_phases)``), ``greedy_theta`` (float64[n_phases, d]: the
    weights under which ``features @ theta[phase]`` ranks as the greedy agent), ``progress``
    (``(game, state) -> float`` in [0, 1]), ``fallback_spec`` (agent spec that plays decisions
    without candidates), ``max_candidates`` (K, the rows an env keeps), ``play`` (``(game, state,
    action)`` applying a candidate; None when candidates are plain actions, played by the env's
    step), ``score_scale`` (divides scores in the context) and ``bound`` (|feature| and |context|
    never exceed it: the observation space's bounds; the views' features are counts and point
    terms below 100).
    """

    candidates: CandidateFn
    feature_names: tuple[str, ...]
    phase: Callable[[Game, State], int]
    greedy_theta: np.ndarray
    progress: Callable[[Game, State], float]
    fallback_spec: str | dict | None = None
    max_candidates: int = 256
    play: Callable[[Game, State, int], None] | None = None
    score_scale: float = 100.0
    bound: float = 1e4

    @property
    def n_phases(self) -> int:
        return int(self.greedy_theta.shape[0])

    @property
    def context_names(self) -> tuple[str, ...]:
        """``progress``, ``score`` and ``margin`` (over ``score_scale``), then the phase one-hot."""
        return BASE_CONTEXT + tuple(f"phase_{i}" for i in range(self.n_phases))

    def context(self, game: Game, state: State, seat: int | None = None) -> np.ndarray:
        """float32[c]: the game's progress, ``seat``'s score (default: the player to move), its
        margin over the best other seat (0 solo), and the phase one-hot (the last phase once over)."""
        if seat is None:
            seat = game.current_player(state)
        totals = np.asarray(game.returns(state), dtype=np.float64)
        others = np.delete(totals, seat)
        margin = totals[seat] - others.max() if others.size else 0.0
        out = np.zeros(len(BASE_CONTEXT) + self.n_phases, dtype=np.float32)
        out[0] = self.progress(game, state)
        out[1] = totals[seat] / self.score_scale
        out[2] = margin / self.score_scale
        out[len(BASE_CONTEXT) + min(self.phase(game, state), self.n_phases - 1)] = 1.0  # over: last
        return out

    def greedy_values(self, game: Game, state: State, features: np.ndarray) -> np.ndarray:
        """float64[n]: ``features @ greedy_theta[phase]``, the greedy agent's ranking."""
        return np.asarray(features, dtype=np.float64) @ self.greedy_theta[self.phase(game, state)]

    def ranked(self, game: Game, state: State, limit: int | None = None
               ) -> tuple[np.ndarray, np.ndarray, int]:
        """(actions, features, n): the candidates by greedy value, best first (stable), at most
        ``limit`` (default ``max_candidates``) of the ``n`` there are."""
        actions, features = self.candidates(game, state)
        order = np.argsort(-self.greedy_values(game, state, features), kind="stable")
        order = order[:self.max_candidates if limit is None else limit]
        return actions[order], features[order], int(actions.size)

    def fallback_agent(self, game: Game) -> Any:
        """The agent of ``fallback_spec`` for ``game`` (built by the registered agent builder)."""
        if self.fallback_spec is None:
            raise RuntimeError(f"{game.name}: a decision without candidates and no fallback agent")
        return build_agent(self.fallback_spec, game)

    def fallback(self, game: Game, state: State, rng: np.random.Generator | None = None,
                 agent: Any = None) -> int:
        """The plain action that ``agent`` (default: :meth:`fallback_agent`) plays at a decision
        without candidates."""
        agent = self.fallback_agent(game) if agent is None else agent
        rng = np.random.default_rng(0) if rng is None else rng
        return int(agent.act(state, np.asarray(game.legal_mask(state), dtype=bool), rng))

"""The ``ppo:`` agent of a candidate network (:mod:`agents.ppo.candidate_network`), torch alone.

It lives with the learned candidate models because it plays their candidates (and Cascadia's
turn plans); :func:`make_ppo` is the ``ppo`` registry entry for both kinds of policy file.

Each decision lists the game's candidate moves as the candidate env does (the registered view's
rows, best greedy value first, at most the ``max_candidates`` the network was trained on), scores
them with the network and plays the best (or samples with ``sample=true`` at ``temperature``).
Decisions without candidates (a Cartographers ambush) are played by the view's fallback agent.
Where candidates are whole turns (Cascadia, the view has ``play``), the chosen turn is planned and
its actions played at the turn's decisions by the learned module's ``LinearPolicy`` (which plays
greedy where a planned action is not legal), as the ``learned`` agent does.
"""

# ruff: noqa: E402  (torch is checked for first, so a missing extra is one line)
from __future__ import annotations

from typing import Any

import numpy as np

from envs.core.install import require

require("torch", extra="rl")  # one line naming the extra, as agents.ppo does

import torch

from agents.learned import game_module
from agents.ppo.agent import PPOAgent, check_options
from agents.ppo.policy_file import build_network, is_candidate_policy, load_policy_payload
from agents.ppo.threads import one_torch_thread
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.policies import candidate_view


class CandidatePPOAgent:
    """Masked argmax (or sampling) over a candidate network's scores of the decision's candidates."""

    def __init__(self, game: Game, path: str | None = None, temperature: float = 1.0,
                 sample: bool = False, device: str = "cpu", **unknown: Any):
        check_options(path, temperature, sample, device, unknown)
        self.game = game
        self.payload = load_policy_payload(path)
        self.net = build_network(self.payload, game).to(device)
        self.view = candidate_view(game.name)
        self.max_candidates = int(self.payload["max_candidates"])
        self.device = device
        self.temperature = float(temperature)
        self.sample = sample
        self.name = f"ppo:{path}"
        self.last_explanation: dict[str, Any] | None = None
        self._fallback: Any = None
        self._turns: Any = None  # the learned module listing whole turns (Cascadia)
        self._planner: Any = None
        if self.view.play is not None:
            module = game_module(game.name)
            needed = ("candidate_turns_and_features", "turn_start", "LinearPolicy")
            if not all(hasattr(module, n) for n in needed):
                raise ConfigError(f"ppo: {game.name} candidates are whole turns, and its learned module "
                                  "cannot plan them")
            self._turns = module
            self._planner = module.LinearPolicy(game, self.view.greedy_theta)

    def rows(self, state: State) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(actions, features, turns): the decision's candidate rows as the env lists them; ``turns``
        holds each row's whole turn where candidates are turns (else None)."""
        if self._turns is None:
            actions, features, _ = self.view.ranked(self.game, state, self.max_candidates)
            return actions, features, None
        if not self._turns.turn_start(self.game, state):
            return np.zeros(0, np.int64), np.zeros((0, len(self.view.feature_names)), np.float32), None
        turns, features = self._turns.candidate_turns_and_features(self.game, state)
        order = np.argsort(-self.view.greedy_values(self.game, state, features), kind="stable")
        order = order[:self.max_candidates]
        return order.astype(np.int64), features[order], turns[order]

    def evaluate(self, state: State, features: np.ndarray) -> tuple[np.ndarray, float]:
        """The network's logits over the rows ``features`` and its value for the player to act."""
        context = self.view.context(self.game, state, self.game.current_player(state))
        rows = torch.from_numpy(np.asarray(features, dtype=np.float32)).to(self.device)[None]
        mask = torch.ones(rows.shape[:2], device=self.device)
        with torch.no_grad(), one_torch_thread(self.device):
            logits, value = self.net(rows, mask, torch.from_numpy(context).to(self.device)[None])
        return logits[0].cpu().numpy(), float(value[0])

    def choose(self, state: State, features: np.ndarray, rng: np.random.Generator) -> int:
        """The row to play (argmax, or a sample at ``temperature``); sets ``last_explanation``."""
        logits, value = self.evaluate(state, features)
        scaled = torch.from_numpy(logits.astype(np.float64)) / self.temperature
        probs = torch.softmax(scaled, dim=0).numpy()
        row = int(rng.choice(probs.size, p=probs / probs.sum())) if self.sample else int(np.argmax(logits))
        top = np.argsort(-probs, kind="stable")[:5]
        self.last_explanation = {"value": value, "chosen_row": row,
                                 "candidates": [{"row": int(i), "prob": float(probs[i])} for i in top]}
        return row

    def rank_actions(self, state: State, legal_mask: np.ndarray) -> np.ndarray:
        """The legal actions, the candidates most probable first, then the rest (the order MCTS
        widens in with ``prior=ppo:...``); ConfigError where candidates are whole turns."""
        if self._planner is not None:
            raise ConfigError(f"ppo: a {self.game.name} candidate network scores whole turns and cannot "
                              "rank single actions (prior=ppo:... needs a board network)")
        legal = np.flatnonzero(legal_mask)
        actions, features, _ = self.rows(state)
        if not actions.size:
            return legal
        logits, _ = self.evaluate(state, features)
        ranked = actions[np.argsort(-logits, kind="stable")]
        ranked = ranked[np.asarray(legal_mask, dtype=bool)[ranked]]
        return np.concatenate([ranked, legal[~np.isin(legal, ranked)]]).astype(np.int64)

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        if not np.any(legal_mask):
            raise RuntimeError("no legal action: the game should be over")
        actions, features, turns = self.rows(state)
        if self._planner is not None:  # whole turns: plan one at its first decision, then follow it
            if turns is not None and actions.size:
                self._planner.plan_turn(state, turns[self.choose(state, features, rng)])
            return self._planner.planned_action(state, legal_mask)
        if actions.size:
            return int(actions[self.choose(state, features, rng)])
        if self._fallback is None:
            self._fallback = self.view.fallback_agent(self.game)
        return int(self._fallback.act(state, legal_mask, rng))


def make_ppo(game: Game, path: str | None = None, **options: Any) -> PPOAgent | CandidatePPOAgent:
    """Registry factory of ``ppo:<path>``: a :class:`CandidatePPOAgent` for a candidate network's
    policy file, else the board network's :class:`~agents.ppo.agent.PPOAgent`."""
    if path and is_candidate_policy(load_policy_payload(path)):
        return CandidatePPOAgent(game, path=path, **options)
    return PPOAgent(game, path=path, **options)

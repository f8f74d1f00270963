"""The ``ppo:`` agent: a trained network playing with torch alone (no Ray).

``ppo:runs/train/cartographers-solo`` (a training run: its ``best/policy.pt``, the best network by
evaluation, else its latest ``policy.pt``; or a checkpoint folder), or ``ppo:path/to/policy.pt``.
Options: ``temperature`` (softmax temperature when sampling, default 1), ``sample`` (false: the
masked argmax, the default; true: sample from the masked softmax with the seat's rng),
``device`` ("cpu" or "cuda"). A candidate network's policy file gives a
:class:`~agents.learned.ppo_agent.CandidatePPOAgent` (same options).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.ppo.network import masked_logits
from agents.ppo.policy_file import build_network, is_candidate_policy, load_policy_payload
from agents.ppo.threads import one_torch_thread
from envs.core.errors import ConfigError
from envs.core.game import Game, State


def check_options(path: str | None, temperature: Any, sample: Any, device: Any,
                  unknown: dict[str, Any]) -> None:
    """ConfigError naming the first bad option of a ``ppo:`` agent."""
    if unknown:
        raise ConfigError(f"ppo: unknown option(s) {', '.join(sorted(unknown))}; "
                          "known: path (ppo:<path>), temperature, sample, device")
    if not path:
        raise ConfigError("ppo needs a checkpoint: ppo:<checkpoint folder or policy.pt>")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not temperature > 0:
        raise ConfigError(f"ppo: temperature must be a positive number, got {temperature!r}")
    if not isinstance(sample, bool):
        raise ConfigError(f"ppo: sample must be true or false, got {sample!r}")
    if device not in ("cpu", "cuda"):
        raise ConfigError(f"ppo: device must be cpu or cuda, got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("ppo: device=cuda but torch sees no GPU")


class PPOAgent:
    """Masked argmax (or masked sampling) over a trained network's logits."""

    def __init__(self, game: Game, path: str | None = None, temperature: float = 1.0,
                 sample: bool = False, device: str = "cpu", **unknown: Any):
        check_options(path, temperature, sample, device, unknown)
        self.game = game
        self.payload = load_policy_payload(path)
        if is_candidate_policy(self.payload):
            raise ConfigError(f"ppo: {path!r} is a candidate network: it plays as ppo:<path> but gives "
                              "no per-action policy or value to a search")
        self.net = build_network(self.payload, game).to(device)
        self.device = device
        self.temperature = float(temperature)
        self.sample = sample
        self.name = f"ppo:{path}"
        self.last_explanation: dict[str, Any] | None = None

    def evaluate(self, state: State, legal_mask: np.ndarray) -> tuple[np.ndarray, float]:
        """Raw logits over all actions and the value (points still to gain) for the player to act."""
        obs = np.asarray(self.game.observation(state, self.game.current_player(state)), dtype=np.float32)
        mask = torch.from_numpy(np.asarray(legal_mask, dtype=np.float32)).to(self.device)[None]
        with torch.no_grad(), one_torch_thread(self.device):
            logits, value = self.net(torch.from_numpy(obs).to(self.device)[None], mask)
        return logits[0].cpu().numpy(), float(value[0])

    def policy(self, state: State, legal_mask: np.ndarray) -> tuple[np.ndarray, float]:
        """Probabilities over all actions (0 where illegal, at this temperature) and the value."""
        logits, value = self.evaluate(state, legal_mask)
        mask = torch.from_numpy(np.asarray(legal_mask, dtype=np.float32))
        scaled = masked_logits(torch.from_numpy(logits) / self.temperature, mask)
        return torch.softmax(scaled, dim=0).numpy(), value

    def rank_actions(self, state: State, legal_mask: np.ndarray) -> np.ndarray:
        """The legal actions, most probable first (the order MCTS widens in with ``prior=ppo:...``)."""
        legal = np.flatnonzero(legal_mask)
        probs, _ = self.policy(state, legal_mask)
        return legal[np.argsort(-probs[legal], kind="stable")]

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(legal_mask)
        if legal.size == 0:
            raise RuntimeError("no legal action: the game should be over")
        probs, value = self.policy(state, legal_mask)
        if self.sample:
            p = probs[legal].astype(np.float64)
            action = int(legal[rng.choice(legal.size, p=p / p.sum())])
        else:
            action = int(legal[np.argmax(probs[legal])])
        top = legal[np.argsort(-probs[legal], kind="stable")[:5]]
        self.last_explanation = {"value": value,
                                 "candidates": [{"action": int(a), "prob": float(probs[a])} for a in top]}
        return action


def make_ppo(game: Game, path: str | None = None, **options: Any) -> PPOAgent:
    """The agent of a board network's ``policy.pt`` (the ``ppo`` registry entry,
    :func:`agents.learned.ppo_agent.make_ppo`, also takes candidate networks)."""
    return PPOAgent(game, path=path, **options)

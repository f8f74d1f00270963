"""A policy/value network over candidate moves (the ``candidates`` action space of the envs).

The logit of candidate ``i`` is ``features_i @ theta[phase] / temperature + mlp([symlog(features_i),
context])``: the linear term is a learned linear candidate model (``theta``, one row per phase,
trainable, initialised from a ``model.json`` or the view's greedy weights; the phase is read from
the context's one-hot), the MLP is shared over the candidates and its last layer starts at zero,
so the untrained network picks exactly the linear model's move. Masked candidates get
:data:`~agents.ppo.network.MASKED_LOGIT`. The value is an MLP over the context and the masked mean
of the candidates' symlog features, times ``value_scale``.

Pure torch: no Ray, so the ``ppo:`` agent loads a trained network anywhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.ppo.network import masked_logits
from envs.core.candidates import BASE_CONTEXT
from envs.core.errors import ConfigError

#: the value of ``network.type`` that selects this network
NETWORK_TYPE = "candidates"


@dataclass(frozen=True)
class CandidateNetConfig:
    """Size of the candidate network and where its linear term starts.

    ``init`` is "greedy" (the view's greedy weights) or the path of a learned ``model.json`` (or
    its folder); ``temperature`` divides the linear term; ``value_scale`` as in
    :class:`~agents.ppo.network.NetConfig`.
    """

    hidden: int = 64
    layers: int = 2
    temperature: float = 1.0
    value_scale: float = 100.0
    init: str = "greedy"

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> CandidateNetConfig:
        """Build from a config mapping; unknown keys and bad values give a ConfigError."""
        values = dict(values or {})
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(f"network: unknown key(s) {', '.join(unknown)} for type {NETWORK_TYPE}; "
                              f"known: type, {', '.join(known)}")
        for key, low, high in (("hidden", 1, 1024), ("layers", 1, 8)):
            if key in values and (isinstance(values[key], bool) or not isinstance(values[key], int)
                                  or not low <= values[key] <= high):
                raise ConfigError(f"network.{key} must be an integer in {low}..{high}, got {values[key]!r}")
        for key in ("temperature", "value_scale"):
            if key in values:
                value = values[key]
                if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                    raise ConfigError(f"network.{key} must be a positive number, got {value!r}")
                values[key] = float(value)
        if "init" in values and (not isinstance(values["init"], str) or not values["init"].strip()):
            raise ConfigError("network.init must be 'greedy' or the path of a model.json, "
                              f"got {values['init']!r}")
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def symlog(x: torch.Tensor) -> torch.Tensor:
    """``sign(x) * log(1 + |x|)``: counts and point terms of any size into a few units."""
    return torch.sign(x) * torch.log1p(torch.abs(x))


def mlp(inputs: int, hidden: int, layers: int, outputs: int) -> nn.Sequential:
    """``layers`` hidden ReLU layers of ``hidden`` units, then a linear output layer."""
    parts: list[nn.Module] = []
    width = inputs
    for _ in range(layers):
        parts += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    parts.append(nn.Linear(width, outputs))
    return nn.Sequential(*parts)


class CandidateScoringNet(nn.Module):
    """Candidates (B, K, d), candidate mask (B, K) and context (B, c) -> (masked logits (B, K),
    value (B,)). ``theta`` (n_phases x d) is the initial linear model (zeros when None: the
    weights are then expected from a state dict)."""

    def __init__(self, d: int, c: int, n_phases: int, config: CandidateNetConfig,
                 theta: np.ndarray | None = None):
        super().__init__()
        if c != len(BASE_CONTEXT) + n_phases:
            raise ConfigError(f"candidate network: a context of {c} columns does not hold "
                              f"{len(BASE_CONTEXT)} base columns and {n_phases} phases")
        self.config = config
        self.num_features, self.context_size, self.n_phases = int(d), int(c), int(n_phases)
        start = torch.zeros(n_phases, d) if theta is None else torch.as_tensor(
            np.asarray(theta, dtype=np.float32))
        if tuple(start.shape) != (n_phases, d):
            raise ConfigError(f"candidate network: theta must be {n_phases} x {d}, got {tuple(start.shape)}")
        self.theta = nn.Parameter(start.clone())
        self.policy_mlp = mlp(d + c, config.hidden, config.layers, 1)
        nn.init.zeros_(self.policy_mlp[-1].weight)
        nn.init.zeros_(self.policy_mlp[-1].bias)
        self.value_mlp = mlp(d + c, config.hidden, config.layers, 1)

    def linear_scores(self, candidates: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """(B, K): ``features @ theta[phase]`` with the phase one-hot of the context."""
        onehot = context[:, len(BASE_CONTEXT):]
        weights = onehot @ self.theta  # (B, d): the phase's row (a mix if the one-hot is not one)
        return torch.einsum("bkd,bd->bk", candidates, weights)

    def forward(self, candidates: torch.Tensor, mask: torch.Tensor,
                context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        candidates, mask, context = candidates.float(), mask.float(), context.float()
        batch, k, _ = candidates.shape
        squashed = symlog(candidates)
        rows = torch.cat([squashed, context[:, None, :].expand(batch, k, self.context_size)], dim=2)
        logits = self.linear_scores(candidates, context) / self.config.temperature \
            + self.policy_mlp(rows).squeeze(-1)
        pooled = (squashed * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        value = self.value_mlp(torch.cat([context, pooled], dim=1)).squeeze(-1) * self.config.value_scale
        return masked_logits(logits, mask), value


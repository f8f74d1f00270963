"""The project's action-masking PPO RLModule (RLlib 2.60 new API stack).

It subclasses RLlib's ``DefaultPPOTorchRLModule`` but builds no catalog: ``setup`` builds the
layout-driven :class:`~agents.ppo.network.BoardPolicyValueNet` of the game named in
``model_config`` (``{"game": ..., "game_options": {...}, "net": {...}}``). Observations are the
envs' ``Dict(observations=..., action_mask=...)``: every pass (inference, exploration, train)
strips the mask, runs the network on the flat observation and adds
``clamp(log(mask), FLOAT_MIN)`` to the logits, so no illegal action can be sampled.
``compute_values`` unpacks the same dict; the train pass hands its values to the learner as the
"embeddings" so the value is not computed twice.

:class:`MaskedCandidatePPOModule` does the same over the ``candidates`` action space
(``Dict(candidates, candidate_mask, context)``) with
:class:`~agents.ppo.candidate_network.CandidateScoringNet`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.torch import TorchRLModule

from agents.ppo.candidate_network import CandidateNetConfig, CandidateScoringNet
from agents.ppo.distribution import MaskedCategorical
from agents.ppo.network import BoardPolicyValueNet, NetConfig, masked_logits
from envs.core.candidates import BASE_CONTEXT
from envs.core.registry import make_game


class MaskedBoardPPOModule(DefaultPPOTorchRLModule):
    """PPO module over a game's layout: masked logits, shared trunk for policy and value."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.pop("catalog_class", None)  # the network comes from the game's layout, not a catalog
        TorchRLModule.__init__(self, *args, **kwargs)

    def setup(self) -> None:
        config = dict(self.model_config or {})
        game = make_game(config["game"], **dict(config.get("game_options") or {}))
        self.net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(config.get("net")))

    def get_inference_action_dist_cls(self) -> type[MaskedCategorical]:
        return MaskedCategorical

    def get_exploration_action_dist_cls(self) -> type[MaskedCategorical]:
        return MaskedCategorical

    def get_train_action_dist_cls(self) -> type[MaskedCategorical]:
        return MaskedCategorical

    def get_initial_state(self) -> dict:
        return {}

    def get_non_inference_attributes(self) -> list[str]:
        return []  # the value head shares the trunk; inference modules keep it all

    def _masked_forward(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        obs = batch[Columns.OBS]
        logits, value = self.net(obs["observations"], obs["action_mask"])
        return masked_logits(logits, obs["action_mask"]), value

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, _ = self._masked_forward(batch)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, value = self._masked_forward(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: value}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is not None:
            return embeddings
        obs = batch[Columns.OBS]
        _, value = self.net(obs["observations"], obs["action_mask"])
        return value


class MaskedCandidatePPOModule(MaskedBoardPPOModule):
    """PPO module over candidate rows: ``model_config`` is ``{"net": {type: candidates, ...},
    "theta": [[...]]}`` (the initial linear model, resolved by the driver so that no worker reads a
    file); the sizes come from the observation space. Masked rows get MASKED_LOGIT in every pass."""

    def setup(self) -> None:
        config = dict(self.model_config or {})
        net = {k: v for k, v in dict(config.get("net") or {}).items() if k != "type"}
        k, d = self.observation_space["candidates"].shape
        c = int(self.observation_space["context"].shape[0])
        theta = config.get("theta")
        self.net = CandidateScoringNet(d, c, c - len(BASE_CONTEXT), CandidateNetConfig.from_dict(net),
                                       theta=None if theta is None else np.asarray(theta))

    def _masked_forward(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        obs = batch[Columns.OBS]
        return self.net(obs["candidates"], obs["candidate_mask"], obs["context"])

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is not None:
            return embeddings
        return self._masked_forward(batch)[1]

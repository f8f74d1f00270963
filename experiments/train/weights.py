"""RLModule weights in and out of an RLlib algorithm, and the torch-only ``policy.pt`` made from
them: shared by PPO training, the imitation warm start and the self-play league."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from envs.core.registry import make_game
from experiments.train.candidates import candidate_network, max_candidates
from experiments.train.config import is_candidate_config, is_multiplayer

SINGLE_MODULE = "default_policy"
MAIN_MODULE = "main"


def module_ids(config: dict[str, Any]) -> list[str]:
    """The RLModules: one for solo/cooperative games; main plus league slots for self-play."""
    if not is_multiplayer(config):
        return [SINGLE_MODULE]
    slots = config["league"]["max_members"] if config["league"]["enabled"] else 0
    return [MAIN_MODULE] + [f"league_{i}" for i in range(slots)]


def trained_module_id(config: dict[str, Any]) -> str:
    return MAIN_MODULE if is_multiplayer(config) else SINGLE_MODULE


def get_module_weights(algo, module_id: str) -> dict[str, np.ndarray]:
    """The learner's weights of one module (RLModule state dict, keys ``net.*``)."""
    state = algo.learner_group.get_state(components=f"learner/rl_module/{module_id}")
    return state["learner"]["rl_module"][module_id]


def set_module_weights(algo, weights_by_module: dict[str, dict[str, Any]]) -> None:
    """Load weights into the learner's modules and push them to every env runner now."""
    algo.learner_group.set_state({"learner": {"rl_module": weights_by_module}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=list(weights_by_module), inference_only=True)


def network_weights(module_weights: dict[str, Any]) -> dict[str, Any]:
    """RLModule state (``net.*``) -> the network's own state dict."""
    import torch

    return {k[4:]: torch.as_tensor(np.asarray(v)) for k, v in module_weights.items() if k.startswith("net.")}


def module_state_from_network(net_state: dict[str, Any]) -> dict[str, np.ndarray]:
    """The network's state dict -> RLModule state (``net.*``, numpy)."""
    return {f"net.{k}": v.detach().cpu().numpy() for k, v in net_state.items()}


def save_policy_file(path: Path, config: dict[str, Any], module_weights: dict[str, Any],
                     meta: dict[str, Any]) -> Path:
    """Write a torch-only ``policy.pt`` from RLModule weights."""
    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from agents.ppo.policy_file import save_policy

    game = make_game(config["game"], **config["game_options"])
    if is_candidate_config(config):
        net = candidate_network(config)
        net.load_state_dict(network_weights(module_weights))
        return save_policy(path, net, game, config["game_options"], meta, max_candidates(config))
    net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(config["network"]))
    net.load_state_dict(network_weights(module_weights))
    return save_policy(path, net, game, config["game_options"], meta)

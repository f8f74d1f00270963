"""Imitation warm start: fit the network to a teacher's moves before PPO (``--init teacher:SPEC``).

The teacher (any agent spec: ``greedy``, an MCTS spec...) plays ``imitation.games`` games in
parallel Ray tasks; every decision is kept as (observation, legal mask, chosen action, points the
acting seat still gained until the end). The network is fitted with a masked cross-entropy on the
actions plus a value loss on those returns, on 90% of the games; the other 10% measure the
held-out imitation accuracy (how often the network's masked argmax equals the teacher's move).
Loss and accuracy per epoch go to TensorBoard (``imitation/*``), then the weights are loaded
into the PPO modules. The same functions serve later expert iteration (a search as teacher).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.rng import numpy_generator


@dataclass
class Demonstrations:
    """Decisions of a teacher: flat observations, packed legal masks, actions, value targets."""

    observations: np.ndarray  # float32 (n, obs)
    masks: np.ndarray  # uint8 (n, ceil(actions / 8)), np.packbits of the legal mask
    actions: np.ndarray  # int64 (n,)
    returns: np.ndarray  # float32 (n,): the acting seat's final total minus its total at the decision
    games: np.ndarray  # int64 (n,): the seed of the game each decision comes from

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                     ("observations", "masks", "actions", "returns", "games")))

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def parse_init(init: str) -> tuple[str, str]:
    """``teacher:greedy`` -> ("teacher", "greedy"); ``policy:runs/x`` -> ("policy", "runs/x")."""
    kind, _, spec = init.partition(":")
    if kind not in ("teacher", "policy") or not spec.strip():
        raise ConfigError(f"--init must look like teacher:<agent spec> (e.g. teacher:greedy) or "
                          f"policy:<policy.pt or run folder>, got {init!r}")
    return kind, spec.strip()


def parse_teacher(init: str) -> str:
    """``teacher:greedy`` -> ``greedy``; anything else is a ConfigError."""
    kind, spec = parse_init(init)
    if kind != "teacher":
        raise ConfigError(f"expected teacher:<agent spec>, got {init!r}")
    return spec


def load_initial_policy(algo, config: dict[str, Any], init: str) -> dict[str, Any]:
    """``--init policy:<path>``: start every PPO module from a trained network of the same game,
    player count and network config (one clear line otherwise)."""
    from agents.ppo.network import NetConfig
    from agents.ppo.policy_file import build_network, load_policy_payload
    from experiments.train import module_ids, module_state_from_network, set_module_weights

    _, path = parse_init(init)
    payload = load_policy_payload(path)
    game = make_game(config["game"], **config["game_options"])
    if NetConfig.from_dict(payload["net_config"]) != NetConfig.from_dict(config["network"]):
        raise ConfigError(f"--init {init}: its network {payload['net_config']} differs from the config's "
                          f"network section {config['network']}")
    net = build_network(payload, game)
    weights = module_state_from_network(net.state_dict())
    set_module_weights(algo, {mid: weights for mid in module_ids(config)})
    return payload


def play_teacher_games(game_name: str, game_options: dict[str, Any], teacher: str,
                       seeds: list[int]) -> Demonstrations:
    """The teacher in every seat on each seed; every decision recorded."""
    from agents.base import make_agent

    game = make_game(game_name, **game_options)
    agent = make_agent(teacher, game)
    obs_rows, mask_rows, actions, seats, totals_before, game_of = [], [], [], [], [], []
    returns: list[float] = []
    for seed in seeds:
        state = game.new_game(seed)
        rngs = [numpy_generator(seed, f"seat{i}") for i in range(game.num_players())]
        start = len(actions)
        while not game.is_over(state):
            player = game.current_player(state)
            mask = np.asarray(game.legal_mask(state), dtype=bool)
            obs_rows.append(np.asarray(game.observation(state, player), dtype=np.float32))
            mask_rows.append(np.packbits(mask))
            action = int(agent.act(state, mask, rngs[player]))
            actions.append(action)
            seats.append(player)
            totals_before.append(float(game.returns(state)[player]))
            game_of.append(seed)
            game.step(state, action)
        final = game.returns(state)
        returns.extend(float(final[seats[i]]) - totals_before[i] for i in range(start, len(actions)))
    return Demonstrations(np.stack(obs_rows), np.stack(mask_rows), np.asarray(actions, np.int64),
                          np.asarray(returns, np.float32), np.asarray(game_of, np.int64))


def collect(game_name: str, game_options: dict[str, Any], teacher: str, seeds: list[int],
            workers: int, progress: bool = True) -> Demonstrations:
    """Teacher games split into chunks played as Ray tasks (Ray must be initialised)."""
    import ray
    from tqdm import tqdm

    remote = ray.remote(num_cpus=1)(play_teacher_games)
    chunks = [seeds[i::max(1, workers * 4)] for i in range(max(1, workers * 4))]
    refs = [remote.remote(game_name, game_options, teacher, chunk) for chunk in chunks if chunk]
    parts = []
    with tqdm(total=len(refs), desc=f"teacher {teacher}", unit="chunk", disable=not progress) as bar:
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            parts.append(ray.get(done[0]))
            bar.update(1)
    return Demonstrations.concat(parts)


def fit(net, data: Demonstrations, epochs: int, batch_size: int, lr: float, value_weight: float,
        seed: int = 0, on_epoch=None, stop=None) -> list[dict[str, float]]:
    """Masked cross-entropy on the teacher's actions + value loss; 10% of games held out.

    Returns per-epoch metrics: train loss, policy loss, value loss, train and held-out accuracy.
    ``stop()`` returning True ends the fit after the current epoch (Ctrl-C in ``train``)."""
    import torch
    from torch.nn import functional as F

    from agents.ppo.network import masked_logits

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    game_ids = np.unique(data.games)
    held_games = set(rng.permutation(game_ids)[: max(1, len(game_ids) // 10)].tolist()) if len(game_ids) > 1 \
        else set()
    held = np.isin(data.games, list(held_games))
    train_idx, test_idx = np.flatnonzero(~held), np.flatnonzero(held)
    num_actions = net.num_actions
    scale = float(net.config.value_scale)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)

    def batch(idx: np.ndarray):
        obs = torch.from_numpy(data.observations[idx])
        mask = torch.from_numpy(np.unpackbits(data.masks[idx], axis=1, count=num_actions).astype(np.float32))
        return obs, mask, torch.from_numpy(data.actions[idx]), torch.from_numpy(data.returns[idx])

    def accuracy(idx: np.ndarray) -> float:
        if idx.size == 0:
            return float("nan")
        net.eval()
        hits = 0
        with torch.no_grad():
            for start in range(0, idx.size, 512):
                obs, mask, act, _ = batch(idx[start:start + 512])
                logits, _ = net(obs, mask)
                hits += int((masked_logits(logits, mask).argmax(dim=1) == act).sum())
        return hits / idx.size

    history = []
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(train_idx)
        totals = np.zeros(3)
        for start in range(0, order.size, batch_size):
            obs, mask, act, ret = batch(order[start:start + batch_size])
            logits, value = net(obs, mask)
            policy_loss = F.cross_entropy(masked_logits(logits, mask), act)
            value_loss = F.mse_loss(value / scale, ret / scale)
            loss = policy_loss + value_weight * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimizer.step()
            n = act.shape[0]
            totals += np.array([loss.item(), policy_loss.item(), value_loss.item()]) * n
        metrics = {"loss": totals[0] / order.size, "policy_loss": totals[1] / order.size,
                   "value_loss": totals[2] / order.size, "train_accuracy": accuracy(train_idx[:4096]),
                   "heldout_accuracy": accuracy(test_idx)}
        history.append(metrics)
        if on_epoch is not None:
            on_epoch(epoch, metrics)
        if stop is not None and stop():
            break
    net.eval()
    return history


def warm_start(algo, config: dict[str, Any], init: str, writer, out: Path, module_id: str,
               progress: bool = True, stop=None) -> list[dict[str, float]]:
    """Collect teacher games, fit a fresh network, load it into every PPO module."""
    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from experiments.train import module_ids, module_state_from_network, set_module_weights

    teacher = parse_teacher(init)
    im = config["imitation"]
    game = make_game(config["game"], **config["game_options"])
    from agents.base import make_agent

    make_agent(teacher, game)  # a bad teacher spec fails here, before any game is played
    seed0 = 10_000_000 + int(config["run"]["seed"]) * 100_000  # away from the eval and test seeds
    data = collect(config["game"], config["game_options"], teacher, list(range(seed0, seed0 + im["games"])),
                   im["workers"], progress)
    net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(config["network"]))

    def log(epoch: int, metrics: dict[str, float]) -> None:
        for key, value in metrics.items():
            writer.add_scalar(f"imitation/{key}", value, epoch)
        if progress:
            print(f"imitation epoch {epoch + 1}/{im['epochs']}: loss {metrics['loss']:.3f} "
                  f"accuracy {metrics['train_accuracy']:.3f} (held-out {metrics['heldout_accuracy']:.3f})")

    history = fit(net, data, im["epochs"], im["batch_size"], im["lr"], im["value_weight"],
                  seed=int(config["run"]["seed"]), on_epoch=log, stop=stop)
    writer.add_scalar("imitation/decisions", len(data), 0)
    weights = module_state_from_network(net.state_dict())
    set_module_weights(algo, {mid: weights for mid in module_ids(config)})
    return history

"""Imitation warm start: fit the network to a teacher's moves before PPO (``--init teacher:SPEC``).

The teacher (any agent spec: ``greedy``, an MCTS spec...) plays ``imitation.games`` games in
parallel Ray tasks; every decision is kept as (observation, legal mask, chosen action, points the
acting seat still gained until the end). The network is fitted with a masked cross-entropy on the
actions plus a value loss on those returns, on 90% of the games; the other 10% measure the
held-out imitation accuracy (how often the network's masked argmax equals the teacher's move).
Loss and accuracy per epoch go to TensorBoard (``imitation/*``), then the weights are loaded
into the PPO modules. The same functions serve expert iteration (experiments/train/expert_iteration.py):
a search as teacher whose root visit distribution (``top_k`` > 0: the K most visited actions and
their visit fractions) becomes a soft target for the policy (``fit`` then minimises the
cross-entropy to that distribution instead of to the chosen action).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from agents.base import make_agent
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.rng import numpy_generator
from experiments.train.console import console
from experiments.train.weights import module_ids, module_state_from_network, set_module_weights


@dataclass
class Demonstrations:
    """Decisions of a teacher: flat observations, packed legal masks, actions, value targets."""

    observations: np.ndarray  # float32 (n, obs)
    masks: np.ndarray  # uint8 (n, ceil(actions / 8)), np.packbits of the legal mask
    actions: np.ndarray  # int64 (n,)
    returns: np.ndarray  # float32 (n,): the acting seat's final total minus its total at the decision
    games: np.ndarray  # int64 (n,): the seed of the game each decision comes from
    #: optional soft targets (a search's root visits): int64 (n, K) actions, -1 where unused ...
    target_actions: np.ndarray | None = None
    #: ... and float32 (n, K) their probabilities (each row sums to 1)
    target_probs: np.ndarray | None = None
    #: optional float32 (n, 2): the search's simulations and seconds at each decision
    search_stats: np.ndarray | None = None

    FIELDS = ("observations", "masks", "actions", "returns", "games", "target_actions", "target_probs",
              "search_stats")

    @classmethod
    def concat(cls, parts: list[Demonstrations]) -> Demonstrations:
        """One set from several (an optional column kept when every part has it; targets padded to
        the widest K)."""
        columns = {f: np.concatenate([getattr(p, f) for p in parts]) for f in cls.FIELDS[:5]}
        for f in cls.FIELDS[5:]:
            if parts and all(getattr(p, f) is not None for p in parts):
                width = max(getattr(p, f).shape[1] for p in parts)
                fill = -1 if f == "target_actions" else 0.0
                columns[f] = np.concatenate([_pad(getattr(p, f), width, fill) for p in parts])
        return cls(**columns)

    def save(self, path: Path) -> Path:
        """Write every column to ``path`` (``.npz``, atomically: a temp file renamed into place)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, **{f: getattr(self, f) for f in self.FIELDS if getattr(self, f) is not None})
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> Demonstrations:
        try:
            with np.load(path) as data:
                return cls(**{f: data[f] for f in cls.FIELDS if f in data.files})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"demonstrations file {str(path)!r} is unreadable "
                              f"({type(exc).__name__})") from None

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def _pad(values: np.ndarray, width: int, fill: float) -> np.ndarray:
    if values.shape[1] == width:
        return values
    return np.pad(values, ((0, 0), (0, width - values.shape[1])), constant_values=fill)


def search_target(agent, legal: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """The K most visited root actions of the agent's latest search and their visit fractions
    (renormalised over those K; padded with -1 / 0). A forced move (one legal action, no search)
    is that action with probability 1."""
    visits = (getattr(agent, "last_stats", None) or {}).get("visits")
    actions = np.full(top_k, -1, dtype=np.int64)
    probs = np.zeros(top_k, dtype=np.float32)
    if not visits:
        if legal.size != 1:
            raise ConfigError(f"agent {getattr(agent, 'name', agent)!r} reports no root visits "
                              "(last_stats['visits']): it cannot be an expert-iteration search")
        actions[0], probs[0] = int(legal[0]), 1.0
        return actions, probs
    items = sorted(visits.items(), key=lambda kv: -kv[1])[:top_k]
    total = float(sum(v for _, v in items))
    for i, (action, count) in enumerate(items):
        actions[i], probs[i] = int(action), count / total if total > 0 else 1.0 / len(items)
    return actions, probs


#: ``--init none``: no warm start (fresh weights), whatever the config's teacher
NO_INIT = "none"


def parse_init(init: str) -> tuple[str, str]:
    """``teacher:greedy`` -> ("teacher", "greedy"); ``policy:runs/x`` -> ("policy", "runs/x");
    ``none`` -> ("none", "")."""
    if init.strip() == NO_INIT:
        return NO_INIT, ""
    kind, _, spec = init.partition(":")
    if kind not in ("teacher", "policy") or not spec.strip():
        raise ConfigError(f"--init must look like teacher:<agent spec> (e.g. teacher:greedy), "
                          f"policy:<policy.pt or run folder> or none, got {init!r}")
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
                       seeds: list[int], top_k: int = 0) -> Demonstrations:
    """The teacher in every seat on each seed; every decision recorded (with ``top_k`` > 0 also
    the search's root visit distribution, see :func:`search_target`)."""
    game = make_game(game_name, **game_options)
    agent = make_agent(teacher, game)
    obs_rows, mask_rows, actions, seats, totals_before, game_of = [], [], [], [], [], []
    target_rows: list[tuple[np.ndarray, np.ndarray]] = []
    search_rows: list[tuple[float, float]] = []
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
            if top_k > 0:
                target_rows.append(search_target(agent, np.flatnonzero(mask), top_k))
                stats = getattr(agent, "last_stats", None) or {}
                search_rows.append((float(stats.get("simulations", 0)), float(stats.get("seconds", 0.0))))
            actions.append(action)
            seats.append(player)
            totals_before.append(float(game.returns(state)[player]))
            game_of.append(seed)
            game.step(state, action)
        final = game.returns(state)
        returns.extend(float(final[seats[i]]) - totals_before[i] for i in range(start, len(actions)))
    targets = {}
    if top_k > 0:
        targets = {"target_actions": np.stack([t[0] for t in target_rows]),
                   "target_probs": np.stack([t[1] for t in target_rows]),
                   "search_stats": np.asarray(search_rows, np.float32).reshape(-1, 2)}
    return Demonstrations(np.stack(obs_rows), np.stack(mask_rows), np.asarray(actions, np.int64),
                          np.asarray(returns, np.float32), np.asarray(game_of, np.int64), **targets)


#: teacher games per Ray task at most, so the progress bar moves every few seconds
CHUNK_GAMES = 25


def collect(game_name: str, game_options: dict[str, Any], teacher: str, seeds: list[int],
            workers: int, progress: bool = True, top_k: int = 0, desc: str | None = None) -> Demonstrations:
    """Teacher games split into chunks played as Ray tasks (Ray must be initialised)."""
    import ray
    remote = ray.remote(num_cpus=1)(play_teacher_games)
    count = max(1, workers * 4, -(-len(seeds) // CHUNK_GAMES))
    chunks = [chunk for chunk in (seeds[i::count] for i in range(count)) if chunk]
    refs = {remote.remote(game_name, game_options, teacher, chunk, top_k): len(chunk) for chunk in chunks}
    parts = []
    with tqdm(total=len(seeds), desc=desc or f"teacher {teacher}", unit="game", disable=not progress,
              leave=False, dynamic_ncols=True, file=console()) as bar:
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            parts.append(ray.get(done[0]))
            bar.update(refs[done[0]])
    return Demonstrations.concat(parts)


def fit(net, data: Demonstrations, epochs: int, batch_size: int, lr: float, value_weight: float,
        seed: int = 0, on_epoch=None, stop=None, progress: bool = False) -> list[dict[str, float]]:
    """Masked cross-entropy on the teacher's actions (or, when ``data`` has soft targets, on their
    distribution) + value loss; 10% of games held out.

    Returns per-epoch metrics: train loss, policy loss, value loss, train and held-out accuracy
    (how often the network's masked argmax is the teacher's chosen action).
    ``stop()`` returning True ends the fit after the current epoch (Ctrl-C in ``train``); ``progress``
    shows a bar of each epoch's batches."""
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

    soft = data.target_actions is not None

    def batch(idx: np.ndarray):
        obs = torch.from_numpy(data.observations[idx])
        mask = torch.from_numpy(np.unpackbits(data.masks[idx], axis=1, count=num_actions).astype(np.float32))
        return obs, mask, torch.from_numpy(data.actions[idx]), torch.from_numpy(data.returns[idx])

    def policy_loss_of(logits, mask, act, idx: np.ndarray):
        if not soft:
            return F.cross_entropy(masked_logits(logits, mask), act)
        return soft_cross_entropy(masked_logits(logits, mask), torch.from_numpy(data.target_actions[idx]),
                                  torch.from_numpy(data.target_probs[idx]))

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
        starts = tqdm(range(0, order.size, batch_size), desc=f"imitation epoch {epoch + 1}/{epochs}",
                      unit="batch", disable=not progress, leave=False, dynamic_ncols=True, file=console())
        for start in starts:
            idx = order[start:start + batch_size]
            obs, mask, act, ret = batch(idx)
            logits, value = net(obs, mask)
            policy_loss = policy_loss_of(logits, mask, act, idx)
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


def soft_cross_entropy(masked: Any, target_actions: Any, target_probs: Any) -> Any:
    """Mean over rows of ``-sum_k p_k log softmax(masked)[a_k]`` (columns with p = 0 ignored)."""
    import torch

    logp = torch.log_softmax(masked, dim=1).gather(1, target_actions.clamp(min=0))
    return -torch.where(target_probs > 0, target_probs * logp, torch.zeros_like(logp)).sum(dim=1).mean()


def warm_start(algo, config: dict[str, Any], init: str, writer, out: Path, module_id: str,
               progress: bool = True, stop=None) -> list[dict[str, float]]:
    """Collect teacher games, fit a fresh network, load it into every PPO module."""

    net, history = imitate(config, init, writer, progress, stop)
    weights = module_state_from_network(net.state_dict())
    set_module_weights(algo, {mid: weights for mid in module_ids(config)})
    return history


def imitate(config: dict[str, Any], init: str, writer, progress: bool = True, stop=None):
    """``teacher:SPEC``: the teacher plays ``imitation.games`` games (Ray tasks), a fresh network of
    ``config['network']`` is fitted to them; returns (network, per-epoch metrics). Needs the
    config's game, game_options, network, imitation and run.seed."""
    from agents.ppo.network import BoardPolicyValueNet, NetConfig

    teacher = parse_teacher(init)
    im = config["imitation"]
    game = make_game(config["game"], **config["game_options"])
    make_agent(teacher, game)  # a bad teacher spec fails here, before any game is played
    seed0 = 10_000_000 + int(config["run"]["seed"]) * 100_000  # away from the eval and test seeds
    if progress:
        print(f"warm start: {teacher} plays {im['games']:,} teacher games, then {im['epochs']} imitation "
              f"epochs (--init none skips it)", flush=True)
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
                  seed=int(config["run"]["seed"]), on_epoch=log, stop=stop, progress=progress)
    writer.add_scalar("imitation/decisions", len(data), 0)
    return net, history

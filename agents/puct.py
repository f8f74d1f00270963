"""PUCT search guided by a trained policy/value network (AlphaZero style), open loop over
determinized futures as in :mod:`agents.mcts`.

* **Determinization, open loop.** Every simulation starts from ``game.determinize(root, rng)``
  and re-applies a node's action sequence to its own copy; the real hidden future is never read.
  A node stands for every state its action sequence reaches.
* **Priors.** At a node's first visit the network's raw logits for the player to act are stored;
  every later visit takes the softmax over the actions legal *in that visit's determinization*
  (the masked policy renormalised), so an action that only some futures allow still gets a prior.
* **Selection.** ``argmax Q_norm + c_puct * P * sqrt(N) / (1 + n)`` over the actions legal now,
  where ``N`` is the visits of the node's children legal now (at least 1, so the first visit
  follows the prior) and an unvisited action's ``Q`` is the node's own mean (first-play urgency).
  ``Q`` is the acting seat's mean return, normalised to [0, 1] by the running min/max of every
  value seen in this search (max-n: each seat maximises its own component).
* **Leaf value.** A new node's value vector is ``value_weight * (totals + points still to gain)
  + (1 - value_weight) * rollout returns``: the network's value for every seat comes from one
  forward pass over all seats' observations (the acting seat with its legal mask, the others with
  an empty one, as the multi-agent env shows them); ``value_weight=0`` runs rollouts only (the
  network still gives the priors), ``1`` none. A finished game is scored exactly.
* **Decision.** The most visited root action (ties: higher mean). ``simulations`` and
  ``time_limit`` bound the search (anytime, whichever ends first); a fixed seed and simulation
  count give the same decision. ``noise`` mixes Dirichlet noise (alpha ``10 / legal actions``)
  into the root priors, for self-play exploration.

``last_stats["visits"]`` (root action -> visits) is the policy target of expert iteration.
"""

from __future__ import annotations

import math
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.explain import search_statistics
from envs.core.errors import ConfigError
from envs.core.game import Game, State

if TYPE_CHECKING:
    import torch

_SEED_BOUND = 2**62


def most_visited(visits: np.ndarray, means: np.ndarray) -> int:
    """Index of the most visited entry, ties broken by the higher mean."""
    top = np.flatnonzero(visits == visits.max())
    return int(top[np.argmax(means[top])])


def root_statistics(actions: np.ndarray, visits: np.ndarray, means: np.ndarray, sims: int,
                    elapsed: float) -> tuple[int, dict[str, Any]]:
    """The chosen root index (most visited, ties: higher mean) and a search's ``last_stats``."""
    best = most_visited(visits, means)
    return best, {
        "simulations": sims, "seconds": elapsed, "sims_per_s": sims / elapsed if elapsed else 0.0,
        "children": int(actions.shape[0]), "best_visits": int(visits[best]), "best_mean": float(means[best]),
        "visits": {int(a): int(v) for a, v in zip(actions, visits, strict=True)},
    }


class NetworkEvaluator:
    """Logits for the player to act (prior network) and points still to gain per seat (value
    network) of one position; one forward pass per network, all seats batched."""

    def __init__(self, game: Game, prior_net: torch.nn.Module, value_net: torch.nn.Module,
                 device: str = "cpu"):
        self.game = game
        self.prior_net = prior_net
        self.value_net = value_net
        self.device = device

    def one_thread(self) -> AbstractContextManager[None]:
        """torch on one CPU thread while a search runs (agents/ppo/threads.py says why)."""
        from agents.ppo.threads import one_torch_thread

        return one_torch_thread(self.device)

    def __call__(self, state: State, mask: np.ndarray, player: int,
                 values: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """``(logits over all actions, points still to gain per seat or None)``."""
        import torch  # here, not at import: agents.mcts imports this module and needs no torch

        game = self.game
        seats = list(range(game.num_players())) if values else [player]
        obs = torch.from_numpy(np.stack([np.asarray(game.observation(state, s), dtype=np.float32)
                                         for s in seats])).to(self.device)
        masks = torch.zeros((len(seats), mask.shape[0]), dtype=torch.float32, device=self.device)
        row = seats.index(player)
        masks[row] = torch.from_numpy(np.asarray(mask, dtype=np.float32)).to(self.device)
        with torch.inference_mode():
            if not values:
                logits, _ = self.prior_net(obs, masks)
                return logits[row].float().cpu().numpy().copy(), None
            if self.prior_net is self.value_net:
                logits, gain = self.value_net(obs, masks)
                return logits[row].float().cpu().numpy().copy(), gain.double().cpu().numpy()
            logits, _ = self.prior_net(obs[row:row + 1], masks[row:row + 1])
            _, gain = self.value_net(obs, masks)
            return logits[0].float().cpu().numpy(), gain.double().cpu().numpy()


class _Node:
    """One action sequence: the stored logits, the node's own visit count and value sum, and
    compact statistics of its children (``slot[action]`` indexes them, -1 when absent)."""

    __slots__ = ("logits", "slot", "actions", "visits", "sums", "kids", "n", "w")

    def __init__(self, logits: np.ndarray, value: np.ndarray):
        self.logits = logits
        self.slot = np.full(logits.shape[0], -1, dtype=np.int32)
        self.actions = np.zeros(8, dtype=np.int64)
        self.visits = np.zeros(8, dtype=np.float64)
        self.sums = np.zeros((8, value.shape[0]), dtype=np.float64)
        self.kids: list[_Node | None] = []
        self.n = 1.0
        self.w = np.array(value, dtype=np.float64)

    @property
    def size(self) -> int:
        return len(self.kids)

    def add(self, action: int) -> int:
        slot = len(self.kids)
        if slot == self.actions.shape[0]:
            self.actions = np.concatenate([self.actions, np.zeros(slot, dtype=np.int64)])
            self.visits = np.concatenate([self.visits, np.zeros(slot)])
            self.sums = np.concatenate([self.sums, np.zeros_like(self.sums)])
        self.actions[slot] = action
        self.slot[action] = slot
        self.kids.append(None)
        return slot


def puct_scores(prior: np.ndarray, visits: np.ndarray, q: np.ndarray, c_puct: float) -> np.ndarray:
    """``q + c_puct * prior * sqrt(max(sum(visits), 1)) / (1 + visits)`` (q already normalised,
    first-play urgency filled in for unvisited actions)."""
    return q + c_puct * prior * math.sqrt(max(float(visits.sum()), 1.0)) / (1.0 + visits)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits.astype(np.float64) - logits.max()
    e = np.exp(z)
    return e / e.sum()


class PUCTSearch:
    """Network-guided open-loop PUCT with max-n backups (see module doc)."""

    name = "puct"

    def __init__(self, game: Game, evaluator: NetworkEvaluator, simulations: int | None = 64,
                 time_limit: float | None = None, c_puct: float = 1.5, value_weight: float = 1.0,
                 rollout: str = "random", noise: float = 0.0, seed_offset: int = 0):
        for key, value in (("c_puct", c_puct), ("value_weight", value_weight), ("noise", noise)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"mcts: {key} must be a number, got {value!r}")
        if c_puct < 0:
            raise ConfigError(f"mcts: c_puct must be >= 0, got {c_puct!r}")
        if not 0 <= value_weight <= 1:
            raise ConfigError(f"mcts: value_weight must be in [0, 1], got {value_weight!r}")
        if not 0 <= noise < 1:
            raise ConfigError(f"mcts: noise (root Dirichlet fraction) must be in [0, 1), got {noise!r}")
        if rollout not in ("random", "greedy"):
            raise ConfigError(f"mcts: rollout must be 'random' or 'greedy', got {rollout!r}")
        if simulations is None and time_limit is None:
            raise ConfigError("mcts: give simulations or time_limit (or both)")
        self.game = game
        self.evaluate = evaluator
        self.simulations = simulations
        self.time_limit = None if time_limit is None else float(time_limit)
        self.c_puct = float(c_puct)
        self.value_weight = float(value_weight)
        self.rollout = rollout
        self.noise = float(noise)
        self.seed_offset = seed_offset
        self.last_stats: dict[str, Any] = {}
        self.explaining = False
        self.last_explanation: dict[str, Any] | None = None
        self.total_simulations = 0
        self.total_seconds = 0.0

    # ---- the decision ------------------------------------------------------------------------

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Search from ``state`` (never reading its hidden future) and return the chosen action."""
        legal = np.flatnonzero(legal_mask)
        if legal.size == 0:
            raise RuntimeError("no legal action: the game should be over")
        game = self.game
        player = game.current_player(state)
        seed_base = int(rng.integers(_SEED_BOUND)) ^ (self.seed_offset * 0x9E3779B97F4A7C15 % _SEED_BOUND)
        start = time.perf_counter()
        with self.evaluate.one_thread():
            root, sims = self._search(state, legal_mask, legal, player, seed_base, start, rng)
        elapsed = time.perf_counter() - start
        size = root.size
        visits = root.visits[:size]
        means = root.sums[:size, player] / np.maximum(visits, 1.0)
        best, self.last_stats = root_statistics(root.actions[:size], visits, means, sims, elapsed)
        action = int(root.actions[best])
        self.total_simulations += sims
        self.total_seconds += elapsed
        if self.explaining:
            prior = softmax(root.logits[legal])
            by_action = dict(zip(legal.tolist(), prior.tolist(), strict=True))
            details = [{"prior": round(by_action.get(int(a), 0.0), 4)} for a in root.actions[:size]]
            self.last_explanation = search_statistics("puct", root.actions[:size], visits, means, action,
                                                      sims, details=details)
        return action

    def _search(self, state: State, legal_mask: np.ndarray, legal: np.ndarray, player: int, seed_base: int,
                start: float, rng: np.random.Generator) -> tuple[_Node, int]:
        """The root (expanded on a determinization) after the budget's simulations, and their count."""
        game = self.game
        bounds = [math.inf, -math.inf]
        root = self._expand(game.determinize(state, rng), legal_mask, player, seed_base, bounds)
        root_noise = None
        if self.noise > 0:
            root_noise = np.zeros(legal_mask.shape[0])
            root_noise[legal] = rng.dirichlet(np.full(legal.size, 10.0 / legal.size))
        deadline = None if self.time_limit is None else start + self.time_limit
        limit = self.simulations if self.simulations is not None else 1 << 62
        sims = 0
        while sims < limit:
            if deadline is not None and sims > 0 and time.perf_counter() >= deadline:
                break
            self._simulate(root, game.determinize(state, rng), legal_mask, player, root_noise,
                           (seed_base + 1 + sims) % _SEED_BOUND, bounds)
            sims += 1
        return root, sims

    # ---- one simulation ----------------------------------------------------------------------

    def _simulate(self, root: _Node, state: State, root_mask: np.ndarray, root_player: int,
                  root_noise: np.ndarray | None, seed: int, bounds: list[float]) -> None:
        game = self.game
        path: list[tuple[_Node, int]] = []
        node, mask, player = root, root_mask, root_player
        while True:
            action = self._select(node, mask, player, bounds, root_noise if node is root else None)
            slot = node.slot[action]
            if slot < 0:
                slot = node.add(action)
            path.append((node, int(slot)))
            game.step(state, action)
            if game.is_over(state):
                value = game.returns(state)
                _widen(bounds, value)
                break
            mask = game.legal_mask(state)
            player = game.current_player(state)
            child = node.kids[slot]
            if child is None:
                node.kids[slot] = child = self._expand(state, mask, player, seed, bounds)
                value = child.w
                break
            node = child
        for n, s in path:
            n.visits[s] += 1.0
            n.sums[s] += value
            n.n += 1.0
            n.w += value

    def _expand(self, state: State, mask: np.ndarray, player: int, seed: int, bounds: list[float]) -> _Node:
        """A new node for ``state`` (a determinized copy: a rollout consumes it) with its leaf value."""
        weight = self.value_weight
        logits, gain = self.evaluate(state, mask, player, values=weight > 0)
        value = np.zeros(self.game.num_players())
        if weight > 0:
            value += weight * (self.game.returns(state) + gain)
        if weight < 1:
            value += (1.0 - weight) * np.asarray(self.game.rollout_returns(state, seed, self.rollout),
                                                 dtype=np.float64)
        _widen(bounds, value)
        return _Node(logits, value)

    def _select(self, node: _Node, mask: np.ndarray, player: int, bounds: list[float],
                noise: np.ndarray | None) -> int:
        """The action to follow: PUCT over the actions legal now."""
        legal = np.flatnonzero(mask)
        prior = softmax(node.logits[legal])
        if noise is not None:
            prior = (1.0 - self.noise) * prior + self.noise * noise[legal]
        lo, hi = bounds
        scale = hi - lo if hi > lo else 1.0
        q = np.full(legal.size, (node.w[player] / node.n - lo) / scale)
        visits = np.zeros(legal.size)
        slots = node.slot[legal]
        known = np.flatnonzero(slots >= 0)
        if known.size:
            s = slots[known]
            visits[known] = node.visits[s]
            q[known] = (node.sums[s, player] / node.visits[s] - lo) / scale
        return int(legal[np.argmax(puct_scores(prior, visits, q, self.c_puct))])


def _widen(bounds: list[float], value: np.ndarray) -> None:
    """Stretch the running [min, max] of returns to cover ``value``."""
    bounds[0] = min(bounds[0], float(value.min()))
    bounds[1] = max(bounds[1], float(value.max()))

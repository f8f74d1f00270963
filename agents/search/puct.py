"""PUCT search guided by a trained policy/value network (AlphaZero style), open loop over
determinized futures as in :mod:`agents.search.mcts`.

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
* **Batched leaves.** ``batch=k`` (default 1, one forward pass per leaf) runs the simulations in
  rounds of up to ``k``: each selected path takes a *virtual loss* (a temporary visit worth the
  lowest value seen, for every seat) so later selections of the round diverge, then every leaf's
  positions (all seats' observations, plus prior logits for nodes expanded for the first time) go
  through one forward pass per network, and the round's values are backed up in selection order
  and the virtual losses removed. Two paths of a round that end on the same new node create it
  once (the first one's prior) and both count as its visits. Rollouts still run per leaf;
  ``simulations`` counts leaves, the time limit is checked between rounds; a fixed seed,
  simulation count and ``batch`` give the same decision.

``last_stats["visits"]`` (root action -> visits) is the policy target of expert iteration.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
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
        import torch  # here, not at import: agents.search.mcts imports this module and needs no torch

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

    def many(self, leaves: Sequence[tuple[State, np.ndarray, int, bool]],
             values: bool = True) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
        """``__call__`` for many positions ``(state, mask, player, wants_logits)`` in one forward pass
        per network: logits where wanted (else None) and, with ``values``, the gain per seat."""
        import torch

        game = self.game
        seats = game.num_players() if values else 1
        obs: list[np.ndarray] = []
        acting: list[int] = []  # each leaf's acting row, -1 when it needs no row
        for state, _, player, wants in leaves:
            if values or wants:
                acting.append(len(obs) + (player if values else 0))
                ids = range(seats) if values else [player]
                obs.extend(np.asarray(game.observation(state, s), dtype=np.float32) for s in ids)
            else:
                acting.append(-1)
        out: list[tuple[np.ndarray | None, np.ndarray | None]] = [(None, None)] * len(leaves)
        if not obs:
            return out
        batch = torch.from_numpy(np.stack(obs)).to(self.device)
        masks = np.zeros((len(obs), leaves[0][1].shape[0]), dtype=np.float32)
        for (_, mask, _, _), row in zip(leaves, acting, strict=True):
            if row >= 0:
                masks[row] = mask
        mask_rows = torch.from_numpy(masks).to(self.device)
        wanted = [row for (_, _, _, wants), row in zip(leaves, acting, strict=True) if wants]
        logits = gain = None
        with torch.inference_mode():
            if values and self.prior_net is self.value_net:
                all_logits, gain = self.value_net(batch, mask_rows)
                logits = all_logits[wanted] if wanted else None
            else:
                if wanted:
                    logits, _ = self.prior_net(batch[wanted], mask_rows[wanted])
                if values:
                    _, gain = self.value_net(batch, mask_rows)
        logit_rows = iter(logits.float().cpu().numpy() if logits is not None else ())
        gains = gain.double().cpu().numpy() if gain is not None else None
        for i, ((_, _, _, wants), row) in enumerate(zip(leaves, acting, strict=True)):
            first = row - (leaves[i][2] if values else 0)
            out[i] = (next(logit_rows).copy() if wants else None,
                      gains[first:first + seats].copy() if gains is not None and row >= 0 else None)
        return out


class _Node:
    """One action sequence: the stored logits, the node's own visit count and value sum, and
    compact statistics of its children (``slot[action]`` indexes them, -1 when absent); ``virtual``
    and ``pending`` count the virtual losses of a batched round (per child, and in all)."""

    __slots__ = ("logits", "slot", "actions", "visits", "sums", "kids", "n", "w", "virtual", "pending")

    def __init__(self, logits: np.ndarray, value: np.ndarray):
        self.logits = logits
        self.slot = np.full(logits.shape[0], -1, dtype=np.int32)
        self.actions = np.zeros(8, dtype=np.int64)
        self.visits = np.zeros(8, dtype=np.float64)
        self.sums = np.zeros((8, value.shape[0]), dtype=np.float64)
        self.kids: list[_Node | None] = []
        self.n = 1.0
        self.w = np.array(value, dtype=np.float64)
        self.virtual = np.zeros(8, dtype=np.float64)
        self.pending = 0.0

    @property
    def size(self) -> int:
        return len(self.kids)

    def add(self, action: int) -> int:
        slot = len(self.kids)
        if slot == self.actions.shape[0]:
            self.actions = np.concatenate([self.actions, np.zeros(slot, dtype=np.int64)])
            self.visits = np.concatenate([self.visits, np.zeros(slot)])
            self.virtual = np.concatenate([self.virtual, np.zeros(slot)])
            self.sums = np.concatenate([self.sums, np.zeros_like(self.sums)])
        self.actions[slot] = action
        self.slot[action] = slot
        self.kids.append(None)
        return slot


def check_batch(batch: Any) -> None:
    """ConfigError unless ``batch`` (leaves per forward pass) is a positive integer."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"mcts: batch (leaves per forward pass) must be a positive integer, got {batch!r}")


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
                 rollout: str = "random", noise: float = 0.0, seed_offset: int = 0,
                 batch: int = 1):
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
        check_batch(batch)
        self.game = game
        self.evaluate = evaluator
        self.simulations = simulations
        self.time_limit = None if time_limit is None else float(time_limit)
        self.c_puct = float(c_puct)
        self.value_weight = float(value_weight)
        self.rollout = rollout
        self.noise = float(noise)
        self.seed_offset = seed_offset
        self.batch = batch
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
            count = min(self.batch, limit - sims)
            leaves = [self._descend(root, game.determinize(state, rng), legal_mask, player, root_noise,
                                    (seed_base + 1 + sims + k) % _SEED_BOUND, bounds) for k in range(count)]
            self._evaluate_leaves(leaves, bounds)
            for leaf in leaves:
                _backup(leaf)
            sims += count
        return root, sims

    # ---- one round: select (with virtual loss), evaluate together, back up ------------------

    def _descend(self, root: _Node, state: State, root_mask: np.ndarray, root_player: int,
                 root_noise: np.ndarray | None, seed: int, bounds: list[float]) -> _Leaf:
        """Select a path from the root on ``state`` (a determinized copy), each step with a virtual loss."""
        game = self.game
        path: list[tuple[_Node, int]] = []
        node, mask, player = root, root_mask, root_player
        while True:
            action = self._select(node, mask, player, bounds, root_noise if node is root else None)
            slot = int(node.slot[action])
            if slot < 0:
                slot = node.add(action)
            path.append((node, slot))
            node.virtual[slot] += 1.0
            node.pending += 1.0
            game.step(state, action)
            if game.is_over(state):
                value = game.returns(state)
                _widen(bounds, value)
                return _Leaf(path, None, mask, player, seed, value)
            mask = game.legal_mask(state)
            player = game.current_player(state)
            child = node.kids[slot]
            if child is None:
                return _Leaf(path, state, mask, player, seed, None)
            node = child

    def _evaluate_leaves(self, leaves: list[_Leaf], bounds: list[float]) -> None:
        """Every unfinished leaf's value (and prior logits where its node is new): one forward pass per
        network when batched, one per leaf with ``batch=1`` or an evaluator without ``many``."""
        open_leaves = [leaf for leaf in leaves if leaf.state is not None]
        new_nodes: set[tuple[int, int]] = set()
        for leaf in open_leaves:
            key = (id(leaf.path[-1][0]), leaf.path[-1][1])
            leaf.first = key not in new_nodes
            new_nodes.add(key)
        values = self.value_weight > 0
        many = getattr(self.evaluate, "many", None)
        if self.batch == 1 or many is None:
            outputs = [self.evaluate(leaf.state, leaf.mask, leaf.player, values=values)
                       for leaf in open_leaves]
        else:
            outputs = many([(leaf.state, leaf.mask, leaf.player, leaf.first) for leaf in open_leaves],
                           values=values)
        for leaf, (logits, gain) in zip(open_leaves, outputs, strict=True):
            leaf.logits = logits
            leaf.value = self._leaf_value(leaf.state, gain, leaf.seed)
            _widen(bounds, leaf.value)

    def _leaf_value(self, state: State, gain: np.ndarray | None, seed: int) -> np.ndarray:
        """``value_weight`` * (totals + predicted gain) + the rest from a rollout (it consumes ``state``)."""
        weight = self.value_weight
        value = np.zeros(self.game.num_players())
        if weight > 0:
            value += weight * (self.game.returns(state) + gain)
        if weight < 1:
            value += (1.0 - weight) * np.asarray(self.game.rollout_returns(state, seed, self.rollout),
                                                 dtype=np.float64)
        return value

    def _expand(self, state: State, mask: np.ndarray, player: int, seed: int, bounds: list[float]) -> _Node:
        """A new node for ``state`` (a determinized copy: a rollout consumes it) with its leaf value."""
        logits, gain = self.evaluate(state, mask, player, values=self.value_weight > 0)
        value = self._leaf_value(state, gain, seed)
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
        virtual = node.pending  # virtual losses of this round: visits worth ``lo`` to every seat
        if virtual:
            q = np.full(legal.size, ((node.w[player] + virtual * lo) / (node.n + virtual) - lo) / scale)
        else:
            q = np.full(legal.size, (node.w[player] / node.n - lo) / scale)
        visits = np.zeros(legal.size)
        slots = node.slot[legal]
        known = np.flatnonzero(slots >= 0)
        if known.size:
            s = slots[known]
            if virtual:
                extra = node.virtual[s]
                visits[known] = node.visits[s] + extra
                q[known] = ((node.sums[s, player] + extra * lo) / visits[known] - lo) / scale
            else:
                visits[known] = node.visits[s]
                q[known] = (node.sums[s, player] / node.visits[s] - lo) / scale
        return int(legal[np.argmax(puct_scores(prior, visits, q, self.c_puct))])


@dataclass(slots=True)
class _Leaf:
    """One selected path of a round: its end state (None when the game ended there), who acts there,
    the rollout seed, and after evaluation its value and (for a new node) prior logits."""

    path: list[tuple[_Node, int]]
    state: State | None
    mask: np.ndarray
    player: int
    seed: int
    value: np.ndarray | None
    logits: np.ndarray | None = None
    first: bool = True


def _backup(leaf: _Leaf) -> None:
    """Replace the path's virtual losses by the leaf's value; create the leaf's node (the first path of
    the round to reach it) or count this path as another visit of it."""
    value = leaf.value
    for node, slot in leaf.path:
        node.virtual[slot] -= 1.0
        node.pending -= 1.0
        node.visits[slot] += 1.0
        node.sums[slot] += value
        node.n += 1.0
        node.w += value
    if leaf.state is not None:
        parent, slot = leaf.path[-1]
        child = parent.kids[slot]
        if child is None:
            parent.kids[slot] = _Node(leaf.logits, value)
        else:
            child.n += 1.0
            child.w += value


def _widen(bounds: list[float], value: np.ndarray) -> None:
    """Stretch the running [min, max] of returns to cover ``value``."""
    bounds[0] = min(bounds[0], float(value.min()))
    bounds[1] = max(bounds[1], float(value.max()))

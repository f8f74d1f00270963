"""Open-loop information-set MCTS (UCT) over determinized futures, generic over the Game contract.

Design (why it is sound for games with hidden, random futures such as a shuffled deck):

* **Determinization.** A simulation starts from ``game.determinize(root, rng)``: a copy whose
  hidden future (deck or bag order) is resampled from what the acting player can know. The
  agent never steps, copies or reads the real state except through ``determinize``,
  ``current_player``, ``legal_mask`` and the greedy prior at the root (public information); a
  test (tests/agents/search/test_no_peeking.py) proves the decisions cannot depend on the real future.
* **Open loop.** Tree nodes are action *sequences*, not states: after an action the next revealed
  card depends on the determinization, so the same node stands for every state reached by that
  sequence. A simulation re-applies the node's actions to its own determinized copy; children
  whose action is illegal in that copy are skipped, and UCB counts each child's *availability*
  (how often it was legal when its parent was visited) instead of the parent's visits, as in
  single-observer ISMCTS (Cowling, Powley & Whitehouse 2012).
* **Progressive widening.** A node with ``N`` visits may have at most ``ceil(k * N ** alpha)``
  children (``widening=(k, alpha)``); new children come in prior order: a random order, or the
  game's greedy ranking (``prior="greedy"``, when the game has a greedy agent with
  ``rank_actions``), or a trained network's probabilities (``prior=ppo:<checkpoint>``).
  ``widening=0`` means classic UCT (every legal action tried once first).
* **Max-n backups.** Every node keeps the sum of the per-seat return *vectors*; the seat that
  acts at a node maximises its own component. Returns are normalised to [0, 1] by the running
  min/max of every return seen in this search, so ``c`` is scale free.
* **Rollouts.** ``game.rollout_returns(state, seed, policy)``: the game's compiled loop
  (``rollout="random"`` or ``"greedy"``, the greedy agent's compiled playout) plays the leaf to
  the end.
* **Paired futures** (``paired=true``): the k-th visit of every root child is simulated on the
  k-th sampled future (same determinization and rollout seed), so root children are compared on
  common random numbers; this removes most of the deck-order noise from their differences.
* **Budget.** ``simulations`` per decision, or ``time_limit`` seconds (whichever ends first when
  both are given). The final move is the most visited root child (ties: higher mean).

**Network-guided search** (``value=ppo:<checkpoint>``, engine=python): ``act`` runs the PUCT search of
:mod:`agents.search.puct` instead of UCT, over the same determinized open-loop tree: the network's masked
policy is each node's prior (``prior=ppo:<other checkpoint>`` for another network; without it, the
value network's own policy head), selection is ``Q + c_puct * P * sqrt(N) / (1 + n)``, and a leaf is
worth ``value_weight`` times totals-plus-predicted-gain per seat (one batched forward pass) plus
``1 - value_weight`` times a ``rollout`` to the end. Options: ``c_puct`` (1.5), ``value_weight`` (1.0),
``noise`` (root Dirichlet fraction, 0), ``batch`` (leaves evaluated per forward pass, with virtual loss;
1, one pass per leaf), ``rollout``, ``simulations``, ``time_limit``, ``seed_offset``;
the UCT-only options (``c``, ``widening``, ``max_depth``, ``determinize_every``, ``paired``) are refused,
e.g. ``mcts:prior=ppo:runs/train-demo,value=ppo:runs/train-demo,simulations=64,value_weight=0.5``.

``engine="compiled"`` runs a root search entirely in numba, for games listed in
:data:`COMPILED_SEARCH`. Cartographers (agents/search/cartographers_root.py): the same search with
``max_depth=1`` and random rollouts, several times more simulations per second than the Python loop
(docs/benchmarks.md); with
``rollout=greedy`` (agents/search/flat.py) a flat search instead: greedy-ranked
decisions compared on the same resampled futures with compiled greedy playouts, the game's last
decision valued exactly over every legal action.
Cascadia (agents/search/turn.py): the root children are whole turns (market option, tile
placement, token hex) planned by the greedy agent, each simulated on the same determinized
futures with greedy playouts to the end (``rollout=greedy`` required; ``simulations`` counts
playouts per turn, ``widening=k/alpha`` sets how many turns are compared).
Dorfromantik (agents/search/placement.py): greedy-ranked placements (with the ones that close a
task no unseen tile can extend) played to the end on the same resampled futures, greedy or random
playouts, anytime progressive widening; greedy's placement stays unless beaten by one standard
error (``mcts:engine=compiled,rollout=greedy,simulations=128,widening=1/0.33``).
``halving=true`` (Cascadia and the Cartographers flat search): the playouts are spent by
sequential halving (agents/search/halving.py) instead of an even split over the compared candidates.
``greedy=<preset>`` (the compiled searches: Cartographers flat, Cascadia and Dorfromantik turn
searches): candidates are ranked and playouts played by a preset of the game's greedy agent
instead of its defaults (Cartographers ``progress``, agents/greedy/cartographers.py; Cascadia and
Dorfromantik ``selfplay``, agents/greedy/cascadia.py and agents/greedy/dorfromantik.py).
``redraws=true`` (the Cascadia turn search): the free three-of-a-kind redraw and, with a nature token,
the redraw of all four tokens are compared as candidates too (the redraw, then the greedy turn on the
new tokens, then greedy playouts); a chosen redraw is played and the turn searched again.
``free_redraw=true`` (the Cascadia turn search): the free three-of-a-kind redraw is taken whenever the
rules offer it, before the turn is searched (no greedy preset takes it; it pays greedy and the search).
``playout_redraw=true`` (the Cascadia turn search): every seat of the playouts takes it too (greedy's
``free_redraw`` weight).
``objective=base`` (the Cascadia turn search): playouts and the exact last turn value a turn by the
acting seat's base score (wildlife, habitats and nature tokens) instead of its total (which adds
the habitat majority bonuses).
``rotations=N`` (the Cascadia turn search, 1-6): each (market option, position) is a candidate turn
with each of the tile's N best rotations by greedy's plan (each with the token planned with it)
instead of the best one only.
``horizon=H`` (the Cartographers flat search, 1-3): playouts stop when the season H after the
decision's own begins, and the seasons left are valued on the map there, each as if it were scored
today.
``rollout_width=N`` (the Cartographers flat and Cascadia turn searches with ``rollout=learned``): at
each playout decision the learned model values only the N candidates greedy values best (Cascadia: the
N turns the listing plans best), so a learned playout costs little more than a greedy one.
``screen=S/C`` (the Cartographers flat search): at a decision whose map has at most C drawn cells (C = 0:
the game's first decision) every candidate past the first half of the width plays S paired futures, and the
best of them by mean take the second half of the compared candidates (greedy's order misses the best first
placements on an empty map); these playouts come on top of ``simulations``.

Cartographers solo settings, measured on paired seeds (evaluation points; greedy alone +18.8):
``mcts:simulations=24,prior=greedy,rollout=greedy,widening=1/0.4,paired=true`` (+9.5 over greedy,
seeds 0-99), ``simulations=48`` (+10.7) and ``simulations=96`` (+14.1, mean +34.4); the fast
``mcts:simulations=3000,engine=compiled,prior=greedy,widening=1/0.4`` (about 2.5 s a game, +6.9 on
seeds 0-29). The defaults (random prior and rollouts) are far weaker than greedy on this game.

``last_stats`` describes the latest decision (simulations, seconds, simulations/s, root visits);
``total_simulations`` / ``total_seconds`` accumulate over the agent's life.
"""

from __future__ import annotations

import importlib
import math
import time
from typing import Any

import numpy as np

from agents.base import make_agent
from agents.explain import forced_choice, search_statistics
from agents.greedy import make_greedy
from agents.search.puct import NetworkEvaluator, PUCTSearch, check_batch, root_statistics
from envs.core.errors import ConfigError
from envs.core.game import Game, State

_SEED_BOUND = 2**62
#: defaults of the UCT-only options (compared by identity: an option given in a spec is another object)
_DEFAULT_C = 0.7
_DEFAULT_WIDENING = (2.0, 0.5)


class _Node:
    """Statistics of the children of one action sequence (open loop)."""

    __slots__ = ("actions", "index", "visits", "sums", "avail", "kids", "total", "expanded", "order",
                 "order_pos")

    def __init__(self, num_seats: int, capacity: int = 8):
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.index: dict[int, int] = {}
        self.visits = np.zeros(capacity, dtype=np.float64)
        self.sums = np.zeros((capacity, num_seats), dtype=np.float64)
        self.avail = np.zeros(capacity, dtype=np.float64)
        self.kids: list[_Node | None] = []
        self.total = 0
        self.expanded: np.ndarray | None = None  # bool mask over the action space
        self.order: np.ndarray | None = None  # prior order of the node's actions (root only)
        self.order_pos = 0

    @property
    def size(self) -> int:
        return len(self.kids)

    def add(self, action: int, num_actions: int) -> int:
        """Append a child for ``action`` and return its slot."""
        slot = len(self.kids)
        if slot == self.actions.shape[0]:
            grow = max(8, slot)
            self.actions = np.concatenate([self.actions, np.zeros(grow, dtype=np.int64)])
            self.visits = np.concatenate([self.visits, np.zeros(grow)])
            self.avail = np.concatenate([self.avail, np.zeros(grow)])
            self.sums = np.concatenate([self.sums, np.zeros((grow, self.sums.shape[1]))])
        self.actions[slot] = action
        self.index[action] = slot
        self.kids.append(None)
        if self.expanded is None:
            self.expanded = np.zeros(num_actions, dtype=bool)
        self.expanded[action] = True
        return slot


class MCTSAgent:
    """Open-loop determinized UCT with progressive widening and max-n backups (see module doc)."""

    name = "mcts"

    def __init__(self, game: Game, simulations: int | None = 200, time_limit: float | None = None,
                 c: float = _DEFAULT_C, rollout: str = "random", widening: Any = _DEFAULT_WIDENING,
                 prior: str = "random", max_depth: int | None = None, determinize_every: int = 1,
                 seed_offset: int = 0, engine: str = "python", paired: bool = False,
                 value: str | None = None, value_weight: float | None = None, c_puct: float | None = None,
                 noise: float | None = None, batch: int | None = None, exact_tiles: Any = None,
                 halving: bool = False, greedy: str = "default", horizon: Any = None,
                 redraws: bool = False, objective: str = "total", model: str | None = None,
                 free_redraw: bool = False, playout_redraw: bool = False, rotations: Any = 1,
                 rollout_width: Any = None, screen: Any = None, model_weight: Any = None):
        if isinstance(simulations, str) and simulations.lower() == "none":
            simulations = None  # "mcts:simulations=none,time_limit=1": a pure time budget
        if simulations is not None and (not isinstance(simulations, int) or simulations < 1):
            raise ConfigError(f"mcts: simulations must be a positive integer, got {simulations!r}")
        if time_limit is not None and (not isinstance(time_limit, int | float) or time_limit <= 0):
            raise ConfigError(f"mcts: time_limit must be a positive number of seconds, got {time_limit!r}")
        if simulations is None and time_limit is None:
            raise ConfigError("mcts: give simulations or time_limit (or both)")
        if not isinstance(c, int | float) or c < 0:
            raise ConfigError(f"mcts: c (exploration constant) must be >= 0, got {c!r}")
        if rollout not in ("random", "greedy", "learned"):
            raise ConfigError(f"mcts: rollout must be 'random', 'greedy' or 'learned', got {rollout!r}")
        if prior not in ("random", "greedy") and not str(prior).startswith("ppo:"):
            raise ConfigError(f"mcts: prior must be 'random', 'greedy' or 'ppo:<checkpoint>', got {prior!r}")
        _check_puct_options(value, prior, engine, c, widening, max_depth, determinize_every, paired,
                            value_weight, c_puct, noise, batch)
        if str(prior).startswith("ppo:") and engine != "python":
            raise ConfigError("mcts: a network prior (prior=ppo:...) orders the Python tree's widening; "
                              "use engine=python")
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 1):
            raise ConfigError(f"mcts: max_depth must be a positive integer, got {max_depth!r}")
        if not isinstance(determinize_every, int) or determinize_every < 1:
            raise ConfigError(f"mcts: determinize_every must be a positive integer, "
                              f"got {determinize_every!r}")
        if not isinstance(seed_offset, int):
            raise ConfigError(f"mcts: seed_offset must be an integer, got {seed_offset!r}")
        if not isinstance(paired, bool):
            raise ConfigError(f"mcts: paired must be true or false, got {paired!r}")
        if paired and determinize_every != 1:
            raise ConfigError("mcts: paired determinizations need determinize_every=1")
        if engine not in ("python", "compiled"):
            raise ConfigError(f"mcts: engine must be 'python' or 'compiled', got {engine!r}")
        self._compiled = None
        turn_search = None
        if engine == "compiled":
            self._compiled = _compiled_search(game)
            turn_search = _turn_search_class(self._compiled, game, rollout)
            if turn_search is not None:
                turn_search.check_options(rollout, max_depth, determinize_every, simulations)
            elif rollout != "random" or max_depth not in (None, 1) or determinize_every != 1 or paired:
                raise ConfigError("mcts: engine=compiled is the root bandit with random rollouts: it takes "
                                  "no rollout, max_depth, determinize_every or paired option")
            max_depth = 1
        if model is not None and not getattr(turn_search, "LEARNED_MODEL", False):
            raise ConfigError("mcts: model=<folder> (a learned candidate model that orders the candidates "
                              "and, with rollout=learned, plays the playouts) "
                              "is an option of the compiled searches: Cartographers flat (engine=compiled,"
                              "rollout=greedy or learned), Cascadia turn and Dorfromantik placement "
                              "(engine=compiled)")
        if rollout == "learned" and model is None:
            raise ConfigError("mcts: rollout=learned plays the playouts with a learned model: give "
                              "model=<folder> (a compiled search: cartographers flat, cascadia turn or "
                              "dorfromantik placement), e.g. model=models/dorfromantik")
        self.model = model
        if exact_tiles is not None and not getattr(turn_search, "EXACT_ENDGAME", False):
            raise ConfigError("mcts: exact_tiles is an option of the compiled Dorfromantik search "
                              "(engine=compiled)")
        self.halving = _switch("halving", halving, turn_search, "HALVING",
                               "halving=true (sequential halving) is an option of the compiled turn searches "
                               "of cascadia and cartographers")
        self.redraws = _switch("redraws", redraws, turn_search, "REDRAWS",
                               "redraws=true (token redraws as candidate turns) is an option of the compiled "
                               "cascadia turn search")
        self.free_redraw = _switch("free_redraw", free_redraw, turn_search, "REDRAWS",
                                   "free_redraw=true (take the free three-of-a-kind redraw whenever offered) "
                                   "is an option of the compiled cascadia turn search")
        self.playout_redraw = _switch("playout_redraw", playout_redraw, turn_search, "REDRAWS",
                                      "playout_redraw=true (every seat of the playouts takes the free "
                                      "three-of-a-kind redraw) is an option of the compiled cascadia turn "
                                      "search")
        self.rotations = _parse_rotations(rotations, turn_search)
        objectives = getattr(turn_search, "OBJECTIVES", None)
        if objective != "total" and objectives is None:
            raise ConfigError("mcts: objective=<score> (the score the playouts maximise) is an option of the "
                              "compiled cascadia turn search (engine=compiled)")
        if objectives is not None and objective not in objectives:
            raise ConfigError(f"mcts: objective must be one of {', '.join(objectives)}, got {objective!r}")
        self.objective = str(objective)
        self.horizon = _parse_horizon(horizon, turn_search)
        self.rollout_width = _parse_rollout_width(rollout_width, rollout, turn_search)
        self.screen = _parse_screen(screen, turn_search)
        self.model_weight = _parse_model_weight(model_weight, model, turn_search)
        if self.screen is not None and time_limit is not None:
            raise ConfigError("mcts: screen=S/C plays a fixed number of screening playouts before the "
                              "search; give it with simulations, not time_limit")
        if greedy != "default" and not getattr(turn_search, "GREEDY_PRESETS", False):
            raise ConfigError("mcts: greedy=<preset> (the greedy weights of candidate ranking and "
                              "playouts) is an option of the compiled searches: the cartographers flat "
                              "search (engine=compiled,rollout=greedy), the cascadia and dorfromantik turn "
                              "searches (engine=compiled)")
        self.greedy = str(greedy)  # validated by the turn search
        self.exact_tiles = exact_tiles  # validated by the turn search
        self.game = game
        self.simulations = simulations
        self.time_limit = None if time_limit is None else float(time_limit)
        self.c = float(c)
        self.rollout = rollout
        self.widening = _parse_widening(widening)
        self.prior = prior
        self.max_depth = max_depth
        self.determinize_every = determinize_every
        self.seed_offset = seed_offset
        self.engine = engine
        self.paired = paired
        self._puct = None
        if value is not None:
            self._puct = _puct_search(game, value, prior, simulations, self.time_limit, rollout, seed_offset,
                                      value_weight, c_puct, noise, batch)
        self._ranker = None if self._puct is not None else _greedy_ranker(game) if prior == "greedy" else \
            _network_ranker(game, prior) if prior.startswith("ppo:") else None
        self._rollout = _rollout_function(game, rollout)
        self.last_stats: dict[str, Any] = {}
        #: the typed options of a search built by its own name (agents.search.names); None for mcts:
        self.search_options: Any = None
        #: set by a recorder: ``act`` then leaves the root's statistics in ``last_explanation``
        self.explaining = False
        self.last_explanation: dict[str, Any] | None = None
        self.total_simulations = 0
        self.total_seconds = 0.0
        self._turn_search = turn_search(self) if turn_search is not None else None

    # ---- the decision ------------------------------------------------------------------------

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Search from ``state`` (never reading its hidden future) and return the chosen action."""
        legal = np.flatnonzero(legal_mask)
        if legal.size == 0:
            raise RuntimeError("no legal action: the game should be over")
        if self._turn_search is not None:  # plans whole turns, forced decisions included
            return self._turn_search.act(state, legal_mask, rng)
        if legal.size == 1:
            return forced_choice(self, int(legal[0]))
        if self._compiled is not None:
            return self._act_compiled(state, legal_mask, legal, rng)
        if self._puct is not None:
            return self._act_puct(state, legal_mask, rng)
        game = self.game
        seats = game.num_players()
        root = _Node(seats, capacity=min(legal.size, 64))
        root.order = self._root_order(state, legal_mask, legal, rng)
        root_player = game.current_player(state)
        bounds = [math.inf, -math.inf]
        seed_base = int(rng.integers(_SEED_BOUND)) ^ (self.seed_offset * 0x9E3779B97F4A7C15 % _SEED_BOUND)
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        limit = self.simulations if self.simulations is not None else 1 << 62
        det = None
        sims = 0
        while sims < limit:
            if deadline is not None and sims > 0 and time.perf_counter() >= deadline:
                break
            first = None
            seed = (seed_base + sims) % _SEED_BOUND
            if self.paired:
                # the k-th visit of every root child sees the k-th sampled future (common random numbers)
                first = self._select(root, state, legal_mask, root_player, rng, bounds, is_root=True)
                visit = int(root.visits[first[0]])
                seed = (seed_base + visit) % _SEED_BOUND
                sim_state = game.determinize(state, np.random.default_rng([seed_base, visit]))
            elif sims % self.determinize_every == 0 or det is None:
                det = game.determinize(state, rng)
                sim_state = det if self.determinize_every == 1 else det.copy()
            else:
                sim_state = det.copy()
            self._simulate(root, sim_state, legal_mask, root_player, rng, bounds, seed, first)
            sims += 1
        elapsed = time.perf_counter() - start
        best = self._finish(root, root_player, sims, elapsed)
        action = int(root.actions[best])
        self._explain_root(root, root_player, action, sims)
        return action

    def _act_compiled(self, state: State, legal_mask: np.ndarray, legal: np.ndarray,
                      rng: np.random.Generator) -> int:
        """The root bandit in the game's compiled search module (same statistics, no Python per
        simulation); runs in chunks so a time limit is honoured."""
        mod = self._compiled
        order = self._root_order(state, legal_mask, legal, rng)
        player = self.game.current_player(state)
        seats = self.game.num_players()
        visits = np.zeros(order.size)
        sums = np.zeros((order.size, seats))
        acc = np.array([np.inf, -np.inf, 0.0, 0.0])
        seed = int(rng.integers(_SEED_BOUND)) ^ (self.seed_offset * 0x9E3779B97F4A7C15 % _SEED_BOUND)
        stream = np.array([seed], dtype=np.uint64)
        scratch = mod.new_scratch(state)
        limit = self.simulations if self.simulations is not None else 1 << 62
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        chunk = 64
        sims = 0
        stats = mod.RootStats(order, visits, sums, acc)
        while sims < limit:
            n = min(chunk, limit - sims)
            mod.root_search(state.arrays(), scratch, self.game.tb, stats, n, self.c, self.widening[0],
                            self.widening[1], player, stream)
            sims += n
            if deadline is not None and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - start
        size = int(acc[3])
        root = _Node(seats, capacity=max(size, 1))
        for i in range(size):
            root.add(int(order[i]), legal_mask.shape[0])
        root.visits[:size] = visits[:size]
        root.sums[:size] = sums[:size]
        best = self._finish(root, player, sims, elapsed)
        self._explain_root(root, player, int(order[best]), sims)
        return int(order[best])

    def _finish(self, root: _Node, player: int, sims: int, elapsed: float) -> int:
        """Record a finished search (``last_stats``, totals) and return the chosen root slot."""
        size = root.size
        visits = root.visits[:size]
        means = root.sums[:size, player] / np.maximum(visits, 1.0)
        best, self.last_stats = root_statistics(root.actions[:size], visits, means, sims, elapsed)
        self.total_simulations += sims
        self.total_seconds += elapsed
        return best

    def _act_puct(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """The network-guided PUCT search (value=ppo:...); its statistics become this agent's."""
        search = self._puct
        search.explaining = self.explaining
        action = search.act(state, legal_mask, rng)
        self.last_stats = search.last_stats
        self.last_explanation = search.last_explanation
        self.total_simulations += search.last_stats["simulations"]
        self.total_seconds += search.last_stats["seconds"]
        return action

    def _explain_root(self, root: _Node, player: int, action: int, sims: int) -> None:
        """With ``explaining`` set: the most visited root actions, their visits and mean return."""
        if self.explaining:
            size = root.size
            means = root.sums[:size, player] / np.maximum(root.visits[:size], 1.0)
            self.last_explanation = search_statistics("mcts", root.actions[:size], root.visits[:size], means,
                                                      action, sims)

    # ---- one simulation ----------------------------------------------------------------------

    def _simulate(self, root: _Node, state: State, root_mask: np.ndarray, root_player: int,
                  rng: np.random.Generator, bounds: list[float], seed: int,
                  first: tuple[int, bool] | None = None) -> None:
        game = self.game
        path: list[tuple[_Node, int]] = []
        node: _Node | None = root
        depth = 0
        mask = root_mask
        player = root_player
        while True:
            if depth == 0 and first is not None:
                slot, is_new = first
            else:
                slot, is_new = self._select(node, state, mask, player, rng, bounds, is_root=depth == 0)
            path.append((node, slot))
            game.step(state, int(node.actions[slot]))
            depth += 1
            if is_new or game.is_over(state) or (self.max_depth is not None and depth >= self.max_depth):
                break
            child = node.kids[slot]
            if child is None:
                child = node.kids[slot] = _Node(len(node.sums[0]))
            node = child
            player = game.current_player(state)
            mask = game.legal_mask(state)
        if game.is_over(state):
            returns = game.returns(state)
        else:
            returns = np.asarray(self._rollout(state, seed), dtype=np.float64)
        lo, hi = float(returns.min()), float(returns.max())
        if lo < bounds[0]:
            bounds[0] = lo
        if hi > bounds[1]:
            bounds[1] = hi
        for n, s in path:
            n.visits[s] += 1.0
            n.sums[s] += returns
            n.total += 1

    def _select(self, node: _Node, state: State, mask: np.ndarray, player: int,
                rng: np.random.Generator, bounds: list[float], is_root: bool) -> tuple[int, bool]:
        """The child slot to follow (UCB over the children legal now) and whether it is new."""
        size = node.size
        if size:
            legal_now = mask[node.actions[:size]]
            n_legal = int(legal_now.sum())
        else:
            legal_now = None
            n_legal = 0
        if not is_root and size:
            node.avail[:size] += legal_now
        if self._may_widen(node, n_legal):
            action = self._next_action(node, state, mask, rng, is_root)
            if action >= 0:
                slot = node.add(action, mask.shape[0])
                node.avail[slot] = 1.0
                return slot, True
        if n_legal == 0:  # cannot happen at the root; below it every legal action was tried
            action = self._next_action(node, state, mask, rng, is_root)
            slot = node.add(action, mask.shape[0])
            node.avail[slot] = 1.0
            return slot, True
        visits = node.visits[:size]
        means = node.sums[:size, player] / visits
        lo, hi = bounds
        scale = hi - lo if hi > lo else 1.0
        count = float(node.total) if is_root else node.avail[:size]
        ucb = (means - lo) / scale + self.c * np.sqrt(np.log(np.maximum(count, 1.0)) / visits)
        if legal_now is not None and n_legal < size:
            ucb = np.where(legal_now, ucb, -np.inf)
        return int(np.argmax(ucb)), False

    def _may_widen(self, node: _Node, n_legal_children: int) -> bool:
        k, alpha = self.widening
        if k <= 0:
            return True  # classic UCT: _next_action returns -1 once every legal action is a child
        allowed = math.ceil(k * (node.total + 1) ** alpha)
        return n_legal_children < allowed

    def _next_action(self, node: _Node, state: State, mask: np.ndarray, rng: np.random.Generator,
                     is_root: bool) -> int:
        """The next untried legal action in prior order, or -1 when every legal one is a child."""
        if is_root:
            order = node.order
            if node.order_pos < order.shape[0]:
                node.order_pos += 1
                return int(order[node.order_pos - 1])
            return -1
        untried = mask if node.expanded is None else mask & ~node.expanded
        candidates = np.flatnonzero(untried)
        if candidates.size == 0:
            return -1
        if self._ranker is not None:
            ranked = self._ranker(state, untried)
            return int(ranked[0])
        return int(candidates[rng.integers(candidates.size)])

    def _root_order(self, state: State, mask: np.ndarray, legal: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
        """Root actions in the order widening adds them."""
        if self._ranker is not None:
            return np.asarray(self._ranker(state, mask), dtype=np.int64)
        return rng.permutation(legal)


def _check_puct_options(value: str | None, prior: str, engine: str, c: float, widening: Any,
                        max_depth: int | None, determinize_every: int, paired: bool,
                        value_weight: float | None, c_puct: float | None, noise: float | None,
                        batch: int | None = None) -> None:
    """ConfigError for options that do not fit the chosen search (UCT, or PUCT with ``value``)."""
    if value is None:
        given = [k for k, v in (("value_weight", value_weight), ("c_puct", c_puct), ("noise", noise),
                                ("batch", batch)) if v is not None]
        if given:
            raise ConfigError(f"mcts: {', '.join(given)} belong(s) to the network-guided search: "
                              "give value=ppo:<checkpoint>")
        return
    if not isinstance(value, str) or not value.startswith("ppo:") or len(value) <= 4:
        raise ConfigError(f"mcts: value must be 'ppo:<checkpoint>', got {value!r}")
    if engine != "python":
        raise ConfigError("mcts: the network-guided search (value=ppo:...) runs in Python; use engine=python")
    if batch is not None:
        check_batch(batch)
    if prior not in ("random",) and not str(prior).startswith("ppo:"):
        raise ConfigError(f"mcts: with value=ppo:... the prior is a network: prior=ppo:<checkpoint> or "
                          f"none (the value network's policy), got prior={prior!r}")
    uct_only = [k for k, bad in (("c", c is not _DEFAULT_C), ("widening", widening is not _DEFAULT_WIDENING),
                                 ("max_depth", max_depth is not None),
                                 ("determinize_every", determinize_every != 1), ("paired", paired))
                if bad]
    if uct_only:
        raise ConfigError(f"mcts: {', '.join(uct_only)} belong(s) to the UCT search; with value=ppo:... the "
                          "options are c_puct, value_weight, noise, batch, rollout, simulations, time_limit")


def _puct_search(game: Game, value: str, prior: str, simulations: int | None, time_limit: float | None,
                 rollout: str, seed_offset: int, value_weight: float | None, c_puct: float | None,
                 noise: float | None, batch: int | None = None) -> PUCTSearch:
    """The PUCT search of ``value=ppo:...`` (each network loaded once; one net when prior is the same)."""
    from agents.ppo.agent import PPOAgent

    value_net = PPOAgent(game, path=value[4:]).net
    prior_net = value_net if prior in ("random", value) else PPOAgent(game, path=prior[4:]).net
    return PUCTSearch(game, NetworkEvaluator(game, prior_net, value_net), simulations=simulations,
                      time_limit=time_limit, c_puct=1.5 if c_puct is None else c_puct,
                      value_weight=1.0 if value_weight is None else value_weight, rollout=rollout,
                      noise=0.0 if noise is None else noise, seed_offset=seed_offset,
                      batch=1 if batch is None else batch)


def _switch(name: str, value: Any, turn_search: Any, flag: str, where: str) -> bool:
    """A true/false option of the compiled searches: ConfigError unless ``value`` is a bool, and when
    it is true but ``turn_search`` lacks ``flag`` (``where`` says which searches take it)."""
    if not isinstance(value, bool):
        raise ConfigError(f"mcts: {name} must be true or false, got {value!r}")
    if value and not getattr(turn_search, flag, False):
        raise ConfigError(f"mcts: {where} (engine=compiled)")
    return value


def _parse_rotations(rotations: Any, turn_search: Any) -> int:
    """The ``rotations`` option: how many of each placement's best rotations are candidate turns (1-6)."""
    if isinstance(rotations, bool) or not isinstance(rotations, int) or not 1 <= rotations <= 6:
        raise ConfigError(f"mcts: rotations must be an integer from 1 to 6, got {rotations!r}")
    if rotations != 1 and not getattr(turn_search, "ROTATIONS", False):
        raise ConfigError("mcts: rotations=N (each placement's N best tile rotations as candidate turns) is "
                          "an option of the compiled cascadia turn search (engine=compiled)")
    return rotations


def _parse_horizon(horizon: Any, turn_search: Any) -> int | None:
    """The ``horizon`` option: playouts stop after this many season ends (1-3; None: the game's end)."""
    if horizon is None:
        return None
    if isinstance(horizon, bool) or str(horizon) not in ("1", "2", "3"):
        raise ConfigError(f"mcts: horizon must be 1, 2 or 3 seasons, got {horizon!r}")
    if not getattr(turn_search, "HORIZON", False):
        raise ConfigError("mcts: horizon=<seasons> (playouts cut at a season's end) is an option of the "
                          "compiled cartographers flat search (engine=compiled,rollout=greedy)")
    return int(horizon)


def _parse_rollout_width(width: Any, rollout: str, turn_search: Any) -> int | None:
    """The ``rollout_width`` option: a learned playout values only greedy's N best candidates (None: all)."""
    if width is None:
        return None
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ConfigError(f"mcts: rollout_width must be a positive integer, got {width!r}")
    if rollout != "learned" or not getattr(turn_search, "ROLLOUT_WIDTH", False):
        raise ConfigError("mcts: rollout_width=<N> (learned playouts valuing greedy's N best candidates) is "
                          "an option of the compiled cartographers flat and cascadia turn searches with "
                          "rollout=learned")
    return width


def _parse_model_weight(weight: Any, model: str | None, turn_search: Any) -> float:
    """The ``model_weight=λ`` option: how much of the learned model's candidate values joins the playout
    means (0: none)."""
    if weight is None:
        return 0.0
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"mcts: model_weight must be a number >= 0, got {weight!r}")
    if model is None or not getattr(turn_search, "MODEL_WEIGHT", False):
        raise ConfigError("mcts: model_weight=λ (the learned model's candidate values added to the playout "
                          "means) is an option of the compiled cartographers flat search with model=<folder>")
    return float(weight)


def _parse_screen(screen: Any, turn_search: Any) -> tuple[int, int] | None:
    """The ``screen=S/C`` option (``S``: ``S/0``): ``(futures per candidate, most drawn cells)`` or None."""
    if screen is None:
        return None
    text = str(screen)
    parts = text.split("/")
    if len(parts) > 2 or not all(p.strip().isdigit() for p in parts) or int(parts[0]) < 1:
        raise ConfigError("mcts: screen must be S or S/C (S >= 1 futures per candidate, C >= 0 drawn "
                          f"cells), got {screen!r}")
    if not getattr(turn_search, "SCREEN", False):
        raise ConfigError("mcts: screen=S/C (every candidate screened on S futures while the map has at "
                          "most C drawn cells) is an option of the compiled cartographers flat search "
                          "(engine=compiled,rollout=greedy)")
    return int(parts[0]), int(parts[1]) if len(parts) == 2 else 0


def _parse_widening(widening: Any) -> tuple[float, float]:
    """``(k, alpha)`` from a tuple, ``"k/alpha"``, one number k (alpha 0.5) or 0/None/False (off)."""
    if widening is None or widening is False or widening == 0 or widening == "off":
        return (0.0, 0.0)
    try:
        if isinstance(widening, str):
            parts = widening.replace(",", "/").split("/")
            k, alpha = float(parts[0]), float(parts[1]) if len(parts) > 1 else 0.5
        elif isinstance(widening, int | float):
            k, alpha = float(widening), 0.5
        else:
            k, alpha = (float(v) for v in widening)
    except (ValueError, TypeError, IndexError) as exc:
        raise ConfigError(f"mcts: widening must be 'k/alpha', a number k or 'off', got {widening!r}") from exc
    if k <= 0 or not 0 < alpha <= 1:
        raise ConfigError(f"mcts: widening needs k > 0 and 0 < alpha <= 1, got {widening!r}")
    return (k, alpha)


def _rollout_function(game: Game, policy: str):
    """``rollout(state, seed) -> returns``: the game's compiled rollout ("random" or "greedy")."""
    return lambda state, seed: game.rollout_returns(state, seed, policy)


#: games with a compiled root search (engine="compiled")
COMPILED_SEARCH = {"cartographers": "agents.search.cartographers_root", "cascadia": "agents.search.turn",
                   "dorfromantik": "agents.search.placement"}


#: compiled flat searches with greedy (or learned) playouts beside a game's random-rollout root bandit
GREEDY_TURN_SEARCH = {"cartographers": "agents.search.flat"}


def _turn_search_class(module, game: Game, rollout: str):
    """The compiled search's ``TurnSearch`` class for ``rollout`` (None: the root bandit)."""
    turn_search = getattr(module, "TurnSearch", None)
    if turn_search is None and rollout in ("greedy", "learned") and game.name in GREEDY_TURN_SEARCH:
        turn_search = importlib.import_module(GREEDY_TURN_SEARCH[game.name]).TurnSearch
    return turn_search


def _compiled_search(game: Game):
    """The module implementing ``root_search`` / ``new_scratch`` for ``game``."""
    target = COMPILED_SEARCH.get(game.name)
    if target is None:
        raise ConfigError(f"mcts: no compiled search for {game.name!r}; use engine=python")
    return importlib.import_module(target)


def _network_ranker(game: Game, spec: str):
    """``rank(state, mask) -> actions by the network's probability``, for ``prior=ppo:<ckpt>``."""
    return make_agent(spec, game).rank_actions


def _greedy_ranker(game: Game):
    """``rank(state, mask) -> actions best first`` from the game's greedy agent."""
    greedy = make_greedy(game)
    ranker = getattr(greedy, "rank_actions", None)
    if ranker is None:
        raise ConfigError(f"mcts: prior='greedy' needs a greedy agent with rank_actions for {game.name!r}")
    return ranker

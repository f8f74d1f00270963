"""Cascadia candidate view for learned agents (the contract of :mod:`agents.learned`).

**Candidates are whole turns**, listed at the market phase for the seat to move: a turn is a row
``(market action, tile action, token action)`` of the action codec (:mod:`envs.cascadia.kernels`;
the token action is a hex, ``A_RETURN`` for the bag, or -1 when the pair has no token).
:func:`candidate_turns_and_features` returns the turn list (int64[n, 3]) and its features;
:func:`candidates` returns ``arange(n)`` as the candidate ids (row indices into that list) with
the same features. The list is the union of the turn search's
:func:`agents.search.turn.candidate_turns` under the greedy presets of :data:`LISTING_PRESETS`
(each with its ``turn_weights``): per market option and frontier hex, the best rotation and token
target of each preset, so the turn every one of these greedy presets would plan is in it. Rows
are the first preset's list best first (its first row is that greedy agent's turn), then each
further preset's new rows. Token redraws (the free three-of-a-kind one and the nature-token ones)
are not listed, as greedy never uses them.

**Features** (:data:`FEATURES`, computed by :mod:`agents.learned.cascadia_kernels`): the eleven
terms of the greedy turn value, unweighted, then descriptors of the seat's board after the turn's
tile and token (nothing hidden: the refill is not drawn). ``greedy_theta(preset)`` weights the
first eleven so that ``features @ theta[phase]`` is the greedy value of the turn (float32
rounding aside). ``endgame_turns`` (preset ``endgame``: 1) is handled by the phases: the seat's
last own turn is a phase of its own, valued by the exact score change; other values of
``endgame_turns`` than 0 and 1 are not representable and raise ConfigError.

**Phases** (:data:`N_PHASES` = 3) by the seat's own turns after this one: 0 early (10 or more),
1 middle (1-9), 2 its last turn.

A model may carry a pattern table (:mod:`agents.learned.cascadia_patterns`): a turn's value is then
``features @ theta[phase]`` plus the change of the seat's pattern value that its tile and token make
(:meth:`LinearPolicy.values`); such a model plays in Python only (no compiled model playouts).

:class:`LinearPolicy` picks a turn at the market phase and plays its tile and token actions at
the next two decisions (the plan is kept for the turn, keyed by the state); an action of the
plan that is not legal, or a decision without a plan, gets the greedy ``selfplay`` move.
Where the rules offer the free redraw of three identical tokens, ``redraw="model"`` (the default)
takes it when the model's best turn, averaged over :data:`REDRAW_SAMPLES` redraws sampled from the
bag's public counts on a private stream (the game's own chance stream is never read), beats its
best turn on the market as it is; ``"never"`` (how greedy plays) and ``"always"`` are the simple rules.
:func:`label_games` values the top turns of every decision by paired greedy playouts (its games
play turns only, no redraws).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.greedy.cascadia import (
    BEAR_SINGLE,
    EDGE_MATCH,
    ELK_LINE,
    ENDGAME_TURNS,
    FOX_ROOM,
    HAWK_ROOM,
    NATURE_COST,
    NATURE_GAIN,
    OPEN_SPOT,
    SALMON_RUN,
    greedy_action,
    own_turns_after,
    preset_weights,
    turn_weights,
)
from agents.learned import cascadia_kernels as CK
from agents.learned import cascadia_patterns as CP
from agents.learned.cascadia_features import turn_features
from agents.learned.cascadia_listing import list_turns
from agents.learned.cascadia_playouts import CompiledModel, paired_model_playouts
from agents.search.turn import paired_playouts
from envs.cascadia import kernels as K
from envs.core.errors import ConfigError
from envs.core.game import Game
from envs.core.rng import derive_seed, new_stream

_ANIMALS = ("bear", "elk", "salmon", "hawk", "fox")
_HABITATS = ("mountain", "forest", "prairie", "wetland", "river")

#: (name, meaning) per feature column, in the order of :mod:`agents.learned.cascadia_kernels`
FEATURES: tuple[tuple[str, str], ...] = (
    ("corridor_gain", "points the largest corridors gain from the tile (greedy term)"),
    ("wildlife_gain", "wildlife points the token gains (greedy term; 0 when returned)"),
    ("nature_earned", "1 if the token lands on its keystone with the supply not empty (greedy term)"),
    ("bear_single", "lone bear with a clear empty bear hex beside it (greedy look-ahead)"),
    ("elk_line", "elk: axes through the token an empty elk hex can extend, / 3 (greedy look-ahead)"),
    ("salmon_run", "salmon with at most one salmon neighbour and an empty salmon hex next to it"),
    ("fox_room", "fox: empty placed hexes around it (greedy look-ahead)"),
    ("hawk_room", "1 if a hawk lands with no hawk beside it (greedy look-ahead)"),
    ("edge_match", "edges of the new tile matching a placed neighbour's habitat (greedy look-ahead)"),
    ("open_spot", "animals the new tile can take when it stays empty (greedy look-ahead)"),
    ("nature_spent", "1 if a nature token pays for a free market choice (greedy cost)"),
    ("turns_left", "the seat's own turns after this one"),
    *((f"tokens_{a}", f"{a} tokens on the seat's board after the turn") for a in _ANIMALS),
    *((f"score_{a}", f"{a} wildlife score after the turn") for a in _ANIMALS),
    *((f"corridor_{h}", f"largest {h} corridor after the turn") for h in _HABITATS),
    *((f"gap_{h}", f"largest {h} corridor minus the best other seat's (0 solo)") for h in _HABITATS),
    *((f"spots_{a}", f"empty placed hexes that can take a {a} after the turn") for a in _ANIMALS),
    ("nature_held", "nature tokens the seat holds after the turn"),
    ("tiles", "tiles in the seat's area after the turn"),
)
N_FEATURES = len(FEATURES)
assert N_FEATURES == CK.NUM_FEATURES

N_PHASES = 3
#: the best greedy preset: the start of a fit, and the playouts that label candidates play it
DEFAULT_PRESET = "endgame"
#: the greedy presets whose candidate turns are listed (their union; the first sets the order)
LISTING_PRESETS = ("selfplay", "endgame", "default")
#: the greedy preset of LinearPolicy's fallback moves
FALLBACK_PRESET = "selfplay"
#: LinearPolicy's choices on the free three-of-a-kind redraw (``redraw=``): the model's expected best
#: turn over sampled redraws against its best turn now, never, or whenever the rules offer it
REDRAW_CHOICES = ("model", "never", "always")
#: sampled redraws per decision of ``redraw=model``
REDRAW_SAMPLES = 16

_LISTING = np.array([preset_weights(name) for name in LISTING_PRESETS])


def _phase_of(turns_after: int) -> int:
    return 2 if turns_after == 0 else 1 if turns_after < 10 else 0


def phase(game: Game, state) -> int:
    """0 early (10 or more own turns after this one), 1 middle, 2 the seat's last turn."""
    return _phase_of(int(own_turns_after(state.ctl)))


def greedy_theta(preset: str = DEFAULT_PRESET) -> np.ndarray:
    """float64[N_PHASES, N_FEATURES]: the greedy ``preset``'s weights on its eleven terms per
    phase (``turn_weights`` on the phase's own turns; extra columns 0)."""
    weights = preset_weights(preset)
    if weights[ENDGAME_TURNS] not in (0.0, 1.0):
        raise ConfigError("learned (cascadia): greedy_theta takes endgame_turns 0 or 1 only")
    theta = np.zeros((N_PHASES, N_FEATURES))
    ctl = np.zeros(K.NUM_CTL, np.int32)
    ctl[K.C_PLAYERS] = 2
    for ph, after in enumerate((10, 1, 0)):
        ctl[K.C_STACK_LEN] = 2 * after
        w = turn_weights(weights, ctl)
        theta[ph, CK.F_CORRIDOR] = 1.0
        theta[ph, CK.F_WILDLIFE] = 1.0
        theta[ph, CK.F_NATURE_EARNED] = w[NATURE_GAIN]
        theta[ph, CK.F_BEAR_SINGLE] = w[BEAR_SINGLE]
        theta[ph, CK.F_ELK_LINE] = w[ELK_LINE]
        theta[ph, CK.F_SALMON_RUN] = w[SALMON_RUN]
        theta[ph, CK.F_FOX_ROOM] = w[FOX_ROOM]
        theta[ph, CK.F_HAWK_ROOM] = w[HAWK_ROOM]
        theta[ph, CK.F_EDGE_MATCH] = w[EDGE_MATCH]
        theta[ph, CK.F_OPEN_SPOT] = w[OPEN_SPOT]
        theta[ph, CK.F_NATURE_SPENT] = -w[NATURE_COST]
    return theta


def _listing_weights(ctl: np.ndarray) -> np.ndarray:
    """The listing presets' turn weights for this turn, duplicates left out."""
    rows: list[np.ndarray] = []
    for w in _LISTING:
        tw = turn_weights(w, ctl)
        if not any(np.array_equal(tw, r) for r in rows):
            rows.append(tw)
    return np.array(rows)


def candidate_turns_and_features(game: Game, state) -> tuple[np.ndarray, np.ndarray]:
    """The candidate turns of a market decision (int64[n, 3]: market, tile and token action, -1
    when none) and their features (float32[n, N_FEATURES])."""
    if int(state.ctl[K.C_PHASE]) != K.PHASE_MARKET:
        raise ValueError("cascadia candidates are whole turns: listed at the market phase only")
    b = state.board_args()
    turns, _, _ = list_turns(b, game.tb, _listing_weights(state.ctl))
    feats = np.empty((turns.shape[0], N_FEATURES), np.float32)
    turn_features(b, turns, game.tb, feats)
    return turns, feats


def turn_start(game: Game, state) -> bool:
    """True at a market decision (where a turn, and its candidates, start) of a running game."""
    return not game.is_over(state) and int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET


def candidates(game: Game, state) -> tuple[np.ndarray, np.ndarray]:
    """Candidate ids (int64 row indices into :func:`candidate_turns_and_features`' turn list) and
    their features; none outside the market phase (the middle of a turn) or once the game is over."""
    if not turn_start(game, state):
        return np.zeros(0, np.int64), np.zeros((0, N_FEATURES), np.float32)
    turns, feats = candidate_turns_and_features(game, state)
    return np.arange(turns.shape[0], dtype=np.int64), feats


def _best(values: np.ndarray) -> int:
    """The first row whose value is within 1e-6 of the best (float32 rounding keeps exact ties)."""
    return int(np.flatnonzero(values >= values.max() - 1e-6)[0])


def _turn_key(state) -> tuple[int, ...]:
    """The same for every decision of one turn of one game (as the turn search's plan key)."""
    c = state.ctl
    pos = int(c[K.C_STACK_POS])
    return (int(c[K.C_TURN]), int(c[K.C_CUR]), pos, int(state.stack[pos - 1]),
            *(int(t) for t in state.starters))


class LinearPolicy:
    """Plays the candidate turn with the highest ``features @ theta[phase]`` (first best), plus with a
    pattern ``table`` (:mod:`agents.learned.cascadia_patterns`) the change of the seat's pattern value
    that the turn's tile and token make."""

    name = "learned"

    def __init__(self, game: Game, theta: np.ndarray, preset: str = FALLBACK_PRESET, redraw: str = "model",
                 table: np.ndarray | None = None):
        if game.name != "cascadia":
            raise ConfigError(f"learned (cascadia): wrong game {game.name!r}")
        if redraw not in REDRAW_CHOICES:
            raise ConfigError(f"learned (cascadia): redraw must be one of {', '.join(REDRAW_CHOICES)}, "
                              f"got {redraw!r}")
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (N_PHASES, N_FEATURES):
            raise ConfigError(f"learned (cascadia): theta must be {N_PHASES} x {N_FEATURES}, "
                              f"got {theta.shape}")
        if table is not None and table.shape[0] == 0:
            table = None
        layers = range(1, CP.MAX_RINGS + 1)
        if table is not None and table.shape not in [CP.table_shape(r) for r in layers]:
            raise ConfigError(f"learned (cascadia): a pattern table must be {CP.table_shape()} or "
                              f"{CP.table_shape(CP.MAX_RINGS)}, got {table.shape}")
        self.game = game
        self.theta = theta
        self.table = None if table is None else np.ascontiguousarray(table, dtype=np.float64)
        self.fallback_weights = preset_weights(preset)
        self.redraw = redraw
        #: how often a planned action was not legal and greedy's move was played instead
        self.fallbacks = 0
        #: free three-of-a-kind redraws offered and taken
        self.redraws_offered = 0
        self.redraws_taken = 0
        self._plan: list[int] = []
        self._plan_key: tuple[int, ...] | None = None

    def turn_values(self, state, turns: np.ndarray) -> np.ndarray:
        """The model's value (float64[n]) of each of ``turns`` (int64[n, 3]: market, tile and token
        action, -1 when none) at the market-phase ``state``: :meth:`values` of their features."""
        if int(state.ctl[K.C_PHASE]) != K.PHASE_MARKET:
            raise ValueError("cascadia candidates are whole turns: valued at the market phase only")
        turns = np.ascontiguousarray(turns, dtype=np.int64)
        feats = np.empty((turns.shape[0], N_FEATURES), np.float32)
        turn_features(state.board_args(), turns, self.game.tb, feats)
        return self.values(state, turns, feats)

    def values(self, state, turns: np.ndarray, feats: np.ndarray) -> np.ndarray:
        """``feats @ theta[phase]`` of the candidate ``turns`` of the market-phase ``state``, plus the
        pattern table's change per turn when the model has one (float64[n])."""
        values = feats.astype(np.float64) @ self.theta[phase(self.game, state)]
        if self.table is not None and turns.shape[0]:
            tb = self.game.tb
            deltas = np.empty(turns.shape[0])
            CP.turn_deltas(self.table, state.board_args(), np.ascontiguousarray(turns, dtype=np.int64),
                           tb, CP.stage(int(own_turns_after(state.ctl))), deltas)
            values += deltas
        return values

    def playouts(self, src, det, work, cands: np.ndarray, futures: int, stream: np.ndarray, sums: np.ndarray,
                 column: int, width: int | None = None) -> None:
        """Add ``futures`` paired playouts of each candidate turn of ``cands`` (int64[n, 3]) to ``sums``
        (float64[n, seats]: each seat's final score in ``column``), the game after the turn played by
        this model in every seat (:func:`agents.learned.cascadia_playouts.paired_model_playouts`;
        ``src``, ``det`` and ``work`` as for :func:`agents.search.turn.paired_playouts`); with ``width``
        the model values only the listing's ``width`` best planned turns at each turn."""
        paired_model_playouts(src, det, work, cands, cands.shape[0], futures, stream, self.game.tb,
                              self.compiled(width=width or 0), sums, column, -1)

    def compiled(self, finish: np.ndarray | None = None, width: int = 0) -> CompiledModel:
        """This model for compiled play (``finish``: the greedy weights that end a playout after its
        model turns, the fallback weights by default; ``width`` > 0: it values only the listing's
        ``width`` best planned turns)."""
        if self.table is not None:
            raise ConfigError("learned (cascadia): a model with a pattern table plays in Python only "
                              "(no learned playouts or model_turns labels with it)")
        fallback = self.fallback_weights
        finish = fallback if finish is None else finish
        return CompiledModel(self.theta, _LISTING, fallback, finish, int(width))

    def start_turn(self, state, turns: np.ndarray, values: np.ndarray) -> int:
        """Choose the first best of ``turns`` by their ``values`` (:meth:`values`) for the market-phase
        ``state``, keep its plan and return its row."""
        k = _best(values)
        self.plan_turn(state, turns[k])
        return k

    def plan_turn(self, state, turn: np.ndarray) -> None:
        """Play ``turn`` (a row of the turn list of the market-phase ``state``) at this and the
        next decisions of the turn (:meth:`planned_action`)."""
        self._plan = [int(a) for a in turn if a >= 0]
        self._plan_key = _turn_key(state)

    def best_turn_value(self, state, listed: tuple[np.ndarray, np.ndarray] | None = None) -> float:
        """The model's value of its best candidate turn at the market-phase ``state`` (-inf: none);
        ``listed``: the state's candidate turns and features when already listed."""
        turns, feats = candidate_turns_and_features(self.game, state) if listed is None else listed
        if not feats.shape[0]:
            return -np.inf
        return float(self.values(state, turns, feats).max())

    def redraw_value(self, state) -> float:
        """The mean of :meth:`best_turn_value` over :data:`REDRAW_SAMPLES` free three-of-a-kind redraws
        of the market-phase ``state``, each drawn from the bag's counts on its own stream derived from
        the turn (so the same game always samples the same redraws, and the real draw stays unseen)."""
        key = "/".join(str(v) for v in _turn_key(state))
        total = 0.0
        for k in range(REDRAW_SAMPLES):
            sample = state.copy()
            sample.rng[:] = new_stream(0, f"learned/redraw/{key}/{k}")
            self.game.step(sample, K.A_THREE)
            total += self.best_turn_value(sample)
        return total / REDRAW_SAMPLES

    def wants_redraw(self, state, legal_mask: np.ndarray,
                     listed: tuple[np.ndarray, np.ndarray] | None = None) -> bool:
        """Whether to take the free three-of-a-kind redraw now (``redraw``; False where not legal);
        ``listed``: the state's candidate turns and features when already listed."""
        if self.redraw == "never" or not legal_mask[K.A_THREE]:
            return False
        self.redraws_offered += 1
        take = self.redraw == "always" or self.redraw_value(state) > self.best_turn_value(state, listed)
        self.redraws_taken += int(take)
        return take

    def act(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET:
            turns, feats = candidate_turns_and_features(self.game, state)
            self._plan = []
            if self.wants_redraw(state, legal_mask, (turns, feats)):
                return K.A_THREE
            if turns.shape[0]:
                self.start_turn(state, turns, self.values(state, turns, feats))
        return self.planned_action(state, legal_mask)

    def planned_action(self, state, legal_mask: np.ndarray) -> int:
        """The next action of this turn's plan, or greedy's move without a (legal) one."""
        if self._plan and self._plan_key == _turn_key(state):
            action = self._plan.pop(0)
            if legal_mask[action]:
                return action
            self.fallbacks += 1
        self._plan = []
        return self._greedy(state, legal_mask)

    def _greedy(self, state, legal_mask: np.ndarray) -> int:
        s, w = state, self.fallback_weights
        action = int(greedy_action(s.tiles, s.rots, s.edges, s.tokens, s.front, s.cells, s.flist, s.pinfo,
                                   s.market, s.stack, s.bag, s.ctl, s.rng, self.game.tb, w))
        return action if legal_mask[action] else int(np.flatnonzero(legal_mask)[0])


def _metric(game: Game) -> int:
    """The score column of the targets: base score with other seats (no majority bonuses, as the
    turn search's ``objective=base``), the total solo."""
    return K.CAT_BASE if game.num_players() > 1 else K.CAT_TOTAL


def label_games(game: Game, seeds: Sequence[int], theta: np.ndarray, width: int = 6, futures: int = 8,
                preset: str = DEFAULT_PRESET, seed: int = 0, model_turns: int = 0,
                table: np.ndarray | None = None, patterns: bool = False) -> dict[str, np.ndarray]:
    """Play ``seeds`` with :class:`LinearPolicy` (``theta``) in every seat and label the top
    ``width`` turns (by the model) of every turn start by ``futures`` paired playouts of greedy
    ``preset`` (future stream from ``(seed, game seed, decision index)``): the acting seat's mean
    final score (:func:`_metric`). With ``model_turns`` > 0 the first ``model_turns`` turns after
    the labelled one (the other seats' replies first) are played by ``theta`` itself, then greedy
    finishes the game. A pattern ``table`` plays (and ranks the labelled turns) beside ``theta``.
    Returns rows ``group``, ``phase``, ``features``, ``target`` and ``scores`` (float64[games,
    players], the played games' final scores by the same metric); ``patterns`` adds ``windows``, each
    row's changed windows for a table's fit (:func:`agents.learned.cascadia_patterns.turn_records`)."""
    if width < 0 or (width > 0 and futures < 1):
        raise ConfigError("learned (cascadia): width must be >= 0 (0: only play) and futures >= 1")
    if model_turns < 0:
        raise ConfigError(f"learned (cascadia): model_turns must be >= 0, got {model_turns}")
    g = game
    weights = preset_weights(preset)
    column = _metric(g)
    players = g.num_players()
    groups: list[np.ndarray] = []
    phases: list[np.ndarray] = []
    feats_out: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    windows: list[np.ndarray] = []
    scores = np.zeros((len(seeds), players))
    group = 0
    rng = np.random.default_rng(0)  # LinearPolicy does not use it
    for gi, game_seed in enumerate(seeds):
        state = g.new_game(int(game_seed))
        policy = LinearPolicy(g, theta, preset, table=table)
        replies = policy.compiled(weights) if model_turns else None  # the model-turn playouts' record
        decision = 0
        while not g.is_over(state):
            if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET:
                turns, feats = candidate_turns_and_features(g, state)
                first = -1
                if turns.shape[0]:  # the values choose the turn and rank the labelled ones
                    values = policy.values(state, turns, feats)
                    first = policy.start_turn(state, turns, values)
                if turns.shape[0] and width > 0:
                    ph = phase(g, state)
                    order = np.argsort(-values, kind="stable")
                    top = np.concatenate([[first], order[order != first]])[:width]
                    cands = np.ascontiguousarray(turns[top])
                    sums = np.zeros((top.shape[0], players))
                    src = state.board_args()
                    stream = np.array([derive_seed(int(seed), f"learned/{int(game_seed)}/{decision}")],
                                      dtype=np.uint64)
                    det, work, n = src.copy(), src.copy(), top.shape[0]
                    if replies is not None:
                        paired_model_playouts(src, det, work, cands, n, futures, stream, g.tb, replies, sums,
                                              column, model_turns)
                    else:
                        paired_playouts(src, det, work, cands, n, futures, stream, g.tb, weights, sums,
                                        column)
                    p = int(state.ctl[K.C_CUR])
                    groups.append(np.full(top.shape[0], group, np.int64))
                    phases.append(np.full(top.shape[0], ph, np.int64))
                    feats_out.append(feats[top])
                    targets.append((sums[:, p] / futures).astype(np.float32))
                    if patterns:
                        recs = np.empty((top.shape[0], 2, CP.MAX_WINDOWS, CP.N_COLUMNS), np.int16)
                        CP.turn_records(src, cands, g.tb, recs)
                        windows.append(recs)
                    group += 1
                decision += 1
                action = policy.planned_action(state, g.legal_mask(state))
            else:
                action = policy.act(state, g.legal_mask(state), rng)
            g.step(state, action)
        scores[gi] = g.score_table(state)[:, column]
    rows = {
        "group": np.concatenate(groups) if groups else np.zeros(0, np.int64),
        "phase": np.concatenate(phases) if phases else np.zeros(0, np.int64),
        "features": np.concatenate(feats_out) if feats_out else np.zeros((0, N_FEATURES), np.float32),
        "target": np.concatenate(targets) if targets else np.zeros(0, np.float32),
        "scores": scores,
    }
    if patterns:
        rows["windows"] = (np.concatenate(windows) if windows
                           else np.zeros((0, 2, CP.MAX_WINDOWS, CP.N_COLUMNS), np.int16))
    return rows


def play_candidate(game: Game, state, candidate: int) -> None:
    """Apply candidate turn ``candidate`` (a row of :func:`candidates`) to a market-phase ``state``."""
    turns, _ = candidate_turns_and_features(game, state)
    if not 0 <= candidate < turns.shape[0]:
        raise ValueError(f"cascadia: no candidate turn {candidate} (this decision has {turns.shape[0]})")
    for action in turns[candidate]:
        if action >= 0 and not game.is_over(state):
            game.step(state, int(action))

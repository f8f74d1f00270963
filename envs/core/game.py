"""The Game contract that agents, MCTS, environments and simulators share.

A game object holds the immutable component tables and implements the rules as functions of a
:class:`State`. A state is a handful of numpy arrays (plus small ints) and copies cheaply, so
planners copy it, step the copy and throw it away. Chance is explicit: every random draw comes
from the state's own chance stream (:mod:`envs.core.rng`), derived from the game seed.

The action space is one fixed ``Discrete(num_actions)`` per game (and per option set such as
the number of players); :meth:`Game.legal_mask` marks the legal ones and :meth:`Game.step`
raises :class:`~envs.core.errors.IllegalActionError` for any other.
"""

from __future__ import annotations

import abc
import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envs.core.errors import IllegalActionError


def action_index(action: Any, num_actions: int) -> int:
    """``action`` as an index into ``Discrete(num_actions)``, or IllegalActionError saying why not:
    integers (numpy's too) and integral floats pass; bools, strings, None, fractions and anything
    outside ``0..num_actions - 1`` do not."""
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer | float | np.floating) \
            or (isinstance(action, float | np.floating) and not float(action).is_integer()):
        raise IllegalActionError(-1, f"action {action!r} is not an integer")
    index = int(action)
    if not 0 <= index < num_actions:
        raise IllegalActionError(index, f"outside the action space 0..{num_actions - 1}")
    return index


@dataclass
class State:
    """Base for game states: numpy arrays and plain scalars only, so ``copy()`` is cheap.

    Subclasses add their own fields. ``copy`` deep-copies every numpy array field and shallow
    copies everything else (which must be immutable).
    """

    def copy(self) -> State:
        new = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(new, name, value.copy())
            elif isinstance(value, list):
                setattr(new, name, [v.copy() if isinstance(v, np.ndarray) else v for v in value])
        return new


@dataclass(frozen=True)
class ScoreSheet:
    """One player's score: the total and the points per category (names are game-specific)."""

    total: int
    categories: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.total, **self.categories, **self.extra}


class Game(abc.ABC):
    """Rules of one game with fixed options. Subclasses implement the abstract methods."""

    #: registry name, e.g. "cartographers"
    name: str = ""
    #: size of the fixed Discrete action space
    num_actions: int = 0

    @abc.abstractmethod
    def new_game(self, seed: int) -> State:
        """A fresh game for ``seed``; every chance event of the game follows from it."""

    @abc.abstractmethod
    def num_players(self) -> int:
        """Number of seats."""

    @abc.abstractmethod
    def current_player(self, state: State) -> int:
        """The seat that must act now (-1 once the game is over)."""

    @abc.abstractmethod
    def legal_mask(self, state: State) -> np.ndarray:
        """Boolean array of length ``num_actions``: True where the action is legal now."""

    @abc.abstractmethod
    def step(self, state: State, action: int) -> None:
        """Apply ``action`` for the current player in place, then resolve chance until the next
        decision. Raises IllegalActionError (naming the action and the reason) if illegal."""

    @abc.abstractmethod
    def is_over(self, state: State) -> bool:
        """True once the game has ended."""

    @abc.abstractmethod
    def scores(self, state: State) -> list[ScoreSheet]:
        """Current score of every seat, with the per-category breakdown."""

    @abc.abstractmethod
    def determinize(self, state: State, rng: np.random.Generator) -> State:
        """A copy whose hidden future (deck/bag order) is resampled from what the current player
        can know. Planners use this and never the real state's future."""

    @abc.abstractmethod
    def decode_action(self, action: int) -> dict[str, Any]:
        """The fields of an action integer (documented codec)."""

    @abc.abstractmethod
    def observation(self, state: State, player: int) -> np.ndarray:
        """A fixed-shape float32 observation of ``state`` from ``player``'s point of view."""

    @abc.abstractmethod
    def observation_shape(self) -> tuple[int, ...]:
        """Shape of :meth:`observation` (fixed for the game's options)."""

    def layout(self):
        """The :class:`envs.core.layout.GameLayout` of the observation and the action codec
        (board planes, vector features, spatial and non-spatial actions) that networks build on."""
        raise NotImplementedError(f"{self.name} declares no observation/action layout")

    def observation_bounds(self) -> tuple[float, float]:
        """Lowest and highest value any observation entry can take (for the env's Box)."""
        return float("-inf"), float("inf")

    @abc.abstractmethod
    def render_rgb(self, state: State, player: int | None = None) -> np.ndarray:
        """An RGB picture (H x W x 3 uint8) of the position."""

    @abc.abstractmethod
    def render_ansi(self, state: State, player: int | None = None) -> str:
        """A text picture of the position (one player's area, or all)."""

    def rollout_returns(self, state: State, seed: int, policy: str = "random") -> np.ndarray:
        """Play ``state`` (a determinized copy: it is consumed) to the end with a compiled
        ``policy`` ("random" or "greedy") and return the final score per seat (float64).
        Games provide a numba loop for this; MCTS uses it for rollouts."""
        raise NotImplementedError(f"{self.name} has no compiled rollout")

    def score_sheet_text(self, state: State) -> str:
        """A plain-text score sheet: one block per seat with its categories."""
        lines = []
        for seat, sheet in enumerate(self.scores(state)):
            lines.append(f"player_{seat}: total {sheet.total}")
            lines.append("  " + "  ".join(f"{k}={v}" for k, v in sheet.categories.items()))
            scalars = {k: v for k, v in sheet.extra.items() if isinstance(v, (int, float, str))}
            if scalars:
                lines.append("  " + "  ".join(f"{k}={v}" for k, v in scalars.items()))
        return "\n".join(lines)

    # ---- conveniences shared by all games -------------------------------------------------

    def describe_action(self, action: int) -> str:
        """A short human-readable description of an action."""
        fields = self.decode_action(action)
        return ", ".join(f"{k}={v}" for k, v in fields.items())

    def progress_marker(self, state: State) -> Any:
        """A value that changes at the game's milestones (a season, a round); ``play`` prints
        the position whenever it changes."""
        return None

    def returns(self, state: State) -> np.ndarray:
        """Score totals per seat as a float array (what planners maximise)."""
        return np.array([s.total for s in self.scores(state)], dtype=np.float64)

    def check_legal(self, state: State, action: int) -> None:
        """Raise IllegalActionError unless ``action`` is legal in ``state``."""
        index = action_index(action, self.num_actions)
        if self.is_over(state):
            raise IllegalActionError(index, "the game is over")
        if not self.legal_mask(state)[index]:
            raise IllegalActionError(index, self.why_illegal(state, index), self.describe_action(index))

    def why_illegal(self, state: State, action: int) -> str:
        """The reason an action is illegal; games override this with precise reasons."""
        return "not legal in this state"

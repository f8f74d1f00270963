"""Declarations of where things sit in a game's flat observation and action space.

A network that understands boards needs to know which entries of the flat observation vector
form board planes, on which grid, and which actions are placements at a cell of that grid.
Each game declares this once, next to its observation code (``Game.layout()``); networks are
built from the declaration, never from hard-coded sizes.

Both declarations are *index maps* onto one square grid of ``height x width`` cells:

* :class:`ObservationLayout`: ``plane_index[c, h, w]`` is the index in the flat observation of
  board channel ``c`` at grid cell ``(h, w)``, or ``-1`` where the grid cell is not a board cell
  (padding around a hex window); ``vector_index`` lists the entries that are not on the board.
* :class:`ActionLayout`: ``spatial_index[k, h, w]`` is the action that means "channel ``k``
  (a rotation, shape, terrain...) at grid cell ``(h, w)``", or ``-1``; ``nonspatial`` lists the
  actions that are not at a cell (market picks, skips). Every action appears exactly once.

Hex boards (axial coordinates ``(q, r)``) map onto the grid as ``h = r + offset``,
``w = q + offset``; the six neighbours of ``(h, w)`` are then ``(h, w+-1)``, ``(h-1, w)``,
``(h-1, w+1)``, ``(h+1, w)``, ``(h+1, w-1)``: a 3x3 kernel with the corners ``(-1, -1)`` and
``(+1, +1)`` masked sees exactly the hex neighbourhood (``hex_grid=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: 3x3 kernel mask of a hex grid in the axial mapping above (1 = neighbour or centre)
HEX_KERNEL_MASK = np.array([[0, 1, 1],
                            [1, 1, 1],
                            [1, 1, 0]], dtype=np.float32)


@dataclass(frozen=True)
class ObservationLayout:
    """Board planes and vector features of a flat observation of length ``size``."""

    size: int
    plane_index: np.ndarray  # int64 (channels, height, width), -1 = padding
    vector_index: np.ndarray  # int64 (features,)
    hex_grid: bool = False
    plane_names: tuple[str, ...] = ()

    @property
    def channels(self) -> int:
        return int(self.plane_index.shape[0])

    @property
    def grid(self) -> tuple[int, int]:
        return int(self.plane_index.shape[1]), int(self.plane_index.shape[2])

    @property
    def vector_size(self) -> int:
        return int(self.vector_index.shape[0])

    def board_cells(self) -> np.ndarray:
        """bool (height, width): True where the grid cell is a board cell (not padding)."""
        return (self.plane_index >= 0).any(axis=0)

    def planes(self, observation: np.ndarray) -> np.ndarray:
        """The board planes (channels, height, width) of one flat observation; padding is 0."""
        padded = np.append(np.asarray(observation, dtype=np.float32), np.float32(0.0))
        return padded[self.plane_index]

    def vector(self, observation: np.ndarray) -> np.ndarray:
        """The vector features of one flat observation."""
        return np.asarray(observation, dtype=np.float32)[self.vector_index]

    def validate(self) -> None:
        """Raise ValueError unless every observation entry is used exactly once."""
        used = np.concatenate([self.plane_index[self.plane_index >= 0].ravel(), self.vector_index])
        counts = np.bincount(used, minlength=self.size)
        if used.size and (used.min() < 0 or used.max() >= self.size):
            raise ValueError("observation layout indexes outside the observation")
        if counts.shape[0] != self.size or not np.all(counts == 1):
            raise ValueError(f"observation layout covers {int((counts > 0).sum())} of {self.size} entries "
                             f"({int((counts > 1).sum())} twice)")


@dataclass(frozen=True)
class ActionLayout:
    """Placement actions per grid cell and channel, and the non-spatial actions."""

    num_actions: int
    spatial_index: np.ndarray  # int64 (channels, height, width), -1 = no action
    nonspatial: np.ndarray  # int64 (n,)
    channel_names: tuple[str, ...] = ()
    nonspatial_names: tuple[str, ...] = ()

    @property
    def channels(self) -> int:
        return int(self.spatial_index.shape[0])

    @property
    def grid(self) -> tuple[int, int]:
        return int(self.spatial_index.shape[1]), int(self.spatial_index.shape[2])

    def source_index(self) -> np.ndarray:
        """int64 (num_actions,): for each action its position in ``concat(spatial.ravel(),
        nonspatial)``, so a network's spatial and non-spatial logits gather into action order."""
        flat = self.spatial_index.ravel()
        source = np.full(self.num_actions, -1, dtype=np.int64)
        positions = np.flatnonzero(flat >= 0)
        source[flat[positions]] = positions
        source[self.nonspatial] = flat.size + np.arange(self.nonspatial.shape[0])
        return source

    def validate(self) -> None:
        """Raise ValueError unless every action appears exactly once."""
        used = np.concatenate([self.spatial_index[self.spatial_index >= 0].ravel(), self.nonspatial])
        if used.size and (used.min() < 0 or used.max() >= self.num_actions):
            raise ValueError("action layout names actions outside the action space")
        counts = np.bincount(used, minlength=self.num_actions)
        if not np.all(counts == 1):
            raise ValueError(f"action layout covers {int((counts > 0).sum())} of {self.num_actions} actions "
                             f"({int((counts > 1).sum())} twice)")


@dataclass(frozen=True)
class GameLayout:
    """What a network needs to know about one game (with its options)."""

    observation: ObservationLayout
    action: ActionLayout

    def validate(self) -> None:
        self.observation.validate()
        self.action.validate()
        if self.observation.grid != self.action.grid:
            raise ValueError(f"observation grid {self.observation.grid} != action grid {self.action.grid}")

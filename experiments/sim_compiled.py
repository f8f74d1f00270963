"""Compiled game loops for ``simulate``: whole games in numba for agents that have one."""

from __future__ import annotations

from typing import Any


def play_columns(game: Any, agents: list[str], seeds: list[int], index: int) -> dict[str, Any] | None:
    """One chunk's columns from a compiled loop, or None when some seat's agent has none."""
    return None

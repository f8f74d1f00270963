"""Agents' own view of a choice, for game records and the replay viewer.

An agent that can explain itself has an ``explaining`` attribute (False by default). When a
recorder sets it to True, every ``act`` also leaves ``last_explanation``: a small JSON-able dict

``{"kind": "greedy" | "mcts" | ..., "chosen": action, "candidates": [{"action": a, ...}, ...]}``

with the best candidates first: ``value`` for a greedy agent (its ranked values), ``visits`` and
``value`` (mean return of the acting seat) for a search, ``probability`` and ``value`` for a network.
Explaining never changes a choice: it reads what ``act`` computed anyway and draws no random numbers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

#: candidates kept per decision (the viewer highlights these)
TOP_K = 8


def enable_explanations(agents: Sequence[Any]) -> None:
    """Ask every agent that can explain itself to do so from now on."""
    for agent in agents:
        if hasattr(agent, "explaining"):
            agent.explaining = True
            agent.last_explanation = None


def take_explanation(agent: Any) -> dict[str, Any] | None:
    """The explanation ``agent`` left for its last decision (None if it offers none); cleared after."""
    found = getattr(agent, "last_explanation", None)
    if found is not None:
        agent.last_explanation = None
    return found


def ranked_values(kind: str, actions: np.ndarray, values: np.ndarray, chosen: int,
                  top: int = TOP_K) -> dict[str, Any]:
    """Explanation of a value-ranked choice: the ``top`` best actions with their values (the
    chosen one first among equal values, and always listed)."""
    actions = np.asarray(actions)
    order = np.lexsort((actions != chosen, -np.asarray(values, dtype=np.float64)))[:top]
    mine = np.flatnonzero(actions == chosen)
    if mine.size and mine[0] not in order:
        order[-1] = mine[0]
    return {"kind": kind, "chosen": int(chosen), "legal": int(len(actions)),
            "candidates": [{"action": int(actions[i]), "value": round(float(values[i]), 4)} for i in order]}


def search_statistics(kind: str, actions: np.ndarray, visits: np.ndarray, values: np.ndarray, chosen: int,
                      simulations: int, top: int = TOP_K,
                      details: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Explanation of a search: the most visited root actions with visits and mean value
    (``details[i]``, e.g. a whole planned turn, is added to candidate i)."""
    order = np.lexsort((-np.asarray(values, dtype=np.float64), -np.asarray(visits, dtype=np.float64)))[:top]
    return {"kind": kind, "chosen": int(chosen), "simulations": int(simulations),
            "candidates": [{"action": int(actions[i]), "visits": int(visits[i]),
                            "value": round(float(values[i]), 4), **(details[i] if details else {})}
                           for i in order]}


def forced_choice(agent: Any, action: int) -> int:
    """Record on a search ``agent`` a decision with one legal ``action`` (nothing searched) and
    return it: ``last_stats`` says so, and so does ``last_explanation`` while explaining."""
    agent.last_stats = {"simulations": 0, "seconds": 0.0, "forced": True}
    if agent.explaining:
        agent.last_explanation = {"kind": "mcts", "chosen": action, "forced": True,
                                  "candidates": [{"action": action}]}
    return action


def record_search(agent: Any, actions: np.ndarray, counts: np.ndarray, means: np.ndarray, best: int,
                  simulations: int, start: float, details: Sequence[dict[str, Any]] | None = None,
                  exact: bool = False) -> None:
    """Record a flat search's result on ``agent``: candidate ``actions`` (first = the prior's first)
    with their futures played (``counts``) and mean values, the chosen index ``best``, since
    ``start`` (``time.perf_counter()``); adds to the agent's totals, sets ``last_stats`` and, while
    explaining, ``last_explanation``. ``exact``: the values are exact (no sampling)."""
    elapsed = time.perf_counter() - start
    agent.total_simulations += simulations
    agent.total_seconds += elapsed
    agent.last_stats = {
        "simulations": simulations, "seconds": elapsed,
        "sims_per_s": simulations / elapsed if elapsed else 0.0, "children": len(actions),
        "best_visits": int(counts[best]), "best_mean": float(means[best]), "greedy_mean": float(means[0]),
        "visits": {int(a): int(c) for a, c in zip(actions, counts, strict=True)},
    }
    if exact:
        agent.last_stats["exact"] = True
    if agent.explaining:
        agent.last_explanation = search_statistics("mcts", actions, counts, means, int(actions[best]),
                                                   simulations, details=details)

"""Average learned candidate models entry by entry (``meeplelab average-models``).

A model's value of a candidate is linear in its weights (``features @ theta[phase]``, plus the pattern
table's entries that the candidate reads), so the weighted mean of several models' weights and tables
values every candidate at the weighted mean of their values: an ensemble of the models that plays at one
model's cost. The models must be of one game and setting, with the same feature columns, greedy preset
and pattern table shape (or all without a table); anything else fails in one line naming the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned.model import load_model, save_model
from envs.core.errors import ConfigError

#: the fields every averaged model must share with the first one
SHARED_FIELDS = ("game", "game_options", "features", "preset")


def parse_weights(text: str | None, count: int) -> np.ndarray:
    """The mixing weights of ``count`` models from ``"w1,w2,..."`` (default equal), normalised to sum 1."""
    if text is None:
        return np.full(count, 1.0 / count)
    try:
        weights = np.array([float(part) for part in text.split(",")], dtype=np.float64)
    except ValueError:
        raise ConfigError(f"--weights {text!r}: expected {count} comma-separated numbers") from None
    if weights.shape != (count,):
        raise ConfigError(f"--weights {text!r}: {weights.size} numbers for {count} models")
    if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
        raise ConfigError(f"--weights {text!r}: weights must be finite, non-negative and not all zero")
    return weights / weights.sum()


def average_models(paths: Sequence[str | Path], weights: np.ndarray) -> dict[str, Any]:
    """The loaded models of ``paths`` combined: ``theta`` and ``table`` their weighted means (float64),
    the shared fields of the first, and ``training`` naming the sources, their weights and trainings."""
    if len(paths) < 2:
        raise ConfigError("average-models: give at least two model folders")
    if len(weights) != len(paths):
        raise ConfigError(f"average-models: {len(weights)} weights for {len(paths)} models")
    models = [load_model(path) for path in paths]
    first = models[0]
    for path, model in zip(paths[1:], models[1:], strict=True):
        for field in SHARED_FIELDS:
            if model[field] != first[field]:
                raise ConfigError(f"average-models: {str(path)!r} has {field} {model[field]!r}, "
                                  f"but {str(paths[0])!r} has {first[field]!r}")
        if (model["table"] is None) != (first["table"] is None):
            raise ConfigError(f"average-models: {str(path)!r} and {str(paths[0])!r} differ in having a "
                              "pattern table (average models with tables, or models without)")
        if model["table"] is not None and model["table"].shape != first["table"].shape:
            raise ConfigError(f"average-models: {str(path)!r} has a pattern table of shape "
                              f"{model['table'].shape}, {str(paths[0])!r} one of {first['table'].shape}")
    theta = sum(w * m["theta"] for w, m in zip(weights, models, strict=True))
    table = None
    if first["table"] is not None:
        table = sum(w * m["table"] for w, m in zip(weights, models, strict=True))
    sources = [{"path": str(path), "weight": float(w), "training": m.get("training")}
               for path, w, m in zip(paths, weights, models, strict=True)]
    return {**{field: first[field] for field in SHARED_FIELDS}, "theta": theta, "table": table,
            "training": {"averaged_from": sources}}


def save_average(model: dict[str, Any], out: str | Path) -> Path:
    """Write an :func:`average_models` result as the model folder ``out``; returns its ``model.json``."""
    return save_model(out, model["game"], model["game_options"], model["theta"], model["preset"],
                      model["training"], model["table"])

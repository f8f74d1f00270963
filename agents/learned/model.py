"""A linear candidate model on disk: a folder holding ``model.json`` (and a README saying how it was made).

``model.json`` is plain JSON (never code): the format tag, the game and its options, the feature
names the weights were fitted on, the weights ``theta`` (one row per phase), the greedy preset that
ambush-like decisions follow, and what the training run reported. Loading checks every field and
fails with one line naming the problem (a missing or corrupt file, another game, features that no
longer match the code).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned import game_module
from envs.core.errors import ConfigError

FORMAT = "meeplelab-linear-candidates/1"
MODEL_FILE = "model.json"
#: a model file is a few kilobytes; anything far larger is not one
MAX_BYTES = 1 << 20


def save_model(folder: str | Path, game_name: str, game_options: dict[str, Any], theta: np.ndarray,
               preset: str, training: dict[str, Any]) -> Path:
    """Write ``folder/model.json`` atomically (a temporary file renamed over it); returns its path."""
    module = game_module(game_name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "game": game_name,
        "game_options": game_options,
        "features": [name for name, _ in module.FEATURES],
        "theta": np.asarray(theta, dtype=float).round(8).tolist(),
        "preset": preset,
        "training": training,
    }
    path = folder / MODEL_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n")
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    return path


def load_model(path: str | Path) -> dict[str, Any]:
    """The checked contents of a model folder's ``model.json`` (or of that file); ``theta`` as an array."""
    path = Path(path)
    file = path / MODEL_FILE if path.is_dir() else path
    if not file.is_file():
        raise ConfigError(f"learned model {str(path)!r}: no {MODEL_FILE} there")
    if file.stat().st_size > MAX_BYTES:
        raise ConfigError(f"learned model {str(file)!r}: {file.stat().st_size} bytes, not a model file")
    try:
        data = json.loads(file.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ConfigError(f"learned model {str(file)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"learned model {str(file)!r}: not a {FORMAT} file")
    module = game_module(str(data.get("game")))
    names = [name for name, _ in module.FEATURES]
    if data.get("features") != names:
        raise ConfigError(f"learned model {str(file)!r}: its features do not match the {data['game']} "
                          "candidate features of this code (retrain it)")
    try:
        theta = np.array(data["theta"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"learned model {str(file)!r}: theta is not a table of numbers") from None
    if theta.shape != (module.N_PHASES, module.N_FEATURES) or not np.isfinite(theta).all():
        raise ConfigError(f"learned model {str(file)!r}: theta must be {module.N_PHASES} x "
                          f"{module.N_FEATURES} finite numbers, got shape {theta.shape}")
    if not isinstance(data.get("game_options"), dict) or not isinstance(data.get("preset"), str):
        raise ConfigError(f"learned model {str(file)!r}: game_options and preset are missing")
    data["theta"] = theta
    return data


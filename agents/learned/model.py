"""A linear candidate model on disk: a folder holding ``model.json`` (and a README saying how it was made).

``model.json`` is plain JSON (never code): the format tag, the game and its options, the feature
names the weights were fitted on, the weights ``theta`` (one row per phase), the greedy preset that
ambush-like decisions follow, and what the training run reported. A Cartographers or Cascadia model
may add a pattern table (:func:`agents.learned.pattern_module`) in ``patterns.npy`` beside it, named by
``model.json``'s ``"patterns": {"file": "patterns.npy", "rings": R}``. Loading checks every field and
fails with one line naming the problem (a missing or corrupt file, another game, features that no
longer match the code, a table of the wrong shape).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned import PATTERN_GAMES, game_module, pattern_module
from envs.core.errors import ConfigError

FORMAT = "meeplelab-linear-candidates/1"
MODEL_FILE = "model.json"
PATTERNS_FILE = "patterns.npy"
#: a model file is a few kilobytes; anything far larger is not one
MAX_BYTES = 1 << 20


def save_model(folder: str | Path, game_name: str, game_options: dict[str, Any], theta: np.ndarray,
               preset: str, training: dict[str, Any], table: np.ndarray | None = None) -> Path:
    """Write ``folder/model.json`` atomically (a temporary file renamed over it), and a pattern
    ``table`` with rows (Cartographers, Cascadia) as ``folder/patterns.npy`` (float32) first; returns the
    model file's path."""
    module = game_module(game_name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    extra: dict[str, Any] = {}
    if table is not None and table.shape[0] > 0:
        if game_name not in PATTERN_GAMES:
            raise ConfigError(f"learned model: pattern tables are for {', '.join(PATTERN_GAMES)} only")
        tmp_table = folder / (PATTERNS_FILE + ".tmp")
        with open(tmp_table, "wb") as handle:
            np.save(handle, np.asarray(table, dtype=np.float32))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_table, folder / PATTERNS_FILE)
        extra["patterns"] = {"file": PATTERNS_FILE, "rings": int(table.shape[1])}
    payload = {
        "format": FORMAT,
        "game": game_name,
        "game_options": game_options,
        "features": [name for name, _ in module.FEATURES],
        "theta": np.asarray(theta, dtype=float).round(8).tolist(),
        "preset": preset,
        "training": training,
        **extra,
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
    data["table"] = _load_table(file, data)
    return data


def _load_table(file: Path, data: dict[str, Any]) -> np.ndarray | None:
    """The pattern table that ``model.json`` names (float64), or None when it names none."""
    spec = data.get("patterns")
    if spec is None:
        return None
    if data["game"] not in PATTERN_GAMES:
        raise ConfigError(f"learned model {str(file)!r}: pattern tables are for "
                          f"{', '.join(PATTERN_GAMES)} only")
    patterns = pattern_module(data["game"])
    rings = spec.get("rings") if isinstance(spec, dict) else None
    if (not isinstance(spec, dict) or spec.get("file") != PATTERNS_FILE or not isinstance(rings, int)
            or not 1 <= rings <= patterns.MAX_RINGS):
        raise ConfigError(f"learned model {str(file)!r}: patterns must be {{\"file\": \"{PATTERNS_FILE}\", "
                          f"\"rings\": 1-{patterns.MAX_RINGS}}}, got {spec!r}")
    path = file.parent / PATTERNS_FILE
    shape = patterns.table_shape(rings)
    try:
        if path.stat().st_size > 4 * int(np.prod(shape)) + 4096:
            raise ValueError(f"{path.stat().st_size} bytes, more than a table of {shape}")
        table = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise ConfigError(f"learned model {str(path)!r}: cannot read the pattern table ({exc})") from None
    if table.shape != shape or table.dtype != np.float32 or not np.isfinite(table).all():
        raise ConfigError(f"learned model {str(path)!r}: the pattern table must be {shape} finite float32, "
                          f"got {table.shape} {table.dtype}")
    return table.astype(np.float64)


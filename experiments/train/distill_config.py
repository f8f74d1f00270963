"""Distillation configs (``configs/distill/*.yaml``): load, fill defaults, validate with clear errors.

A linear candidate model (:mod:`agents.learned`) is fitted to the values that paired greedy playouts
give the candidates of the positions the model itself reaches (the flat search's labels, DAgger
style). Every key is optional except ``game``; unknown keys and values of the wrong type or range
are refused with one line naming them::

    name: cartographers_solo_distill
    game: cartographers
    game_options: {players: 1}
    label: {games: 200, width: 8, futures: 8, preset: progress, chunk_games: 10}
                                      # per iteration: games labelled, candidates valued per decision,
                                      # paired playouts per candidate, the playouts' greedy preset
    run: {iterations: 2, seed: 0, first_seed: 100000, workers: 2, eval_games: 100}
                                      # label seeds start at first_seed (never the dev or test seeds);
                                      # evaluation plays the first eval_games seeds of the dev suite

``label.model_turns: N`` (Cascadia) plays the first N turns after each labelled turn with the
labelling model itself in every seat before the greedy playout takes over, so the labels see the
model's own replies (the other seats' next turns first) instead of greedy's.

``label.horizon: H`` (Cartographers, 1-3) cuts the labels' playouts when the season H seasons after
the labelled decision's begins and values the seasons left on the map there, as the flat search's
``horizon=H`` does (0, the default: whole games).

``run.start: models/<folder>`` starts from a committed model of the same game and options instead of
the greedy preset's weights: it plays the first iteration's labelled games, and every fit is shrunk
toward it (a fit that gains nothing on held-out decisions keeps it). The dev evaluation still
compares against the greedy preset.

``patterns: {rings: 3, epochs: 20, lr: 0.01, decay: 0.001}`` (Cartographers and Cascadia, playout
labels) also fits a pattern table on top of each iteration's linear weights: over the map's 2 x 2
windows (:mod:`agents.learned.cartographers_patterns`; ``rings`` 1-5, default 3) or each hex's
wildlife neighbourhood (:mod:`agents.learned.cascadia_patterns`; ``rings`` 1, the default, or 2: also
its habitat edges). The
labels then record what the table's fit reads of each candidate, the model plays (and labels) with
both, and the checkpoints carry ``patterns.npy``. Leave it out (or ``null``) for a linear model alone.

``label.targets: returns`` makes it the afterstate learner (``train --algo afterstate``, configs in
``configs/afterstate/``): no playouts; the model plays its own games, exploring with probability
``label.explore`` among its ``width`` best candidates, and every decision's played candidate is
labelled with the points scored from it on (Monte-Carlo returns; the games that have
``return_games`` in their candidate module).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from agents.learned import GAMES, PATTERN_GAMES, game_module, pattern_module
from agents.learned.model import load_model
from envs.core.errors import ConfigError
from envs.core.textfile import read_yaml

DEFAULTS: dict[str, dict[str, Any]] = {
    "label": {"games": 200, "width": 8, "futures": 8, "preset": None, "chunk_games": 10,
              "targets": "playouts", "explore": 0.1, "model_turns": 0, "horizon": 0},
    "run": {"iterations": 2, "seed": 0, "first_seed": 100_000, "workers": 2, "eval_games": 100,
            "start": None},
}
_LIMITS: dict[str, tuple[int, int]] = {
    "label.games": (1, 100_000), "label.width": (2, 4096), "label.futures": (1, 10_000),
    "label.chunk_games": (1, 10_000), "label.model_turns": (0, 1000), "label.horizon": (0, 3),
    "run.iterations": (1, 1000), "run.seed": (0, 1 << 40),
    "run.first_seed": (0, 1 << 40), "run.workers": (1, 4096), "run.eval_games": (1, 100_000),
}
#: the ``patterns`` section (a pattern table fitted beside the linear weights) when it is given
#: (``rings`` None: the game's ``DEFAULT_RINGS``)
PATTERN_DEFAULTS: dict[str, Any] = {"rings": None, "epochs": 20, "lr": 0.01, "decay": 1e-3}
#: label.targets: paired-playout values of the top candidates (distill), or self-play returns
TARGETS = ("playouts", "returns")
#: the dev and test suites' seeds (configs/suites.yaml): labelling must stay clear of them
RESERVED = (range(0, 200), range(1_000_000, 1_001_000))


def validate_config(raw: Any, source: str = "config") -> dict[str, Any]:
    """Defaults filled in and every value checked; returns a new dict."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a distillation config is a mapping of sections, "
                          f"got {type(raw).__name__}")
    known = {"name", "game", "game_options", "label", "run", "patterns"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(known))}")
    game = raw.get("game")
    if game not in GAMES:
        raise ConfigError(f"{source}: game must be one of {', '.join(GAMES)}, got {game!r}")
    options = raw.get("game_options") or {}
    if not isinstance(options, dict):
        raise ConfigError(f"{source}: game_options must be a mapping, got {options!r}")
    config: dict[str, Any] = {"game": game, "game_options": dict(options),
                              "name": str(raw.get("name") or Path(source).stem)}
    for section, defaults in DEFAULTS.items():
        given = raw.get(section) or {}
        if not isinstance(given, dict):
            raise ConfigError(f"{source}: section {section!r} must be a mapping, got {given!r}")
        _reject_unknown_keys(source, section, given, defaults)
        merged = {**defaults, **given}
        for key, value in merged.items():
            name = f"{section}.{key}"
            if name in _LIMITS:
                low, high = _LIMITS[name]
                if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                    raise ConfigError(f"{source}: {name} must be an integer in [{low}, {high}], "
                                      f"got {value!r}")
        config[section] = merged
    targets, explore = config["label"]["targets"], config["label"]["explore"]
    if targets not in TARGETS:
        raise ConfigError(f"{source}: label.targets must be one of {', '.join(TARGETS)}, got {targets!r}")
    if isinstance(explore, bool) or not isinstance(explore, int | float) or not 0.0 <= explore <= 1.0:
        raise ConfigError(f"{source}: label.explore must be a probability in [0, 1], got {explore!r}")
    preset = config["label"]["preset"]
    module = game_module(game)
    if targets == "returns" and not hasattr(module, "return_games"):
        raise ConfigError(f"{source}: label.targets returns (the afterstate learner) is not available for "
                          f"{game} yet; it needs return_games in agents/learned/{game}.py")
    takes_model_turns = "model_turns" in inspect.signature(module.label_games).parameters
    if config["label"]["model_turns"] and not takes_model_turns:
        raise ConfigError(f"{source}: label.model_turns (turns after the labelled one played by the model "
                          f"before greedy) is available for cascadia only, not {game}")
    takes_horizon = "horizon" in inspect.signature(module.label_games).parameters
    if config["label"]["horizon"] and not takes_horizon:
        raise ConfigError(f"{source}: label.horizon (playouts cut H seasons on) is available for "
                          f"cartographers only, not {game}")
    config["label"]["preset"] = preset = module.DEFAULT_PRESET if preset is None else preset
    if not isinstance(preset, str):
        raise ConfigError(f"{source}: label.preset must be a greedy preset name, got {preset!r}")
    module.greedy_theta(preset)  # an unknown preset fails here, naming the known ones
    config["patterns"] = check_patterns(raw.get("patterns"), config, source)
    run, label = config["run"], config["label"]
    if run["start"] is not None:
        check_start_model(run["start"], config, source)
    last = run["first_seed"] + run["iterations"] * label["games"]
    for reserved in RESERVED:
        if run["first_seed"] < reserved.stop and reserved.start < last:
            raise ConfigError(f"{source}: label seeds {run['first_seed']}-{last - 1} overlap the dev or test "
                              f"suite's seeds {reserved.start}-{reserved.stop - 1}; move run.first_seed")
    return config


def check_patterns(given: Any, config: dict[str, Any], source: str) -> dict[str, Any] | None:
    """The ``patterns`` section with its defaults filled in (None when absent), every value checked."""
    if given is None:
        return None
    if not isinstance(given, dict):
        raise ConfigError(f"{source}: section 'patterns' must be a mapping (or null), got {given!r}")
    if config["game"] not in PATTERN_GAMES:
        raise ConfigError(f"{source}: patterns (a pattern table) is available for {', '.join(PATTERN_GAMES)} "
                          f"only, not {config['game']}")
    if config["label"]["targets"] != "playouts":
        raise ConfigError(f"{source}: patterns needs playout labels (label.targets: playouts)")
    if config["label"]["model_turns"]:
        raise ConfigError(f"{source}: patterns cannot be fitted with label.model_turns (the model's own "
                          "turns in the labels' playouts are compiled without the table)")
    _reject_unknown_keys(source, "patterns", given, PATTERN_DEFAULTS)
    module = pattern_module(config["game"])
    merged = {**PATTERN_DEFAULTS, **given}
    if merged["rings"] is None:
        merged["rings"] = module.DEFAULT_RINGS
    for key, low, high in (("rings", 1, module.MAX_RINGS), ("epochs", 1, 100)):
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigError(f"{source}: patterns.{key} must be an integer in [{low}, {high}], "
                              f"got {value!r}")
    for key, low, high in (("lr", 0.0, 1.0), ("decay", 0.0, 1.0)):
        value = merged[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value < high or (
                key == "lr" and value == 0):
            raise ConfigError(f"{source}: patterns.{key} must be a number in {'(' if key == 'lr' else '['}"
                              f"{low}, {high}), got {value!r}")
    return merged


def _reject_unknown_keys(source: str, section: str, given: dict, defaults: dict) -> None:
    """Raise a :class:`ConfigError` naming the keys of ``given`` that ``defaults`` does not know."""
    stray = sorted(set(given) - set(defaults))
    if stray:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(f'{section}.{k}' for k in stray)}; "
                          f"known: {', '.join(defaults)}")


def with_defaults(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with every section's missing keys filled by :data:`DEFAULTS`, nothing checked (a saved
    run's config, compared with the config that would continue it)."""
    filled = dict(raw)
    for section, defaults in DEFAULTS.items():
        given = raw.get(section)
        filled[section] = {**defaults, **given} if isinstance(given, dict) else given
    given = raw.get("patterns")
    filled["patterns"] = {**PATTERN_DEFAULTS, **given} if isinstance(given, dict) else given
    return filled


def check_start_model(start: Any, config: dict[str, Any], source: str) -> None:
    """``run.start`` names a model folder of the config's game and game options (ConfigError otherwise)."""
    if not isinstance(start, str) or not start:
        raise ConfigError(f"{source}: run.start must be a model folder such as models/cascadia_4p, "
                          f"got {start!r}")
    model = load_model(start)  # a missing or corrupt model fails here, naming the file
    if model["game"] != config["game"] or model["game_options"] != config["game_options"]:
        raise ConfigError(f"{source}: run.start {start!r} is a model of {model['game']} "
                          f"{model['game_options']}, not of {config['game']} {config['game_options']}")


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and validate a distillation config file."""
    return validate_config(read_yaml(path, "distillation config"), source=str(path))

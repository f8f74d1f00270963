"""Expert-iteration configs (``configs/exit/*.yaml``): load, fill defaults, validate with clear errors.

Every key is optional except ``game`` and ``search``; an unknown section or key, or a value of the
wrong type or range, is refused with one line naming it (``selfplay.games must be ...``)::

    game: cartographers
    game_options: {players: 1}
    network: {width: 16, blocks: 2, ...}           # agents.ppo.network.NetConfig
    init: null                                     # default --init: policy:<path> or teacher:<spec>
    search: "mcts:prior=ppo:{policy},value=ppo:{policy},simulations=32,value_weight=0.5,rollout=greedy"
                                                   # the search agent; {policy} is the network's file
    selfplay: {games: 8, top_k: 16, window: 4, workers: 2, noise: 0.25}
                                                   # noise > 0: ",noise=<x>" (root Dirichlet noise of
                                                   # the value=ppo: search) in self-play, not gating
    train: {epochs: 4, batch_size: 128, lr: 0.001, value_weight: 0.5}
    gating: {enabled: true, games: 8, workers: 2, confirm_games: 0}
                                                   # confirm_games > 0: a pass is re-checked on that
                                                   # many fresh seeds (experiments.train.exit_gating)
    run: {generations: 10, seed: 0, eval_every: 1, eval_games: 20, eval_seed: 0, num_cpus: 2}
    imitation: {games: 200, epochs: 6, ...}        # the warm start of --init teacher:<spec>
                                                   # (the keys of configs/ppo's imitation section)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.base import parse_agent_spec
from envs.core.errors import ConfigError
from envs.core.textfile import read_yaml
from experiments.train import config as train_config
from experiments.train.imitation import parse_init

#: at most this many games per generation and generations per run (their seed ranges stay disjoint)
MAX_GAMES = 10_000
MAX_GENERATIONS = 10_000

DEFAULTS: dict[str, dict[str, Any]] = {
    "selfplay": {"games": 8, "top_k": 16, "window": 4, "workers": 2, "noise": 0.0},
    "train": {"epochs": 4, "batch_size": 128, "lr": 1e-3, "value_weight": 0.5},
    "gating": {"enabled": True, "games": 8, "workers": 2, "confirm_games": 0},
    "run": {"generations": 10, "seed": 0, "eval_every": 1, "eval_games": 20, "eval_seed": 0, "num_cpus": 2},
}

#: key -> (allowed types, lowest, highest) of every numeric key outside ``imitation``
_INT, _NUMBER = (int,), (int, float)
_RANGES: dict[str, tuple[tuple[type, ...], float, float]] = {
    "selfplay.games": (_INT, 1, MAX_GAMES), "selfplay.top_k": (_INT, 1, 4096),
    "selfplay.window": (_INT, 1, MAX_GENERATIONS), "selfplay.workers": (_INT, 1, 4096),
    "selfplay.noise": (_NUMBER, 0.0, 0.99),
    "train.epochs": (_INT, 1, 10_000), "train.batch_size": (_INT, 1, 1 << 20),
    "train.lr": (_NUMBER, 1e-12, 10.0), "train.value_weight": (_NUMBER, 0.0, 1e6),
    "gating.games": (_INT, 2, MAX_GAMES), "gating.workers": (_INT, 1, 4096),
    "gating.confirm_games": (_INT, 0, MAX_GAMES),
    "run.generations": (_INT, 1, MAX_GENERATIONS), "run.seed": (_INT, 0, 1 << 40),
    "run.eval_every": (_INT, 0, MAX_GENERATIONS), "run.eval_games": (_INT, 1, MAX_GAMES),
    "run.eval_seed": (_INT, 0, 1 << 40), "run.num_cpus": (_INT, 1, 4096),
}


def _check_number(key: str, value: Any) -> None:
    types, low, high = _RANGES[key]
    kind = "an integer" if types == _INT else "a number"
    if isinstance(value, bool) or not isinstance(value, types) or not low <= value <= high:
        raise ConfigError(f"{key} must be {kind} in [{low:g}, {high:g}], got {value!r}")


def _check_search(search: Any, source: str) -> str:
    if not isinstance(search, str) or "{policy}" not in search:
        raise ConfigError(f"{source}: search must be an agent spec with a {{policy}} placeholder "
                          f"(e.g. 'mcts:prior=ppo:{{policy}},simulations=8,rollout=greedy'), got {search!r}")
    parse_agent_spec(search.replace("{policy}", "policy.pt"))
    return search


def _check_init(init: Any, source: str) -> str | None:
    if init is None:
        return None
    if not isinstance(init, str):
        raise ConfigError(f"{source}: init must be policy:<path>, teacher:<agent spec> or null, got {init!r}")
    try:
        parse_init(init)
    except ConfigError as exc:
        raise ConfigError(f"{source}: init: {exc}") from None
    return init


def _section(raw: dict[str, Any], name: str, source: str) -> dict[str, Any]:
    """One of this config's own sections: its defaults with the given keys, each checked."""
    given = raw.get(name) or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{source}: section {name!r} must be a mapping, got {given!r}")
    defaults = DEFAULTS[name]
    stray = sorted(set(given) - set(defaults))
    if stray:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(f'{name}.{k}' for k in stray)}; "
                          f"known: {', '.join(defaults)}")
    merged = {**defaults, **given}
    for key, value in merged.items():
        if f"{name}.{key}" in _RANGES:
            _check_number(f"{name}.{key}", value)
        elif not isinstance(value, bool):  # the only other kind: gating.enabled
            raise ConfigError(f"{name}.{key} must be true or false, got {value!r}")
    return merged


def validate_config(raw: Any, source: str = "config") -> dict[str, Any]:
    """Defaults filled in and every value checked; returns a new dict. The sections shared with
    the PPO configs (game, game_options, name, network, imitation) are checked by
    :func:`experiments.train.config.validate_config`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: an expert-iteration config is a mapping of sections, "
                          f"got {type(raw).__name__}")
    shared = ("game", "game_options", "name", "network", "imitation")
    sections = set(shared) | set(DEFAULTS) | {"search", "init"}
    unknown = sorted(set(raw) - sections)
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(sections))}")
    imitation = raw.get("imitation") or {}
    if isinstance(imitation, dict) and imitation.get("teacher") is not None:
        raise ConfigError(f"{source}: imitation.teacher is not an expert-iteration key: give the teacher "
                          "as init: teacher:<agent spec> (or --init)")
    base = train_config.validate_config({k: raw[k] for k in shared if k in raw}, source)
    config: dict[str, Any] = {k: base[k] for k in shared}
    config["search"] = _check_search(raw.get("search"), source)
    config["init"] = _check_init(raw.get("init"), source)
    for name in ("selfplay", "train", "gating", "run"):
        config[name] = _section(raw, name, source)
    gating = config["gating"]
    if gating["games"] + gating["confirm_games"] > MAX_GAMES:
        raise ConfigError(f"{source}: gating.games + gating.confirm_games must be at most {MAX_GAMES} "
                          f"(a generation's gating seeds), got {gating['games']} + {gating['confirm_games']}")
    if gating["confirm_games"] == 1:
        raise ConfigError(f"{source}: gating.confirm_games must be 0 (no confirmation) or at least 2, got 1")
    return config


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and validate an expert-iteration config file."""
    return validate_config(read_yaml(path, "expert-iteration config"), source=str(path))

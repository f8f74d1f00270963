"""Training configs (``configs/ppo/*.yaml``): load, fill defaults, validate with clear errors.

A config has these sections (every key optional except ``game``); unknown sections or keys,
and values of the wrong type or range, are refused with one line naming them::

    game: cartographers
    game_options: {players: 1}
    env: {reward: score, vectorized: true}         # reward: score | margin | win
    network: {width: 48, blocks: 3, vector_hidden: 64, head_hidden: 64, value_scale: 100}
    # or the candidate-scoring network over the candidate env (single-agent, other seats played
    # by env.opponent, default greedy; no vector env, no imitation, no league):
    # env: {action_space: candidates, max_candidates: null, opponent: greedy}
    # network: {type: candidates, hidden: 64, layers: 2, temperature: 1, value_scale: 100,
    #           init: models/cartographers_solo/model.json}   # or init: greedy
    ppo: {lr: 0.0003, gamma: 1.0, lambda: 0.95, clip_param: 0.2, entropy_coeff: 0.01, ...}
                                                   # vf_loss_coeff weighs the value loss measured in
                                                   # units of network.value_scale points (RLlib gets
                                                   # vf_loss_coeff / value_scale**2): rewards are raw
                                                   # points, and a value loss in points^2 would swamp
                                                   # the policy loss in the shared trunk
    resources: {num_env_runners: 1, num_envs_per_env_runner: 8, num_learners: 0,
                num_gpus_per_learner: 0, num_cpus: 2}
    run: {timesteps: 200000, time_budget: null, checkpoint_every: 10, eval_every: 10,
          eval_games: 40, eval_seed: 0, seed: 0}
    imitation: {teacher: greedy, games: 200, epochs: 6, batch_size: 256, lr: 0.001, workers: 2}
    league: {enabled: true, opponent_sampling: weighted, main_share: 0.5, promote_every: 10,
             promote_games: 40, max_members: 6}
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from envs.core.errors import ConfigError
from envs.core.textfile import read_yaml

DEFAULTS: dict[str, dict[str, Any]] = {
    "env": {"reward": "score", "vectorized": True, "action_space": "plain", "max_candidates": None,
            "opponent": None},
    "network": {"width": 48, "blocks": 3, "vector_hidden": 64, "head_hidden": 64, "value_scale": 100.0},
    "ppo": {"lr": 3e-4, "gamma": 1.0, "lambda": 0.95, "clip_param": 0.2, "entropy_coeff": 0.01,
            "vf_loss_coeff": 0.5, "vf_clip_param": 1.0e6, "kl_coeff": 0.0, "grad_clip": 1.0,
            "train_batch_size": 2000, "minibatch_size": 250, "num_epochs": 4},
    "resources": {"num_env_runners": 1, "num_envs_per_env_runner": 8, "num_learners": 0,
                  "num_gpus_per_learner": 0, "num_cpus": 2},
    "run": {"timesteps": 200_000, "time_budget": None, "checkpoint_every": 10, "eval_every": 10,
            "eval_games": 40, "eval_seed": 0, "seed": 0},
    "imitation": {"teacher": None, "games": 200, "epochs": 6, "batch_size": 256, "lr": 1e-3,
                  "value_weight": 0.5, "workers": 2},
    "league": {"enabled": False, "opponent_sampling": "weighted", "main_share": 0.5,
               "promote_every": 10, "promote_games": 40, "max_members": 6},
}

#: key -> (type check name, extra rule) for the value checks
_NUMBER = (int, float)
_RULES: dict[str, tuple[tuple[type, ...], str]] = {
    "env.reward": ((str,), "one of score, margin, win"),
    "env.vectorized": ((bool,), "true or false"),
    "env.action_space": ((str,), "one of plain, candidates"),
    "env.max_candidates": ((int,), "positive or null"), "env.opponent": ((str,), "an agent spec or null"),
    "ppo.lr": (_NUMBER, "positive"), "ppo.gamma": (_NUMBER, "in [0, 1]"),
    "ppo.lambda": (_NUMBER, "in [0, 1]"),
    "ppo.clip_param": (_NUMBER, "positive"), "ppo.entropy_coeff": (_NUMBER, ">= 0"),
    "ppo.vf_loss_coeff": (_NUMBER, ">= 0"), "ppo.vf_clip_param": (_NUMBER, "positive"),
    "ppo.kl_coeff": (_NUMBER, ">= 0"), "ppo.grad_clip": (_NUMBER, "positive"),
    "ppo.train_batch_size": ((int,), "positive"), "ppo.minibatch_size": ((int,), "positive"),
    "ppo.num_epochs": ((int,), "positive"),
    "resources.num_env_runners": ((int,), ">= 0"), "resources.num_envs_per_env_runner": ((int,), "positive"),
    "resources.num_learners": ((int,), ">= 0"), "resources.num_gpus_per_learner": (_NUMBER, ">= 0"),
    "resources.num_cpus": ((int,), "positive"),
    "run.timesteps": ((int,), "positive"), "run.time_budget": (_NUMBER, "positive or null"),
    "run.checkpoint_every": ((int,), "positive"), "run.eval_every": ((int,), ">= 0"),
    "run.eval_games": ((int,), "positive"), "run.eval_seed": ((int,), ">= 0"), "run.seed": ((int,), ">= 0"),
    "imitation.teacher": ((str,), "an agent spec or null"), "imitation.games": ((int,), "positive"),
    "imitation.epochs": ((int,), "positive"), "imitation.batch_size": ((int,), "positive"),
    "imitation.lr": (_NUMBER, "positive"), "imitation.value_weight": (_NUMBER, ">= 0"),
    "imitation.workers": ((int,), "positive"),
    "league.enabled": ((bool,), "true or false"),
    "league.opponent_sampling": ((str,), "latest, uniform or weighted"),
    "league.main_share": (_NUMBER, "in [0, 1]"), "league.promote_every": ((int,), "positive"),
    "league.promote_games": ((int,), ">= 4"), "league.max_members": ((int,), "positive"),
}
_CHOICES = {"env.reward": ("score", "margin", "win"), "env.action_space": ("plain", "candidates"),
            "league.opponent_sampling": ("latest", "uniform", "weighted")}


def _check_value(key: str, value: Any) -> None:
    types, rule = _RULES[key]
    if value is None and ("null" in rule):
        return
    if isinstance(value, bool) and bool not in types:
        raise ConfigError(f"{key} must be {rule}, got {value!r}")
    if not isinstance(value, types):
        raise ConfigError(f"{key} must be {rule}, got {value!r}")
    if key in _CHOICES and value not in _CHOICES[key]:
        raise ConfigError(f"{key} must be one of {', '.join(_CHOICES[key])}, got {value!r}")
    bad = (("positive" in rule and not value > 0) or (rule == ">= 0" and value < 0)
           or ("in [0, 1]" in rule and not 0 <= value <= 1) or (rule == ">= 4" and value < 4))
    if not isinstance(value, str | bool) and bad:
        raise ConfigError(f"{key} must be {rule}, got {value!r}")


def validate_config(raw: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Defaults filled in and every value checked; returns a new dict."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a training config is a mapping of sections, got {type(raw).__name__}")
    sections = set(DEFAULTS) | {"game", "game_options", "name"}
    unknown = sorted(set(raw) - sections)
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(sections))}")
    if not isinstance(raw.get("game"), str):
        raise ConfigError(f"{source}: 'game' (cartographers, cascadia or dorfromantik) is required")
    config: dict[str, Any] = {"game": raw["game"].strip().lower(),
                              "name": str(raw.get("name") or raw["game"])}
    options = raw.get("game_options") or {}
    if not isinstance(options, dict):
        raise ConfigError(f"{source}: game_options must be a mapping, got {options!r}")
    config["game_options"] = dict(options)
    for section, defaults in DEFAULTS.items():
        given = raw.get(section) or {}
        if not isinstance(given, dict):
            raise ConfigError(f"{source}: section {section!r} must be a mapping, got {given!r}")
        if section == "network":  # checked by the network's config class (the network owns its keys)
            config[section] = _network_section(given, defaults)
            continue
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {', '.join(f'{section}.{k}' for k in unknown)}; "
                              f"known: {', '.join(defaults)}")
        merged = {**copy.deepcopy(defaults), **given}
        for key, value in merged.items():
            _check_value(f"{section}.{key}", value)
        config[section] = merged
    _check_candidates(raw, config, source)
    ppo = config["ppo"]
    if ppo["minibatch_size"] > ppo["train_batch_size"]:
        raise ConfigError(f"{source}: ppo.minibatch_size ({ppo['minibatch_size']}) exceeds "
                          f"ppo.train_batch_size ({ppo['train_batch_size']})")
    return config


def _network_section(given: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The checked network section: ``type: candidates`` for the candidate network (its own keys),
    else the board network (``type: board`` or no type)."""
    given = dict(given)
    kind = given.pop("type", "board")
    if kind == "candidates":
        from agents.ppo.candidate_network import CandidateNetConfig

        return {"type": kind, **CandidateNetConfig.from_dict(given).as_dict()}
    if kind != "board":
        raise ConfigError(f"network.type must be board or candidates, got {kind!r}")
    from agents.ppo.network import NetConfig

    return NetConfig.from_dict({**defaults, **given}).as_dict()


def _check_candidates(raw: dict[str, Any], config: dict[str, Any], source: str) -> None:
    """The candidate action space and the candidate network go together, without a vector env (none
    has a candidate mode) or imitation; the other seats are either ``env.opponent`` (single-agent)
    or the self-play league, not both. Fills ``env.vectorized``."""
    env = config["env"]
    candidates = env["action_space"] == "candidates"
    if candidates != is_candidate_config(config):
        raise ConfigError(f"{source}: env.action_space {env['action_space']} needs network.type "
                          f"{'candidates' if candidates else 'board'}")
    if not candidates:
        for key in ("max_candidates", "opponent"):
            if env[key] is not None:
                raise ConfigError(f"{source}: env.{key} needs env.action_space candidates")
        return
    if (raw.get("env") or {}).get("vectorized") is True:
        raise ConfigError(f"{source}: env.vectorized true: the batched vector envs have no candidate "
                          "mode; set env.vectorized false (or leave it out) with env.action_space candidates")
    env["vectorized"] = False
    if config["imitation"]["teacher"] is not None:
        raise ConfigError(f"{source}: imitation.teacher with env.action_space candidates: the candidate "
                          "network starts from network.init instead")
    if config["league"]["enabled"] and env["opponent"] is not None:
        raise ConfigError(f"{source}: env.opponent with league.enabled: the league's snapshots of the "
                          "trained network are the opponents; drop one of them")


def is_candidate_config(config: dict[str, Any]) -> bool:
    """True when the config trains the candidate-scoring network on the candidate env."""
    return (config.get("network") or {}).get("type") == "candidates"


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and validate a training config file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"training config {str(p)!r} does not exist")
    raw = read_yaml(p, "training config")
    return validate_config(raw, source=str(p))


def is_multiplayer(config: dict[str, Any]) -> bool:
    """True when the game has several seats and they compete (self-play, with a league if enabled);
    a candidate config without the league is single-agent (its other seats are env.opponent)."""
    if int(config["game_options"].get("players", 1)) <= 1 or config["game"] == "dorfromantik":
        return False
    return not is_candidate_config(config) or bool(config["league"]["enabled"])

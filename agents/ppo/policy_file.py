"""``policy.pt``: a trained network that loads with torch alone.

One file holds what is needed to rebuild and check the network: the format version, the game's
name and options, the observation size and action count, the network config and the weights.
A checkpoint folder of ``meeplelab train`` holds one; so can any folder or path given to the
``ppo:`` agent. A candidate network (:mod:`agents.ppo.candidate_network`) is recorded as
``network: candidates`` with its feature names, context size, phases and candidate count instead
of the observation size and action count; its ``theta`` is among the weights.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

import torch

from agents.ppo.candidate_network import NETWORK_TYPE, CandidateNetConfig, CandidateScoringNet
from agents.ppo.network import BoardPolicyValueNet, NetConfig
from envs.core.errors import ConfigError
from envs.core.game import Game
from envs.core.policies import candidate_view

POLICY_FILE = "policy.pt"
FORMAT_VERSION = 1


def policy_payload(net: BoardPolicyValueNet | CandidateScoringNet, game: Game, game_options: dict[str, Any],
                   meta: dict[str, Any] | None = None, max_candidates: int | None = None) -> dict[str, Any]:
    """The dict that :func:`save_policy` writes (weights copied to CPU). ``max_candidates``: the
    rows per decision a candidate network was trained on (default: the view's)."""
    payload: dict[str, Any] = {
        "format": "meeplelab-policy",
        "version": FORMAT_VERSION,
        "game": game.name,
        "game_options": dict(game_options),
        "num_players": int(game.num_players()),
    }
    if isinstance(net, CandidateScoringNet):
        view = candidate_view(game.name)
        payload |= {"network": NETWORK_TYPE, "feature_names": list(view.feature_names),
                    "context_size": net.context_size, "n_phases": net.n_phases,
                    "max_candidates": int(max_candidates or view.max_candidates)}
    else:
        payload |= {"obs_size": int(net.obs_size), "num_actions": int(net.num_actions)}
    return payload | {
        "net_config": net.config.as_dict(),
        "state_dict": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
        "meta": dict(meta or {}),
    }


def is_candidate_policy(payload: dict[str, Any]) -> bool:
    """True for a candidate network's payload."""
    return payload.get("network") == NETWORK_TYPE


def save_policy(path: str | Path, net: BoardPolicyValueNet | CandidateScoringNet, game: Game,
                game_options: dict[str, Any], meta: dict[str, Any] | None = None,
                max_candidates: int | None = None) -> Path:
    """Write ``policy.pt`` atomically (a temp file renamed into place) and return its path."""
    path = Path(path)
    if path.is_dir() or path.suffix != ".pt":
        path = path / POLICY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save(policy_payload(net, game, game_options, meta, max_candidates), buffer)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(buffer.getvalue())
    tmp.replace(path)
    return path


def resolve_policy_path(path: str | Path) -> Path:
    """``policy.pt`` itself, or for a folder: a training run's ``best/policy.pt`` (the best network
    by its evaluation), else the folder's own ``policy.pt`` (a checkpoint, or a run's latest)."""
    p = Path(path).expanduser()
    if p.is_dir():
        for candidate in (p / "best" / POLICY_FILE, p / POLICY_FILE):
            if candidate.is_file():
                return candidate
        raise ConfigError(f"no {POLICY_FILE} in checkpoint folder {str(p)!r}")
    if not p.exists():
        raise ConfigError(f"policy file {str(p)!r} does not exist")
    return p


def load_policy_payload(path: str | Path) -> dict[str, Any]:
    """Read and check a policy file; any problem is one ConfigError naming the file.

    Evaluations build a ``ppo:`` agent per game and seat, so the file's contents are kept while
    its path, size and modification time stay the same (a rewritten file is read again)."""
    p = resolve_policy_path(path)
    stat = p.stat()
    return dict(_read_payload(str(p.resolve()), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=16)
def _read_payload(path: str, size: int, mtime_ns: int) -> dict[str, Any]:
    p = Path(path)
    try:
        payload = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a damaged file
        raise ConfigError(f"policy file {str(p)!r} is corrupt or not a meeplelab policy "
                          f"({type(exc).__name__})") from None
    if not isinstance(payload, dict) or payload.get("format") != "meeplelab-policy":
        raise ConfigError(f"{str(p)!r} is not a meeplelab policy file")
    if payload.get("version") != FORMAT_VERSION:
        raise ConfigError(f"policy file {str(p)!r} has format version {payload.get('version')!r}; "
                          f"this meeplelab reads version {FORMAT_VERSION}")
    payload["path"] = str(p)
    return payload


def check_policy_fits(payload: dict[str, Any], game: Game) -> None:
    """ConfigError unless the policy was trained for this game, player count and spaces."""
    where = payload.get("path", "policy")
    if payload["game"] != game.name:
        raise ConfigError(f"policy {where!r} was trained for {payload['game']}, not {game.name}")
    if payload["num_players"] != game.num_players():
        raise ConfigError(f"policy {where!r} was trained for {payload['num_players']} player(s), "
                          f"this game has {game.num_players()}")
    if is_candidate_policy(payload):
        _check_candidate_fit(payload, game)
        return
    obs_size = int(game.observation_shape()[0])
    if payload["obs_size"] != obs_size or payload["num_actions"] != game.num_actions:
        raise ConfigError(f"policy {where!r} expects observations of {payload['obs_size']} and "
                          f"{payload['num_actions']} actions; "
                          f"this game has {obs_size} and {game.num_actions} "
                          f"(other game options: {payload['game_options']})")


def _check_candidate_fit(payload: dict[str, Any], game: Game) -> None:
    """ConfigError unless a candidate payload's features, context and phases are this code's."""
    where = payload.get("path", "policy")
    view = candidate_view(game.name)
    try:
        names, c, phases, k = (list(payload["feature_names"]), int(payload["context_size"]),
                               int(payload["n_phases"]), int(payload["max_candidates"]))
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"policy {where!r}: a candidate network without its feature names, "
                          "context size, phases and candidate count") from None
    if names != list(view.feature_names):
        raise ConfigError(f"policy {where!r}: its {len(names)} candidate features do not match the "
                          f"{len(view.feature_names)} {game.name} features of this code (retrain it)")
    if c != len(view.context_names) or phases != view.n_phases or k < 1:
        raise ConfigError(f"policy {where!r}: context of {c} columns and {phases} phases; this code's "
                          f"{game.name} view has {len(view.context_names)} and {view.n_phases}")


def build_network(payload: dict[str, Any], game: Game) -> BoardPolicyValueNet | CandidateScoringNet:
    """The network of a checked policy payload, weights loaded, in eval mode."""
    check_policy_fits(payload, game)
    if is_candidate_policy(payload):
        net = CandidateScoringNet(len(payload["feature_names"]), payload["context_size"], payload["n_phases"],
                                  CandidateNetConfig.from_dict(payload["net_config"]))
    else:
        net = BoardPolicyValueNet(game.layout(), NetConfig.from_dict(payload["net_config"]))
    try:
        net.load_state_dict(payload["state_dict"])
    except RuntimeError as exc:
        raise ConfigError(f"policy {payload.get('path')!r}: weights do not fit the network "
                          f"({str(exc).splitlines()[0]})") from None
    net.eval()
    return net

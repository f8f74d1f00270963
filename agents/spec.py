"""Agent specs: ``"name:key=value,..."`` strings split into a name and typed options."""

from __future__ import annotations

from typing import Any

from envs.core.errors import ConfigError

#: agents whose spec starts with a bare path: ``ppo:runs/train/x`` means ``ppo:path=runs/train/x``
#: (``learned:models/x`` likewise)
PATH_AGENTS = ("ppo", "learned")


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"mcts:simulations=400,rollout=greedy"`` into a name and typed options."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty agent name")
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    if rest:
        for index, part in enumerate(rest.split(",")):
            key, eq, raw = part.partition("=")
            if index == 0 and not eq and key.strip() and name.strip().lower() in PATH_AGENTS:
                options["path"] = key.strip()
                continue
            if not eq or not key.strip():
                raise ConfigError(f"agent option {part!r} in {spec!r} is not of the form key=value")
            options[key.strip()] = _parse_value(raw.strip())
    return name.strip().lower(), options


def _parse_value(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw

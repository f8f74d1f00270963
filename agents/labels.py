"""Display labels of agent specs: what tables, plots and CSV columns call an agent.

A spec may name its label (``mcts:simulations=96,rollout=greedy,label=strong``); otherwise the
label is a short automatic name: the agent's name alone without options, ``mcts(96, greedy)``
for MCTS (simulations or time budget, rollout policy, and a prior or engine only when they are not
the usual ones), ``ppo(<run folder>)`` for a trained policy, ``name(key=value, ...)`` for the rest.
``label`` is stripped before the agent is built. :func:`unique_labels` refuses a list in which two
different specs would be shown under one label.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from agents.search.catalog import SEARCHES
from agents.spec import parse_agent_spec
from envs.core.errors import ConfigError

LABEL = "label"


def pop_label(options: dict[str, Any]) -> str | None:
    """Remove ``label`` from ``options`` and return it (None when absent); ConfigError if empty."""
    if LABEL not in options:
        return None
    label = str(options.pop(LABEL)).strip()
    if not label:
        raise ConfigError("agent option label= needs a name")
    return label


def _mcts_label(options: dict[str, Any]) -> str:
    sims, limit = options.get("simulations"), options.get("time_limit")
    budget = [str(sims)] if sims not in (None, "none") else []
    if limit is not None:
        budget.append(f"{limit}s")
    rollout = str(options.get("rollout", "random"))
    preset = str(options.get("greedy", "default"))
    parts = ["/".join(budget) or "200", rollout if preset == "default" else f"{rollout} {preset}"]
    if options.get("value") is not None:  # PUCT with a value network (agents/search/puct.py)
        weight = options.get("value_weight", 1.0)
        parts = ["/".join(budget) or "200", f"value_weight {weight}"]
        for key in ("c_puct", "batch"):
            if options.get(key) is not None:
                parts.append(f"{key} {options[key]}")
        return f"puct({', '.join(parts)})"
    prior = options.get("prior")
    if prior is not None and str(prior) != rollout:
        parts.append(f"prior {prior}")
    if str(options.get("engine", "python")) != "python":
        parts.append(str(options["engine"]))
    if str(options.get("halving", "false")).lower() == "true":
        parts.append("halving")
    if str(options.get("redraws", "false")).lower() == "true":
        parts.append("redraws")
    if str(options.get("free_redraw", "false")).lower() == "true":
        parts.append("free redraw")
    if str(options.get("playout_redraw", "false")).lower() == "true":
        parts.append("redrawing playouts")
    if str(options.get("rotations", "1")) != "1":
        parts.append(f"{options['rotations']} rotations")
    if options.get("horizon") is not None:
        parts.append(f"horizon {options['horizon']}")
    if str(options.get("objective", "total")) != "total":
        parts.append(f"{options['objective']} objective")
    return f"mcts({', '.join(parts)})"


def short_label(name: str, options: dict[str, Any]) -> str:
    """The automatic label of agent ``name`` with ``options`` (``label`` already removed)."""
    if not options:
        return name
    if name == "mcts":
        return _mcts_label(options)
    if name in SEARCHES:  # a search by its own name: the mcts label of the same agent, renamed
        inner = _mcts_label({**SEARCHES[name].fixed, **options}).split("(", 1)[1]
        return f"{name}({inner.replace(', compiled', '')}"
    if name == "ppo" and set(options) == {"path"}:
        path = PurePath(str(options["path"]))
        return f"ppo({path.parent.name if path.suffix else path.name})"
    return f"{name}({', '.join(f'{k}={v}' for k, v in options.items())})"


def agent_label(spec: str | dict[str, Any]) -> str:
    """The display label of ``spec`` (a ``name:key=value,...`` string or a dict with ``name``)."""
    if isinstance(spec, dict):
        options = {k: v for k, v in spec.items() if k != "name"}
        name = str(spec.get("name", "")).strip().lower()
    else:
        name, options = parse_agent_spec(spec)
    explicit = pop_label(options)
    return explicit if explicit is not None else short_label(name, options)


def unique_labels(specs: list[str | dict[str, Any]]) -> list[str]:
    """The labels of ``specs``; ConfigError when a spec is listed twice or two specs share a label."""
    labels = [agent_label(s) for s in specs]
    first: dict[str, Any] = {}
    for spec, label in zip(specs, labels, strict=True):
        if label not in first:
            first[label] = spec
        elif first[label] == spec:
            raise ConfigError(f"agent listed twice: {spec}")
        else:
            raise ConfigError(f"agents {first[label]} and {spec} would both be shown as {label!r}; "
                              "give one of them its own label= option")
    return labels

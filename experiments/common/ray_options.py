"""The ``--workers`` and ``--address`` options, defined once for every command that runs on Ray.

One rule everywhere: ``--workers`` is a count of tasks in flight and must be at least 1 (0 and
negative numbers are refused with one line; leaving the option out gives the command's default).
``--address`` joins a running Ray cluster; the ``RAY_ADDRESS`` environment variable is honoured
as ``--address`` (the option wins), and ``local`` forces a local instance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from envs.core.errors import ConfigError

ADDRESS_HELP = ("Join a running Ray cluster at host:port (or auto) instead of starting a local one; "
                "RAY_ADDRESS in the environment counts as this option, 'local' forces a local run.")


def check_workers(value: int | None) -> int | None:
    """``value`` when it is None (the default) or at least 1; ConfigError otherwise."""
    if value is not None and value < 1:
        raise ConfigError(f"--workers must be at least 1, got {value} (leave it out for the default)")
    return value


def _workers_callback(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    return check_workers(value)


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def workers_option(default: int | None, default_help: str) -> Decorator:
    """``--workers N`` (N >= 1); ``default_help`` says what leaving it out means."""
    return click.option("--workers", type=int, default=default, callback=_workers_callback,
                        help=f"Ray tasks in flight, at least 1 (default: {default_help}).")


def _address_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    value = (value or "").strip()
    return None if value in ("", "local") else value


address_option = click.option("--address", envvar="RAY_ADDRESS", callback=_address_callback,
                              help=ADDRESS_HELP)

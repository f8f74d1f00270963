"""The one way this project starts Ray: ``init_ray()``.

Locally Ray must talk to nothing but loopback (see docs/ray.md). This helper applies every
setting that takes: node address 127.0.0.1, usage stats off, no auth token file, no dashboard,
and a ``HOME`` holding ``ray_bootstrap_config.yaml`` so the usage-stats head never probes the
cloud metadata address. With ``address`` given it joins that cluster and changes nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
RAY_HOME = PROJECT_ROOT / ".ray_home"

LOCAL_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
}


def init_ray(num_cpus: int | None = None, address: str | None = None, **kwargs: Any):
    """Start (or join) Ray once and return ``ray``.

    Local by default, on loopback only. ``address``: an existing cluster ("host:port" or "auto");
    then none of the local-only settings apply.
    """
    if address:
        import ray

        if not ray.is_initialized():
            ray.init(address=address, **kwargs)
        return ray
    # Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER when it is first imported: set it before the
    # import, and patch the constant in case some other module imported ray already.
    os.environ.update(LOCAL_ENV)
    import ray
    import ray._private.ray_constants as ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False
    if ray.is_initialized():
        return ray
    RAY_HOME.mkdir(exist_ok=True)
    (RAY_HOME / "ray_bootstrap_config.yaml").touch()
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(RAY_HOME)
    try:
        ray.init(
            num_cpus=num_cpus or os.cpu_count() or 1,
            include_dashboard=False,
            log_to_driver=kwargs.pop("log_to_driver", False),
            configure_logging=kwargs.pop("configure_logging", False),
            **kwargs,
        )
    finally:
        if old_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = old_home
    if node_address() != "127.0.0.1":
        address_seen = node_address()
        ray.shutdown()
        raise RuntimeError(f"local Ray came up on {address_seen}, not on loopback; refusing to run")
    return ray


def node_address() -> str:
    """The IP address of the node this driver runs on."""
    import ray

    return ray.util.get_node_ip_address()

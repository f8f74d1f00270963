"""The one way this project starts Ray: ``init_ray()``.

Locally Ray must talk to nothing but loopback. This helper applies every setting that takes:
node address 127.0.0.1, usage stats off, no auth token file, no dashboard, and a ``HOME``
holding ``ray_bootstrap_config.yaml`` so the usage-stats head never probes the cloud metadata
address. A local run always starts its own instance (Ray's ``address="local"``), even when a
cluster is running on this machine or ``RAY_ADDRESS`` is set.

``address`` joins an existing cluster instead. It is checked with a plain TCP connect first, so an
unreachable cluster fails within seconds with one line. A loopback address (127.0.0.1, localhost)
gets the local settings too: without them Ray rewrites 127.0.0.1 to the machine's interface
address (``services.resolve_ip_for_localhost`` when ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is on)
and then waits for a GCS that listens only on loopback.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from envs.core.errors import ConfigError
from envs.core.install import cache_dir, require

PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: Ray's HOME: the checkout's .ray_home, or the user's cache folder for an installed copy
RAY_HOME = cache_dir(".ray_home")
LOOPBACK = "127.0.0.1"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
CONNECT_TIMEOUT_S = 3.0

LOCAL_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
}


def init_ray(num_cpus: int | None = None, address: str | None = None, **kwargs: Any):
    """Start a local Ray (loopback only) or join the cluster at ``address``; return ``ray``.

    ``address``: "host:port" of a running cluster's GCS, or "auto" (the cluster Ray finds on this
    machine). ``num_cpus`` applies to a local instance only (a cluster brings its own CPUs).
    """
    require("ray", extra="sim")
    if address and address != "local":
        return _join(address, **kwargs)
    _apply_local_settings()
    import ray

    if ray.is_initialized():
        return ray
    with _ray_home():
        ray.init(
            address="local",
            num_cpus=num_cpus or os.cpu_count() or 1,
            include_dashboard=False,
            log_to_driver=kwargs.pop("log_to_driver", False),
            configure_logging=kwargs.pop("configure_logging", False),
            **kwargs,
        )
    if node_address() != LOOPBACK:
        address_seen = node_address()
        ray.shutdown()
        raise RuntimeError(f"local Ray came up on {address_seen}, not on loopback; refusing to run")
    return ray


def _join(address: str, **kwargs: Any):
    """Connect this driver to the cluster at ``address`` (see the module docstring)."""
    host, port = split_address(address) if address != "auto" else (None, None)
    loopback = host is None or host in LOOPBACK_NAMES
    if loopback:
        _apply_local_settings()
    if host is not None:
        check_reachable(host, port)
    import ray

    target = f"{LOOPBACK}:{port}" if host in LOOPBACK_NAMES else address
    if ray.is_initialized():
        current = ray.get_runtime_context().gcs_address
        if host is not None and current != target:
            raise ConfigError(f"Ray already runs in this process (at {current}); cannot also join {address}")
        return ray
    options: dict[str, Any] = {"log_to_driver": kwargs.pop("log_to_driver", False),
                               "configure_logging": kwargs.pop("configure_logging", False), **kwargs}
    if loopback:
        options["_node_ip_address"] = LOOPBACK
    try:
        with _ray_home():
            ray.init(address=target, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"could not join the Ray cluster at {address}: {first}") from exc
    return ray


def split_address(address: str) -> tuple[str, int]:
    """``"host:port"`` -> (host, port); ConfigError naming the address otherwise."""
    host, sep, port = address.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--address must be host:port (e.g. 127.0.0.1:6379) or auto, got {address!r}")
    return host, int(port)


def check_reachable(host: str, port: int, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """ConfigError unless something accepts a TCP connection at ``host:port`` within ``timeout``."""
    try:
        with socket.create_connection((LOOPBACK if host == "localhost" else host, port), timeout=timeout):
            return
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"no Ray cluster reachable at {host}:{port} ({reason}); start one with "
                          f"`ray start --head --port={port}` or leave out --address for a local run") from exc


def _apply_local_settings() -> None:
    """Environment and constants that keep this process's Ray on loopback.

    Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER when it is first imported: set it before the
    import, and patch the constant in case some other module imported ray already."""
    os.environ.update(LOCAL_ENV)
    import ray._private.ray_constants as ray_constants

    ray_constants.ENABLE_RAY_CLUSTER = False


@contextmanager
def _ray_home() -> Iterator[None]:
    """``HOME`` pointing at a folder with ``ray_bootstrap_config.yaml`` while Ray starts."""
    RAY_HOME.mkdir(parents=True, exist_ok=True)
    (RAY_HOME / "ray_bootstrap_config.yaml").touch()
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(RAY_HOME)
    try:
        yield
    finally:
        if old_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = old_home


def ray_env() -> dict[str, str]:
    """The environment for a ``ray start`` on this machine that stays on loopback (tests, docs)."""
    RAY_HOME.mkdir(parents=True, exist_ok=True)
    (RAY_HOME / "ray_bootstrap_config.yaml").touch()
    return {**os.environ, **LOCAL_ENV, "HOME": str(RAY_HOME)}


def where_running(address: str | None) -> str:
    """One line for stderr saying where this process's Ray runs (call after :func:`init_ray`)."""
    import ray

    cpus = int(ray.cluster_resources().get("CPU", 1))
    place = f"the Ray cluster at {address}" if address else f"a local Ray instance on {LOOPBACK}"
    return f"running on {place} ({cpus} CPUs)"


def node_address() -> str:
    """The IP address of the node this driver runs on."""
    import ray

    return ray.util.get_node_ip_address()

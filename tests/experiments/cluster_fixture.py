"""A real Ray cluster on loopback for tests of the ``--address`` path: ``loopback_cluster``.

``ray start --head`` on 127.0.0.1 with a free port and a temporary directory of its own, with the
same loopback settings :func:`experiments.common.ray_setup.init_ray` applies. On teardown it stops exactly
the processes whose command line names that directory (``ray stop`` would stop every Ray on the
machine, other people's included). Use it from a test module with
``from tests.experiments.cluster_fixture import loopback_cluster  # noqa: F401``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from experiments.common.ray_setup import LOOPBACK, ray_env
from tests.paths import REPO_ROOT

RAY_CLI = Path(sys.executable).with_name("ray")


def free_port() -> int:
    """A TCP port nothing listens on at the moment (on loopback)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def processes_naming(text: str) -> list[int]:
    """Process ids whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


@dataclass
class LoopbackCluster:
    """A started head node: ``address`` is ``127.0.0.1:port``; ``env`` runs commands against it."""

    address: str
    temp_dir: Path
    env: dict[str, str]

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM then SIGKILL for every process of this cluster, and nothing else."""
        pids = processes_naming(str(self.temp_dir))
        for pid in pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and processes_naming(str(self.temp_dir)):
            time.sleep(0.2)
        for pid in processes_naming(str(self.temp_dir)):
            _signal(pid, signal.SIGKILL)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def start_cluster(num_cpus: int = 2) -> LoopbackCluster:
    """``ray start --head`` on loopback (a short /tmp path: Ray's socket paths must stay short)."""
    temp_dir = Path(tempfile.mkdtemp(prefix="mlray", dir="/tmp"))
    port = free_port()
    path = os.environ.get("PYTHONPATH", "")
    env = {**ray_env(), "PYTHONPATH": str(REPO_ROOT) + (os.pathsep + path if path else "")}
    env.pop("RAY_ADDRESS", None)
    cluster = LoopbackCluster(f"{LOOPBACK}:{port}", temp_dir, env)
    try:
        subprocess.run([str(RAY_CLI), "start", "--head", f"--node-ip-address={LOOPBACK}", f"--port={port}",
                        f"--num-cpus={num_cpus}", f"--temp-dir={temp_dir}", "--include-dashboard=false",
                        "--disable-usage-stats"], env=env, check=True, capture_output=True, timeout=120)
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="module")
def loopback_cluster() -> Iterator[LoopbackCluster]:
    """A two-CPU loopback cluster for the tests of one module, stopped afterwards."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()

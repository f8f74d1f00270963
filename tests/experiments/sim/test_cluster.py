"""The cluster path for real: a loopback Ray cluster (``ray start --head``), commands joining it
with ``--address`` give the same results as local runs, and a local run ignores the cluster (a short
one plays in the command's own process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.experiments.cluster_fixture import LoopbackCluster, loopback_cluster  # noqa: F401

pytestmark = pytest.mark.slow
MEEPLELAB = [sys.executable, "-m", "experiments.cli"]


def _run(cluster: LoopbackCluster, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([*MEEPLELAB, *args], env=cluster.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("chunk_*"))}


def test_simulate_on_the_cluster_equals_a_local_run(loopback_cluster, tmp_path):  # noqa: F811
    args = ["simulate", "cartographers", "--games", "40", "--chunk", "10", "--json"]
    address = loopback_cluster.address
    joined = _run(loopback_cluster, *args, "--address", address, "--out", str(tmp_path / "c"))
    assert f"running on the Ray cluster at {address}" in joined.stderr
    local = _run(loopback_cluster, *args, "--out", str(tmp_path / "l"))  # the cluster is still running
    # a short local job plays in its own process (experiments.common.local_first), never on the cluster
    assert "playing in this process" in local.stderr and address not in local.stderr
    assert json.loads(joined.stdout)["seats"] == json.loads(local.stdout)["seats"]
    assert len(_files(tmp_path / "c")) == 8 and _files(tmp_path / "c") == _files(tmp_path / "l")


def test_a_local_ray_beside_a_running_cluster_is_its_own_instance(loopback_cluster):  # noqa: F811
    probe = ("import ray\nfrom experiments.common.ray_setup import init_ray\n"
             "init_ray(num_cpus=1)\nprint(ray.get_runtime_context().gcs_address)\nray.shutdown()")
    done = subprocess.run([sys.executable, "-c", probe], env=loopback_cluster.env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    gcs = done.stdout.strip().splitlines()[-1]
    assert gcs.startswith("127.0.0.1:") and gcs != loopback_cluster.address


def test_eval_with_two_workers_on_the_cluster_equals_a_local_run(loopback_cluster, tmp_path):  # noqa: F811
    args = ["eval", "cartographers", "--agents", "random,greedy", "--games", "6", "--json", "--no-progress"]
    joined = _run(loopback_cluster, *args, "--workers", "2", "--address", loopback_cluster.address)
    assert f"eval: running on the Ray cluster at {loopback_cluster.address}" in joined.stderr
    local = _run(loopback_cluster, *args)
    untimed = [{agent: {k: v for k, v in entry.items() if not k.startswith("decision_ms")}
                for agent, entry in json.loads(done.stdout)["agents"].items()} for done in (joined, local)]
    assert untimed[0] == untimed[1] and set(untimed[0]) == {"random", "greedy"}
    assert json.loads(joined.stdout)["pairs"] == json.loads(local.stdout)["pairs"]


def test_an_unreachable_cluster_fails_in_seconds_with_one_line(loopback_cluster, tmp_path):  # noqa: F811
    from tests.experiments.cluster_fixture import free_port

    port = free_port()
    done = subprocess.run([*MEEPLELAB, "simulate", "cartographers", "--games", "4", "--address",
                           f"127.0.0.1:{port}", "--out", str(tmp_path)], env=loopback_cluster.env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: no Ray cluster reachable at 127.0.0.1:{port} (Connection refused); start one with "
        f"`ray start --head --port={port}` or leave out --address for a local run"]


def test_train_on_the_cluster_equals_a_local_run(loopback_cluster, tmp_path):  # noqa: F811
    """One PPO iteration (sampling in the driver's env runner, so the seed fixes it) joined to the
    cluster gives the same network as the same run on a local Ray."""
    import json

    import torch
    import yaml

    config = {"game": "cartographers", "game_options": {"players": 1}, "env": {"vectorized": False},
              "network": {"width": 8, "blocks": 1, "vector_hidden": 8, "head_hidden": 8},
              "ppo": {"train_batch_size": 64, "minibatch_size": 64, "num_epochs": 1},
              "resources": {"num_env_runners": 0, "num_envs_per_env_runner": 1, "num_cpus": 2},
              "run": {"eval_every": 0}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config))
    args = ("train", "cartographers", "--config", str(path), "--iterations", "1", "--json")
    joined = _run(loopback_cluster, *args, "--address", loopback_cluster.address,
                  "--out", str(tmp_path / "c"))
    local = _run(loopback_cluster, *args, "--out", str(tmp_path / "l"))
    assert json.loads(joined.stdout)["iteration"] == json.loads(local.stdout)["iteration"] == 1
    weights = [torch.load(tmp_path / run / "policy.pt", weights_only=True)["state_dict"]
               for run in ("c", "l")]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])

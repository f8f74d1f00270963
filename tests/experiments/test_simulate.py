"""meeplelab simulate on Ray: loopback only, chunk independence, resume, a killed worker."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from envs.core.errors import ConfigError
from experiments.cli import cli
from experiments.simulate import SimulationSpec, chunk_path, load_results, run_simulation

SPEC = SimulationSpec(game="dice-race", agents=["random", "random"], games=50, seed=3, chunk=10,
                      options={"players": 2})


def _files(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("chunk_*.parquet"))}


@pytest.fixture(scope="module")
def clean_run(ray_session, tmp_path_factory):
    """A reference run with one task at a time."""
    out = tmp_path_factory.mktemp("clean")
    result = run_simulation(SPEC, out, workers=1, progress=False)
    assert result.chunks_run == 5 and not result.interrupted
    return out


def test_ray_runs_on_loopback(ray_session):
    from experiments.ray_setup import RAY_HOME, node_address

    assert node_address() == "127.0.0.1"
    gcs_address = ray_session.get_runtime_context().gcs_address
    assert gcs_address.split(":")[0] == "127.0.0.1"
    assert all(node["NodeManagerAddress"] == "127.0.0.1" for node in ray_session.nodes())
    assert (RAY_HOME / "ray_bootstrap_config.yaml").exists()


def test_chunks_hold_every_seed_once(clean_run):
    frame = load_results(clean_run)
    assert sorted(frame.seed.unique()) == list(range(3, 53))
    assert len(frame) == 100 and set(frame.chunk) == {0, 1, 2, 3, 4}
    assert (frame.groupby("seed").seat.apply(sorted) == pd.Series([[0, 1]] * 50, index=range(3, 53))).all()


def test_one_worker_and_two_workers_give_identical_files(clean_run, tmp_path):
    run_simulation(SPEC, tmp_path, workers=2, progress=False)
    assert _files(tmp_path) == _files(clean_run)


def test_resume_after_an_interrupted_run(clean_run, tmp_path):
    run_simulation(SPEC, tmp_path, workers=2, progress=False)
    # an interrupted run: two chunks never finished, one left a half-written temporary file
    chunk_path(tmp_path, 1).unlink()
    chunk_path(tmp_path, 4).unlink()
    (tmp_path / "chunk_00004.parquet.tmp").write_bytes(b"half a file")
    result = run_simulation(SPEC, tmp_path, workers=2, progress=False)
    assert (result.chunks_run, result.chunks_skipped) == (2, 3)
    assert _files(tmp_path) == _files(clean_run)
    assert not list(tmp_path.glob("*.tmp"))
    again = run_simulation(SPEC, tmp_path, workers=2, progress=False)
    assert (again.chunks_run, again.chunks_skipped) == (0, 5)


def test_killed_worker_is_retried_with_the_same_result(clean_run, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "out"
    spec = SimulationSpec(**{**SPEC.__dict__, "games": 10})  # chunk 0 only
    result = run_simulation(spec, out, workers=1, progress=False, crash_once_dir=str(markers))
    assert [p.name for p in markers.iterdir()] == ["chunk_00000.crashed"]  # the first attempt died
    assert result.chunks_run == 1
    assert _files(out) == {"chunk_00000.parquet": _files(clean_run)["chunk_00000.parquet"]}


def test_a_different_simulation_in_the_same_directory_is_refused(clean_run):
    other = SimulationSpec(**{**SPEC.__dict__, "seed": 4})
    with pytest.raises(ConfigError, match="differs in: seed"):
        run_simulation(other, clean_run, progress=False)


def test_bad_agent_is_refused_before_any_task(tmp_path):
    bad = SimulationSpec(**{**SPEC.__dict__, "agents": ["random", "nosuch"]})
    with pytest.raises(ConfigError, match="unknown agent 'nosuch'"):
        run_simulation(bad, tmp_path, progress=False)
    assert not list(tmp_path.iterdir())


def test_simulate_command_prints_a_summary(ray_session, tmp_path):
    result = CliRunner().invoke(cli, ["simulate", "dice-race", "--agent", "random", "--players", "2",
                                      "--games", "30", "--chunk", "15", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    assert summary["games"] == 30 and summary["chunks_run"] == 2
    seat0 = summary["seats"]["0"]
    assert seat0["ci95"][0] <= seat0["mean"] <= seat0["ci95"][1]
    assert summary["seats"]["0"]["win_share"] + summary["seats"]["1"]["win_share"] == pytest.approx(1.0)

"""meeplelab simulate on Ray: loopback only, chunk independence, verified resume, the run lock,
a killed worker, clean --json, flat summaries."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from envs.core.errors import ConfigError
from experiments.cli.main import cli
from experiments.sim.chunks import RunLock, record_path
from experiments.sim.simulate import SimulationSpec, chunk_path, load_results, run_simulation, summarize

SPEC = SimulationSpec(game="dice-race", agents=["random", "random"], games=50, seed=3, chunk=10,
                      options={"players": 2})


def _files(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("chunk_*.parquet"))}


@pytest.fixture(scope="module")
def clean_run(ray_session, tmp_path_factory):
    """A reference run with one task at a time."""
    out = tmp_path_factory.mktemp("clean")
    result = run_simulation(SPEC, out, workers=1, progress=False)
    assert result.chunks_new == 5 and result.chunks_verified == 0 and not result.interrupted
    return out


def test_ray_runs_on_loopback(ray_session):
    from experiments.common.ray_setup import RAY_HOME, node_address

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


def test_a_run_that_moves_to_ray_half_way_writes_the_same_files(clean_run, tmp_path, monkeypatch, capsys):
    """Play-here-first: after the first chunk here, Ray plays the rest; the files do not change."""
    import experiments.sim.simulate as simulate_module

    monkeypatch.setattr(simulate_module.HereFirst, "move_to_ray", lambda self, left: self.count >= 2)
    result = run_simulation(SPEC, tmp_path, workers=2, progress=False)
    assert result.chunks_new == 5
    assert "simulate: 3 chunks left at" in capsys.readouterr().err
    assert _files(tmp_path) == _files(clean_run)


def test_resume_after_an_interrupted_run(clean_run, tmp_path):
    run_simulation(SPEC, tmp_path, workers=2, progress=False)
    # an interrupted run: two chunks never finished, one left a half-written temporary file
    chunk_path(tmp_path, 1).unlink()
    chunk_path(tmp_path, 4).unlink()
    (tmp_path / "chunk_00004.parquet.tmp").write_bytes(b"half a file")
    result = run_simulation(SPEC, tmp_path, workers=2, progress=False)
    assert (result.chunks_new, result.chunks_replayed, result.chunks_verified) == (0, 2, 3)
    assert _files(tmp_path) == _files(clean_run)
    assert not list(tmp_path.glob("*.tmp"))
    again = run_simulation(SPEC, tmp_path, workers=2, progress=False)
    assert (again.chunks_run, again.chunks_verified) == (0, 5)


def test_killed_worker_is_retried_with_the_same_result(clean_run, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "out"
    spec = SimulationSpec(**{**SPEC.__dict__, "games": 10})  # chunk 0 only
    result = run_simulation(spec, out, workers=1, progress=False, crash_once_dir=str(markers))
    assert [p.name for p in markers.iterdir()] == ["chunk_00000.crashed"]  # the first attempt died
    assert result.chunks_new == 1
    assert _files(out) == {"chunk_00000.parquet": _files(clean_run)["chunk_00000.parquet"]}


def test_a_different_simulation_in_the_same_directory_is_refused(clean_run):
    other = SimulationSpec(**{**SPEC.__dict__, "seed": 4})
    with pytest.raises(ConfigError, match="differs in: seed"):
        run_simulation(other, clean_run, progress=False)


def test_a_directory_of_an_older_format_is_refused(tmp_path):
    old = {**SPEC.manifest(), "format": "meeplelab-simulation/1"}
    (tmp_path / "simulation.json").write_text(json.dumps(old))
    with pytest.raises(ConfigError, match="format 'meeplelab-simulation/1', not meeplelab-simulation/2"):
        run_simulation(SPEC, tmp_path, progress=False)


def test_bad_agent_is_refused_before_any_task(tmp_path):
    bad = SimulationSpec(**{**SPEC.__dict__, "agents": ["random", "nosuch"]})
    with pytest.raises(ConfigError, match="unknown agent 'nosuch'"):
        run_simulation(bad, tmp_path, progress=False)
    assert not list(tmp_path.iterdir())


def test_simulate_command_prints_a_summary(ray_session, tmp_path):
    result = CliRunner().invoke(cli, ["simulate", "dice-race", "--agent", "random", "--players", "2",
                                      "--games", "30", "--chunk", "15", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["games"] == 30 and summary["chunks_new"] == 2
    seat0 = summary["seats"]["0"]
    assert seat0["ci95"][0] <= seat0["mean"] <= seat0["ci95"][1]
    assert summary["seats"]["0"]["win_share"] + summary["seats"]["1"]["win_share"] == pytest.approx(1.0)


def _copy_run(source, target):
    target.mkdir()
    for path in source.iterdir():
        if path.is_file() and not path.name.startswith("."):
            (target / path.name).write_bytes(path.read_bytes())


def test_resume_verifies_chunks_and_replays_the_bad_ones_by_name(clean_run, tmp_path):
    out = tmp_path / "run"
    _copy_run(clean_run, out)
    chunk_path(out, 2).write_bytes(chunk_path(out, 0).read_bytes())  # another chunk's file
    data = chunk_path(out, 3).read_bytes()
    chunk_path(out, 3).write_bytes(data[: len(data) // 2])  # truncated
    chunk_path(out, 4).write_bytes(b"")  # empty
    record_path(out, 1).unlink()  # a chunk whose record never got written
    result = run_simulation(SPEC, out, workers=2, progress=False)
    problems = {c.index: c.problem for c in result.problems}
    assert problems[2] == "holds chunk 0's file"
    assert "truncated" in problems[3] and problems[4] == "empty file" and "no record" in problems[1]
    assert (result.chunks_verified, result.chunks_replayed, result.chunks_new) == (1, 4, 0)
    assert _files(out) == _files(clean_run)
    assert summarize(SPEC, out)["games"] == 50


def test_an_altered_chunk_is_found_by_its_checksum(clean_run, tmp_path):
    out = tmp_path / "run"
    _copy_run(clean_run, out)
    frame = pd.read_parquet(chunk_path(out, 1))
    frame.loc[0, "total"] += 1  # same row count, one score changed
    frame.to_parquet(chunk_path(out, 1), index=False)
    result = run_simulation(SPEC, out, workers=1, progress=False)
    assert [(c.index, c.problem) for c in result.problems] in (
        [(1, "contents altered (checksum differs)")], [(1, "10 rows instead of 20")])
    assert _files(out) == _files(clean_run)


def test_a_second_run_into_the_same_directory_is_refused(clean_run, tmp_path):
    out = tmp_path / "run"
    _copy_run(clean_run, out)
    with RunLock(out):
        with pytest.raises(ConfigError, match="another simulate .* is writing to"):
            run_simulation(SPEC, out, progress=False)
    assert run_simulation(SPEC, out, progress=False).chunks_verified == 5  # free again once released


def test_summary_from_chunk_records_equals_the_summary_of_all_rows(clean_run):
    from experiments.eval import stats
    summary = summarize(SPEC, clean_run)
    frame = load_results(clean_run)
    for seat, rows in frame.groupby("seat"):
        full = stats.summarize(rows.total)
        entry = summary["seats"][seat]
        assert entry["mean"] == pytest.approx(full.mean) and entry["sd"] == pytest.approx(full.sd)
        assert entry["ci95"] == pytest.approx(full.ci95_t)
        assert (entry["min"], entry["max"]) == (full.min, full.max)
        assert entry["win_share"] == pytest.approx(rows.win.mean())
        cats = {c[4:]: rows[c].mean() for c in frame.columns if c.startswith("cat_")}
        assert entry["categories"] == pytest.approx(cats)


@pytest.mark.parametrize("workers", ["0", "-2"])
def test_workers_below_one_are_refused_by_every_command(workers, tmp_path):
    for args in (["simulate", "dice-race", "--players", "2", "--games", "4"],
                 ["eval", "dice-race", "--agents", "random", "--games", "2"],
                 ["solo-eval", "--game", "dice-race", "--games", "2"],
                 ["ladder", "dice-race", "--agents", "random,prefer:action=1"]):
        result = CliRunner().invoke(cli, [*args, "--workers", workers, "--out", str(tmp_path / args[0])])
        assert isinstance(result.exception, ConfigError), (args, result.output)
        assert f"--workers must be at least 1, got {workers}" in str(result.exception)
        assert not (tmp_path / args[0]).exists()


def test_ray_address_from_the_environment_is_used_and_a_dead_one_fails_fast(tmp_path, monkeypatch):
    import socket
    import time

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["simulate", "dice-race", "--players", "2", "--games", "4",
                                      "--out", str(tmp_path)])
    assert isinstance(result.exception, ConfigError), result.output
    assert f"no Ray cluster reachable at 127.0.0.1:{port}" in str(result.exception)
    assert time.monotonic() - started < 10


@pytest.mark.slow
def test_json_output_is_only_json_even_after_a_worker_died(tmp_path):
    import subprocess
    import sys

    from tests.experiments.conftest import REPO_ROOT

    markers = tmp_path / "markers"
    markers.mkdir()
    args = ["simulate", "cartographers", "--games", "20", "--chunk", "10", "--workers", "1", "--json",
            "--crash-once-dir", str(markers), "--out", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-m", "experiments.cli", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in markers.iterdir()) == ["chunk_00000.crashed", "chunk_00001.crashed"]
    summary = json.loads(done.stdout)  # nothing but the JSON document on stdout
    assert summary["games"] == 20 and summary["chunks_new"] == 2

"""Checkpoints survive a SIGKILL at any moment: written to a temporary folder and renamed; --resume
finishes or skips what a kill left, with one line (experiments/train/checkpoints.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from envs.core.errors import ConfigError
from experiments.train import expert_iteration, ppo
from experiments.train.checkpoints import recover, write_folder
from tests.experiments.train.test_ppo import tiny_config
from tests.paths import REPO_ROOT


def fake_checkpoint(folder: Path, iteration: int, state_file: str = ppo.STATE_FILE) -> Path:
    folder.mkdir(parents=True)
    (folder / "policy.pt").write_bytes(b"weights")
    (folder / state_file).write_text(json.dumps({"iteration": iteration}), encoding="utf-8")
    return folder


def tear(folder: Path, state_file: str = ppo.STATE_FILE) -> None:
    """What a kill during the state file's write leaves: the file cut short."""
    text = (folder / state_file).read_text(encoding="utf-8")
    (folder / state_file).write_text(text[: len(text) // 2], encoding="utf-8")


def test_write_folder_renames_into_place_and_replaces_a_save_of_the_same_name(tmp_path):
    final = tmp_path / "checkpoints" / "iter_000002"
    seen = []
    write_folder(final, lambda folder: seen.append(folder.name) or fake_checkpoint(folder / "x", 1))
    assert seen == [".tmp-iter_000002"] and (final / "x" / "policy.pt").is_file()
    write_folder(final, lambda folder: (folder / "new").write_text("2"))
    assert sorted(p.name for p in final.iterdir()) == ["new"]
    assert sorted(p.name for p in final.parent.iterdir()) == ["iter_000002"]  # nothing left beside it


def test_resume_skips_a_torn_checkpoint_in_one_line_and_finishes_a_renamed_one(tmp_path, capsys):
    root = tmp_path / "checkpoints"
    fake_checkpoint(root / "iter_000001", 1)
    fake_checkpoint(root / "iter_000002", 2)
    tear(fake_checkpoint(root / ".tmp-iter_000003", 3))  # killed while writing the trainer state
    assert ppo.resume_point(tmp_path) == root / "iter_000002"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "skipped the incomplete checkpoint" in err[0] and "iter_000003" in err[0]
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001", "iter_000002"]
    # killed between the end of the write and the rename: the folder is complete, it is used
    fake_checkpoint(root / ".tmp-iter_000004", 4)
    # killed between moving a save of the same name aside and renaming the new one in
    shutil.move(root / "iter_000002", root / ".old-iter_000002")
    assert ppo.resume_point(tmp_path) == root / "iter_000004"
    assert capsys.readouterr().err == ""
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001", "iter_000002", "iter_000004"]
    # a checkpoint damaged after it was written: moved aside, one line
    tear(root / "iter_000004")
    assert ppo.resume_point(tmp_path) == root / "iter_000002"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "torn checkpoint" in err[0] and (root / ".torn-iter_000004").is_dir()
    assert ppo.checkpoint_dirs(tmp_path) == [root / "iter_000001", root / "iter_000002"]


def test_a_run_killed_before_its_first_checkpoint_can_start_again(tmp_path, capsys):
    from experiments.train.cli import run_folder

    tear(fake_checkpoint(tmp_path / "checkpoints" / ".tmp-iter_000001", 1))
    with pytest.raises(ConfigError, match="stopped before its first one.*--out"):
        ppo.resume_point(tmp_path)
    assert "skipped the incomplete checkpoint" in capsys.readouterr().err
    tear(fake_checkpoint(tmp_path / "checkpoints" / ".tmp-iter_000001", 1))
    config = tiny_config()
    assert run_folder(config, None, str(tmp_path), ppo.resume_point, ppo.check_resumable) == tmp_path


def test_expert_iteration_checkpoints_are_renamed_into_place_and_torn_ones_skipped(tmp_path, capsys):
    import torch

    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from envs.core.registry import make_game
    from tests.experiments.train.test_expert_iteration import tiny_config as exit_config

    config = exit_config()
    torch.manual_seed(0)
    net = BoardPolicyValueNet(make_game("cartographers").layout(), NetConfig.from_dict(config["network"]))
    for generation in (-1, 0):
        expert_iteration.save_checkpoint(tmp_path, net, config, {"generation": generation})
    root = tmp_path / "checkpoints"
    assert sorted(p.name for p in root.iterdir()) == ["gen_000", "init"]
    assert (tmp_path / "policy.pt").is_file() and (tmp_path / "best" / "policy.pt").is_file()
    torn = shutil.copytree(root / "gen_000", root / ".tmp-gen_001")
    tear(torn, expert_iteration.STATE_FILE)
    assert expert_iteration.resume_point(tmp_path) == root / "gen_000"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gen_001" in err[0]
    assert expert_iteration.load_network(root / "gen_000" / "policy.pt", config) is not None


def test_recover_without_a_checkpoints_folder_does_nothing(tmp_path):
    recover(tmp_path / "checkpoints", ppo.is_complete)
    assert not (tmp_path / "checkpoints").exists()


# ---- real runs killed with SIGKILL ----------------------------------------------------------

def train_command(config_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "experiments.cli", "train", "cartographers", "--config", str(config_path),
            "--init", "none", *args]


def run_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "80"}


def test_killed_right_after_start_resume_says_so_and_out_starts_again(tmp_path):
    config_path = tmp_path / "c.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config(run={"eval_every": 0})))
    out = tmp_path / "run"
    proc = subprocess.Popen(train_command(config_path, "--out", str(out)), cwd=REPO_ROOT, env=run_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not (out / "config.yaml").is_file():
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert not ppo.checkpoint_dirs(out)
    done = subprocess.run(train_command(config_path, "--resume", str(out)), cwd=REPO_ROOT, env=run_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith(f"start it again with --out {out}")
    from experiments.train.cli import run_folder
    assert run_folder(tiny_config(), None, str(out), ppo.resume_point, ppo.check_resumable) == out


@pytest.mark.slow
def test_killed_mid_run_and_mid_checkpoint_resumes_from_the_last_complete_one(tmp_path):
    config_path = tmp_path / "c.yaml"
    config_path.write_text(yaml.safe_dump(tiny_config(run={"eval_every": 0, "checkpoint_every": 1})))
    out = tmp_path / "run"
    proc = subprocess.Popen(train_command(config_path, "--out", str(out), "--iterations", "100"),
                            cwd=REPO_ROOT, env=run_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and len(ppo.checkpoint_dirs(out)) < 2:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)  # mid-run: during an iteration or a checkpoint write
    proc.wait(timeout=30)
    root = out / "checkpoints"
    last = max(json.loads((p / ppo.STATE_FILE).read_text())["iteration"]
               for p in root.iterdir() if ppo.is_complete(p))
    for leftover in root.glob(".*"):  # a write the kill interrupted, if any: resume deals with it
        shutil.rmtree(leftover)
    # a kill during the next checkpoint's write: its temporary folder with a cut-short state file
    torn = shutil.copytree(root / f"iter_{last:06d}", root / f".tmp-iter_{last + 1:06d}")
    tear(torn)
    done = subprocess.run(train_command(config_path, "--resume", str(out), "--iterations", str(last + 1),
                                        "--json"),
                          cwd=REPO_ROOT, env=run_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["iteration"] == last + 1
    notes = [line for line in done.stderr.splitlines() if "skipped" in line]
    assert len(notes) == 1 and f"iter_{last + 1:06d}" in notes[0], done.stderr
    assert not list(root.glob(".*"))
    assert json.loads((root / f"iter_{last + 1:06d}" / ppo.STATE_FILE).read_text())["iteration"] == last + 1

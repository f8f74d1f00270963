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
from experiments.train import distill, expert_iteration, ppo
from experiments.train.checkpoints import recover, write_folder
from tests.envs.core.test_textfile import ALIAS_BOMB
from tests.experiments.cli.test_errors import assert_one_line_error, run_cli
from tests.experiments.train import test_expert_iteration as exit_tests
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


# ---- the saved config a resume is checked against -------------------------------------------

@pytest.mark.parametrize("algo", ["ppo", "expert-iteration"])
def test_resume_refuses_a_run_folder_without_its_config_or_with_a_hostile_one(capsys, tmp_path, algo):
    """A folder with checkpoints but no config.yaml cannot be checked against the config: refused in one
    line naming the folder and the file (it used to be resumed unchecked); an alias bomb, a list and a
    config of another network are refused too, and the run's own config is accepted."""
    from experiments.train.cli import run_folder

    module = ppo if algo == "ppo" else expert_iteration
    config = tiny_config() if algo == "ppo" else exit_tests.tiny_config()
    config_path = tmp_path / "c.yaml"
    config_path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    fake_checkpoint(run_dir / "checkpoints" / ("iter_000001" if algo == "ppo" else "gen_000"), 1,
                    module.STATE_FILE)
    args = ["train", "cartographers", "--algo", algo, "--config", str(config_path), "--resume", str(run_dir)]
    saved = run_dir / "config.yaml"
    code, _, err = run_cli(capsys, args)
    assert_one_line_error(code, err, f"--resume {run_dir}: the run folder has no config.yaml",
                          f"restore {saved}")
    assert sorted(p.name for p in run_dir.iterdir()) == ["checkpoints"]  # nothing made
    other = {**config, "network": {**config["network"], "width": 12}}
    for text, fragments in [
        ("game: cartographers\n" + ALIAS_BOMB, ("aliases expand to more than", "refused")),
        ("- game\n- network\n", ("is not a mapping of config sections (got list)",)),
        (yaml.safe_dump(other), ("the config's network", "differs from the run's")),
    ]:
        saved.write_text(text)
        code, _, err = run_cli(capsys, args)
        assert_one_line_error(code, err, f"--resume {run_dir}", str(saved), *fragments)
        assert saved.read_text() == text
    saved.write_text(yaml.safe_dump(config))
    assert run_folder(config, str(run_dir), None, module.resume_point, module.check_resumable) == run_dir


def test_distill_resume_refuses_a_run_folder_without_its_state(tmp_path):
    """distill keeps its config in state.json (read through the same hostile-file checks)."""
    from tests.experiments.train.test_distill import tiny_config as distill_config

    run_dir = tmp_path / "run"
    (run_dir / "checkpoints" / "iter_000").mkdir(parents=True)
    with pytest.raises(ConfigError) as info:
        distill.check_resumable(distill_config(), run_dir)
    assert str(info.value) == f"{str(run_dir)!r} holds no distillation run (no {distill.STATE_FILE})"


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


#: ``python -c`` this, NAME, then the ``meeplelab`` arguments: the CLI, whose checkpoint NAME stops for
#: good right after its temporary folder is made (so a test can SIGKILL the run while it is there)
HOLD_CHECKPOINT = """
import sys, time
from experiments.train import expert_iteration

real, name = expert_iteration.write_folder, sys.argv[1]

def write_folder(final, write):
    def held(folder):
        if final.name == name:
            time.sleep(600)
        write(folder)
    return real(final, held)

expert_iteration.write_folder = write_folder
from experiments.cli.main import main
sys.argv = ["meeplelab", *sys.argv[2:]]
main()
"""


def exit_generation(folder: Path) -> int:
    return json.loads((folder / expert_iteration.STATE_FILE).read_text())["generation"]


def wait_for(condition, seconds: float, proc: subprocess.Popen) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and not condition():
        assert proc.poll() is None, f"the run ended (exit code {proc.returncode}) before the test killed it"
        time.sleep(0.1)
    assert condition(), f"not reached in {seconds} s"


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL


@pytest.mark.slow
def test_expert_iteration_killed_mid_run_and_mid_checkpoint_resumes_from_the_last_complete_one(tmp_path):
    config = exit_tests.tiny_config(gating={"enabled": False}, selfplay={"workers": 1},
                                    run={"eval_every": 0, "generations": 50})
    config_path = tmp_path / "c.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out, root = tmp_path / "run", tmp_path / "run" / "checkpoints"

    def command(*args: str) -> list[str]:
        return train_command(config_path, "--algo", "expert-iteration", *args)

    def complete(name: str) -> bool:
        return expert_iteration.is_complete(root / name)

    # 1. a real run, killed once its first generation's checkpoint is there (at whatever it does then)
    proc = subprocess.Popen(command("--out", str(out)), cwd=REPO_ROOT, env=run_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: complete("gen_000"), 300, proc)
    kill(proc)
    # --resume continues after the newest complete checkpoint (a complete temporary folder a kill left just
    # before its rename counts: it is the newest save of its name)
    first = max(exit_generation(p) for p in root.iterdir() if expert_iteration.is_complete(p))
    assert first >= 0
    history = next(json.loads((p / expert_iteration.STATE_FILE).read_text())["history"]
                   for p in root.iterdir() if expert_iteration.is_complete(p) and exit_generation(p) == first)
    # 2. resumed, then killed while the checkpoint after its first generation is being written
    held = f"gen_{first + 2:03d}"
    holding = [sys.executable, "-c", HOLD_CHECKPOINT, held, *command("--resume", str(out))[3:]]
    proc = subprocess.Popen(holding, cwd=REPO_ROOT, env=run_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for(lambda: (root / f".tmp-{held}").is_dir(), 300, proc)
    kill(proc)
    assert complete(f"gen_{first + 1:03d}") and not complete(f".tmp-{held}") and not (root / held).exists()
    resumed = json.loads((root / f"gen_{first + 1:03d}" / expert_iteration.STATE_FILE).read_text())
    assert resumed["history"][:first + 1] == history  # step 1's generations, continued
    # 3. resumed again: the torn checkpoint is skipped with one line, the run goes on from the one before
    done = subprocess.run(command("--resume", str(out), "--generations", str(first + 3), "--json"),
                          cwd=REPO_ROOT, env=run_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["generation"] == first + 2 and summary["stopped_by"] == "generations"
    notes = [line for line in done.stderr.splitlines() if "skipped" in line]
    assert len(notes) == 1 and "incomplete checkpoint" in notes[0] and held in notes[0], done.stderr
    assert not list(root.glob(".*"))
    final = json.loads((root / held / expert_iteration.STATE_FILE).read_text())
    assert final["generation"] == first + 2
    assert [h["generation"] for h in final["history"]] == list(range(first + 3))
    assert final["history"][:first + 2] == resumed["history"]


# ---- a full disk ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_ppo_on_a_full_disk_keeps_the_last_checkpoint_and_resumes(ray_session, capsys, tmp_path, monkeypatch):
    """The disk fills while a checkpoint is written: one line naming it, the earlier checkpoint whole,
    no temporary folder left; once space is freed, --resume carries on from the earlier one."""
    import yaml

    from experiments.common import writes
    from experiments.train.ppo import is_complete
    from tests.experiments.cli.test_errors import run_cli
    from tests.experiments.common.test_writes import Disk
    from tests.experiments.train.test_ppo import tiny_config

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config()))
    out = tmp_path / "run"
    train = ["train", "cartographers", "--config", str(config), "--init", "none", "--out", str(out)]
    assert run_cli(capsys, [*train, "--iterations", "1"])[0] == 0
    disk = Disk()
    monkeypatch.setattr(writes, "_write", disk.write)
    disk.full_for = "trainer_state.json.tmp"
    code, _, err = run_cli(capsys, [*train, "--resume", str(out), "--iterations", "2"])
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and "Traceback" not in err, err
    assert len(errors) == 1 and "no space left on device while writing" in errors[0], err
    assert str(out / "checkpoints" / "iter_000002") in errors[0]
    root = out / "checkpoints"
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001"] and is_complete(root / "iter_000001")
    disk.free()
    code, _, err = run_cli(capsys, [*train, "--resume", str(out), "--iterations", "2"])
    assert code == 0, err
    assert is_complete(root / "iter_000002")

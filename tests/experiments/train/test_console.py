"""The training console: library noise in OUT/library.log, progress lines within the width, a warm
start that shows its progress and that --init none skips (experiments/train/console.py)."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import warnings

import pytest
import yaml
from click.testing import CliRunner

from experiments.train.console import console, fit_line, library_log
from experiments.train.imitation import NO_INIT, parse_init
from experiments.train.ppo import progress_fields
from tests.experiments.train.test_ppo import tiny_config
from tests.paths import REPO_ROOT

#: what Ray, RLlib and friends print that a newcomer reads as errors
NOISE = re.compile(r"core_worker|max_restarts|DeprecationWarning|gputil|WARNING|new API stack|"
                   r"UserWarning|Traceback")
EVALUATION = {"mean_evaluation": 81.25, "diff_vs_greedy": -12.5, "diff_vs_greedy_ci_low": -20.25,
              "diff_vs_greedy_ci_high": -4.75}
HEAD = {"return": 77.5, "entropy": 3.21, "kl": 0.0123, "vf_explained_var": 0.5}


def test_progress_line_fits_the_width_keeping_the_important_fields():
    state = {"iteration": 1234, "timesteps": 2_500_000}
    fields = progress_fields(state, 3_000_000, HEAD, 12_345.0, EVALUATION, 3725.0)
    for width in (40, 60, 79, 119):
        line = fit_line(fields, width)
        assert len(line) <= width and line.startswith("train 2,500,000/3,000,000"), (width, line)
    assert "it 1234" in fit_line(fields, 79) and "return 77.5" in fit_line(fields, 79)
    assert fit_line(fields, 79).count("eval") == 1
    wide = fit_line(fields, 500)
    assert all(field in wide for field in fields) and "62:05" in wide and "CI [-20.2, -4.8]" in wide
    assert fit_line(["x" * 100, "y"], 30) == "x" * 30
    assert "eval" not in fit_line(progress_fields(state, 3_000_000, HEAD, 1.0, None, 0.0), 500)


def test_library_output_goes_to_the_log_and_project_lines_to_the_console(tmp_path, capfd):
    with library_log(tmp_path) as path:
        os.write(2, b"[E core_worker.cc:2465] Actor ... max_restarts > 0\n")  # how Ray's C++ writes
        warnings.warn("a library's UserWarning", UserWarning, stacklevel=1)
        logging.getLogger("some.library").warning("Install gputil for GPU system monitoring.")
        print("project line", file=console(), flush=True)
        print("project stdout line", flush=True)
    os.write(2, b"after\n")
    text = path.read_text(encoding="utf-8")
    for fragment in ("core_worker.cc", "a library's UserWarning", "Install gputil"):
        assert fragment in text, fragment
    assert "project" not in text and "after" not in text
    captured = capfd.readouterr()
    assert "project line" in captured.err and "after" in captured.err
    assert "project stdout line" in captured.out
    assert not NOISE.search(captured.out + captured.err)
    assert console() is sys.stderr  # the terminal again


def test_init_none_parses_and_help_says_what_timesteps_count():
    from experiments.train.cli import train

    assert parse_init("none") == (NO_INIT, "")
    with pytest.raises(Exception, match="or none"):
        parse_init("greedy")
    text = " ".join(CliRunner().invoke(train, ["--help"], terminal_width=200).output.split())
    assert "--init none skips it" in text and "PPO only" in text and "warm start" in text
    assert "none (fresh weights: skips the config's warm start)" in text


@pytest.mark.slow
def test_a_short_training_console_has_no_library_noise_and_fits_80_columns(tmp_path):
    config = tiny_config(imitation={"teacher": "greedy", "games": 4, "epochs": 1, "workers": 2},
                         run={"eval_every": 1})
    config_path = tmp_path / "c.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "experiments.cli", "train", "cartographers", "--config",
                           str(config_path), "--out", str(out), "--iterations", "2"], cwd=REPO_ROOT,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "80"},
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not NOISE.search(done.stdout + done.stderr), done.stdout + done.stderr
    assert "warm start: greedy plays 4 teacher games, then 1 imitation epochs" in done.stdout
    assert "imitation epoch 1/1" in done.stdout and "teacher greedy" in done.stderr
    assert "library.log" in done.stderr
    progress = [line for line in done.stdout.splitlines() if line.startswith("train ")]
    assert progress and all(len(line) <= 80 for line in progress), progress
    log = (out / "library.log").read_text(encoding="utf-8")
    assert "new API stack" in log or "core_worker" in log

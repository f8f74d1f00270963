"""``meeplelab train GAME --config configs/ppo/<name>.yaml``: the command-line front of
:mod:`experiments.train` (options override the config; the run folder is ``--out``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from envs.core.errors import ConfigError
from experiments.output_dir import prepare_out_dir
from experiments.ray_options import address_option
from experiments.train_config import load_config


@click.command()
@click.argument("game")
@click.option("--config", "config_path", required=True, help="Training config (configs/ppo/*.yaml).")
@click.option("--timesteps", type=int, default=None, help="Stop after this many sampled env steps.")
@click.option("--time-budget", type=float, default=None,
              help="Stop PPO after this many seconds of it (the warm start not counted).")
@click.option("--wall-budget", type=float, default=None,
              help="Stop PPO once the whole command, warm start included, has run this many seconds.")
@click.option("--resume", "resume", type=click.Path(), default=None,
              help="Continue the run in this folder from its last checkpoint.")
@click.option("--out", type=click.Path(), default=None, help="Run folder (default runs/train/<config name>).")
@address_option
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", help="Learner device.")
@click.option("--seed", type=int, default=None, help="Training seed (default: run.seed of the config).")
@click.option("--init", "init", default=None,
              help="Warm start: teacher:<agent spec> (imitation before PPO, e.g. teacher:greedy) or "
                   "policy:<policy.pt or run folder> (continue from a trained network).")
@click.option("--iterations", type=int, default=None, help="Stop after this many PPO iterations.")
@click.option("--json", "as_json", is_flag=True, help="Print the final trainer state as JSON.")
def train(game: str, config_path: str, timesteps: int | None, time_budget: float | None,
          wall_budget: float | None, resume: str | None,
          out: str | None, address: str | None, device: str, seed: int | None, init: str | None,
          iterations: int | None, as_json: bool) -> None:
    """Train a masked-PPO network for GAME with Ray RLlib (TensorBoard, checkpoints, evaluation)."""
    config = load_config(config_path)
    if config["game"] != game.strip().lower():
        raise ConfigError(f"config {config_path!r} is for {config['game']}, not {game}")
    for name, value in (("--timesteps", timesteps), ("--iterations", iterations)):
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be >= 1, got {value}")
    for name, seconds in (("--time-budget", time_budget), ("--wall-budget", wall_budget)):
        if seconds is not None and not seconds > 0:
            raise ConfigError(f"{name} must be > 0 seconds, got {seconds}")
    if seed is not None and seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    if init is not None:
        from experiments.imitation import parse_init

        parse_init(init)
    if resume and out and Path(resume) != Path(out):
        raise ConfigError("--resume names the run folder to continue; give it without --out")
    run_dir = Path(resume or out or Path("runs") / "train" / config["name"])
    from experiments.train import check_resumable, resume_point, run_training

    if resume:
        resume_point(run_dir)  # a folder without a complete checkpoint fails here, before anything is made
        check_resumable(config, run_dir)
    elif (run_dir / "checkpoints").is_dir():
        raise ConfigError(f"{str(run_dir)!r} already holds a training run: continue it with --resume "
                          f"{run_dir}, or give another --out")
    prepare_out_dir(run_dir, "--resume" if resume else "--out")

    state = run_training(config, run_dir, resume=bool(resume), timesteps=timesteps, time_budget=time_budget,
                         wall_budget=wall_budget, address=address, device=device, seed=seed, init=init,
                         progress=not as_json, max_iterations=iterations)
    summary = {k: state[k] for k in ("iteration", "timesteps", "best_score", "stopped_by")}
    summary["evaluations"] = state["evaluations"][-1:] if state["evaluations"] else []
    summary["out"] = str(run_dir)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"trained {state['iteration']} iterations, {state['timesteps']:,} env steps "
                   f"({state['stopped_by']}); checkpoints in {run_dir / 'checkpoints'}; "
                   f"agent: ppo:{run_dir}")

"""``meeplelab train GAME --config configs/ppo/<name>.yaml``: the command-line front of
:mod:`experiments.train.ppo` (options override the config; the run folder is ``--out``).

``--algo expert-iteration --config configs/exit/<name>.yaml`` runs :mod:`experiments.train.expert_iteration`
instead (its own options: ``--generations``; the PPO budgets and ``--device`` are refused), and
``--algo distill --config configs/distill/<name>.yaml`` :mod:`experiments.train.distill` (a linear
candidate model fitted to search labels; ``--iterations`` counts its iterations), and ``--algo
afterstate --config configs/afterstate/<name>.yaml`` the same loop on self-play returns."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from envs.core.errors import ConfigError
from envs.core.install import require
from experiments.common.output_dir import prepare_out_dir
from experiments.common.ray_options import address_option
from experiments.train import distill, expert_iteration
from experiments.train.checkpoints import is_hidden
from experiments.train.config import load_config
from experiments.train.console import library_log
from experiments.train.distill_config import load_config as load_distill_config
from experiments.train.exit_config import load_config as load_exit_config
from experiments.train.imitation import parse_init
from experiments.train.ppo import check_resumable, resume_point, run_training

ALGOS = ("ppo", "expert-iteration", "distill", "afterstate")


@click.command()
@click.argument("game")
@click.option("--config", "config_path", required=True,
              help="Training config (configs/ppo/*.yaml; configs/exit/*.yaml for expert iteration; "
                   "configs/distill/*.yaml for distill; configs/afterstate/*.yaml for afterstate).")
@click.option("--algo", default="ppo", show_default=True,
              help="ppo, expert-iteration, distill (a linear candidate model fitted to search labels) or "
                   "afterstate (the same model fitted to its own self-play returns).")
@click.option("--generations", type=int, default=None,
              help="Expert iteration: the run's total number of generations (default run.generations).")
@click.option("--timesteps", type=int, default=None,
              help="PPO: stop after this many sampled env steps (default run.timesteps). They count "
                   "PPO only: the warm start before it (the config's imitation: teacher games and epochs) "
                   "is extra; --init none skips it.")
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
              help="Warm start: teacher:<agent spec> (imitation before PPO, e.g. teacher:greedy), "
                   "policy:<policy.pt or run folder> (continue from a trained network) or none (fresh "
                   "weights: skips the config's warm start). Default: the config's imitation.teacher "
                   "(expert iteration: its init).")
@click.option("--iterations", type=int, default=None,
              help="Stop after this many PPO iterations (distill: the run's total iterations).")
@click.option("--json", "as_json", is_flag=True, help="Print the final trainer state as JSON.")
def train(game: str, config_path: str, algo: str, generations: int | None, timesteps: int | None,
          time_budget: float | None, wall_budget: float | None, resume: str | None,
          out: str | None, address: str | None, device: str, seed: int | None, init: str | None,
          iterations: int | None, as_json: bool) -> None:
    """Train an agent for GAME: masked PPO with Ray RLlib, expert iteration, or distill (``--algo``)."""
    require("torch", "ray", "tensorboard", extra="rl")
    if algo not in ALGOS:
        raise ConfigError(f"--algo must be one of {', '.join(ALGOS)}, got {algo!r}")
    if algo in ("distill", "afterstate"):
        given = {"--timesteps": timesteps, "--time-budget": time_budget, "--wall-budget": wall_budget,
                 "--generations": generations, "--init": init, "--seed": seed,
                 "--device": None if device == "cpu" else device}
        refused = [name for name, value in given.items() if value is not None]
        if refused:
            raise ConfigError(f"{', '.join(refused)}: not an option of --algo {algo} (it takes "
                              "--iterations; the seeds are the config's run.seed and run.first_seed)")
        train_distill(game, config_path, iterations, resume, out, address, as_json, algo)
        return
    if algo == "expert-iteration":
        given = {"--timesteps": timesteps, "--time-budget": time_budget, "--wall-budget": wall_budget,
                 "--iterations": iterations, "--device": None if device == "cpu" else device}
        refused = [name for name, value in given.items() if value is not None]
        if refused:
            raise ConfigError(f"{', '.join(refused)}: PPO option(s), not for --algo expert-iteration "
                              "(it takes --generations)")
        train_expert_iteration(game, config_path, generations, resume, out, address, seed, init, as_json)
        return
    if generations is not None:
        raise ConfigError("--generations is an expert-iteration option (--algo expert-iteration)")
    config = load_config(config_path)
    check_run_options(config, config_path, game, {"--timesteps": timesteps, "--iterations": iterations},
                      seed, init)
    for name, seconds in (("--time-budget", time_budget), ("--wall-budget", wall_budget)):
        if seconds is not None and not seconds > 0:
            raise ConfigError(f"{name} must be > 0 seconds, got {seconds}")
    run_dir = run_folder(config, resume, out, resume_point, check_resumable)
    with quiet_libraries(run_dir, as_json):
        state = run_training(config, run_dir, resume=bool(resume), timesteps=timesteps,
                             time_budget=time_budget, wall_budget=wall_budget, address=address, device=device,
                             seed=seed, init=init, progress=not as_json, max_iterations=iterations)
    summary = {k: state[k] for k in ("iteration", "timesteps", "best_score", "stopped_by")}
    summary["evaluations"] = state["evaluations"][-1:] if state["evaluations"] else []
    summary["out"] = str(run_dir)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"trained {state['iteration']} iterations, {state['timesteps']:,} env steps "
                   f"({state['stopped_by']}); checkpoints in {run_dir / 'checkpoints'}; "
                   f"agent: ppo:{run_dir}")


def check_run_options(config: dict[str, Any], config_path: str, game: str, counts: dict[str, int | None],
                      seed: int | None, init: str | None) -> None:
    """The config is for GAME, every count given is >= 1, the seed >= 0 and ``--init`` well formed."""
    if config["game"] != game.strip().lower():
        raise ConfigError(f"config {config_path!r} is for {config['game']}, not {game}")
    for name, value in counts.items():
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be >= 1, got {value}")
    if seed is not None and seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    if init is not None:
        parse_init(init)


def run_folder(config: dict[str, Any], resume: str | None, out: str | None,
               resume_point: Callable[[Path], Any],
               check_resumable: Callable[[dict[str, Any], Path], None]) -> Path:
    """The run folder: ``--resume`` (with a complete checkpoint and a config it can follow) or a
    new ``--out`` (default runs/train/<config name>) that holds no run yet; created here."""
    if resume and out and Path(resume) != Path(out):
        raise ConfigError("--resume names the run folder to continue; give it without --out")
    run_dir = Path(resume or out or Path("runs") / "train" / config["name"])
    if resume:
        resume_point(run_dir)  # a folder without a complete checkpoint fails here, before anything is made
        check_resumable(config, run_dir)
    elif any(not is_hidden(p) for p in _entries(run_dir / "checkpoints")):
        raise ConfigError(f"{str(run_dir)!r} already holds a training run: continue it with --resume "
                          f"{run_dir}, or give another --out")
    prepare_out_dir(run_dir, "--resume" if resume else "--out")
    return run_dir


def _entries(folder: Path) -> list[Path]:
    return list(folder.iterdir()) if folder.is_dir() else []


@contextmanager
def quiet_libraries(run_dir: Path, as_json: bool) -> Iterator[None]:
    """Ray, RLlib and Python warnings into ``run_dir/library.log`` while training (a line after a
    finished run says where; an error stays one line)."""
    with library_log(run_dir) as path:
        yield
    if not as_json:
        click.echo(f"library messages (Ray, RLlib, warnings): {path}", err=True)


def train_expert_iteration(game: str, config_path: str, generations: int | None, resume: str | None,
                           out: str | None, address: str | None, seed: int | None, init: str | None,
                           as_json: bool) -> None:
    """``train --algo expert-iteration``: check the options, run, print a summary."""
    config = load_exit_config(config_path)
    check_run_options(config, config_path, game, {"--generations": generations}, seed, init)
    run_dir = run_folder(config, resume, out, expert_iteration.resume_point, expert_iteration.check_resumable)
    with quiet_libraries(run_dir, as_json):
        state = expert_iteration.run_expert_iteration(
            config, run_dir, resume=bool(resume), generations=generations, address=address, seed=seed,
            init=init, progress=not as_json)
    history = state["history"]
    summary = {"generation": state["generation"], "stopped_by": state["stopped_by"],
               "accepted": sum(bool(h["accepted"]) for h in history), "last": history[-1:],
               "evaluations": state["evaluations"][-1:], "out": str(run_dir)}
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        search = config["search"].replace("{policy}", str(run_dir))
        click.echo(f"expert iteration: {state['generation'] + 1} generations ({state['stopped_by']}), "
                   f"{summary['accepted']} of {len(history)} candidates accepted; checkpoints in "
                   f"{run_dir / 'checkpoints'}; agents: ppo:{run_dir}, {search}")


def train_distill(game: str, config_path: str, iterations: int | None, resume: str | None, out: str | None,
                  address: str | None, as_json: bool, algo: str = "distill") -> None:
    """``train --algo distill`` (or ``afterstate``): check the options, run, print a summary."""
    config = load_distill_config(config_path)
    wanted = "returns" if algo == "afterstate" else "playouts"
    if config["label"]["targets"] != wanted:
        other = "afterstate" if algo == "distill" else "distill"
        raise ConfigError(f"{config_path}: label.targets {config['label']['targets']} is a config for "
                          f"--algo {other}, not --algo {algo}")
    check_run_options(config, config_path, game, {"--iterations": iterations}, None, None)
    run_dir = run_folder(config, resume, out, distill.resume_point, distill.check_resumable)
    with quiet_libraries(run_dir, as_json):
        state = distill.run_distill(config, run_dir, resume=bool(resume), address=address,
                                    iterations=iterations, progress=not as_json)
    summary = {"iteration": state["iteration"], "best": state["best"], "out": str(run_dir)}
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        best = state["best"] or {}
        click.echo(f"{algo}: {state['iteration'] + 1} iterations; best on dev: {best.get('diff', 0.0):+.2f} "
                   f"over greedy {config['label']['preset']}; checkpoints in {run_dir / 'checkpoints'}; "
                   f"agent: learned:{run_dir}")

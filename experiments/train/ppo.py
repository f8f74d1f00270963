"""``meeplelab train GAME --config configs/ppo/<name>.yaml``: PPO on RLlib with masked actions.

Reads top to bottom: load and validate the config, start Ray (``init_ray``: loopback unless
``--address``), build the PPO algorithm around the project's masking RLModule, optionally warm
start it from a teacher (imitation), then loop: one ``algo.train()`` per iteration, every numeric
result to TensorBoard, a progress line, a paired evaluation and a checkpoint every K iterations,
the league's promotion check for multiplayer games. Ctrl-C (SIGINT) finishes the iteration,
saves a checkpoint and exits cleanly; ``--resume DIR`` continues from the last checkpoint with
the same weights, optimizer state, iteration count, league and RNG state.

Output folder::

    OUT/config.yaml               the validated config (what --resume rebuilds from)
    OUT/events.out.tfevents.*     TensorBoard
    OUT/checkpoints/iter_000010/  RLlib checkpoint + trainer_state.json + policy.pt
    OUT/policy.pt                 the latest network (torch only; ``ppo:OUT`` loads best/ first)
    OUT/best/policy.pt            the best network by evaluation score
    OUT/league/member_K.pt        league snapshots (multiplayer)
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import signal
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rich.progress import Progress, TextColumn

from envs.cartographers import env as cartographers_env
from envs.cascadia import env as cascadia_env
from envs.core.errors import ConfigError
from envs.core.textfile import parse_yaml, read_text
from envs.dorfromantik import env as dorfromantik_env
from experiments.common.ray_setup import init_ray
from experiments.common.writes import copy_atomic, write_atomic
from experiments.train.candidates import (
    candidate_env_config,
    initial_theta,
    make_candidate_env,
    max_candidates,
)
from experiments.train.checkpoints import is_hidden, recover, state_is_complete, write_folder
from experiments.train.config import is_candidate_config, is_multiplayer
from experiments.train.console import fit_line
from experiments.train.evaluation import TrainingEvaluator
from experiments.train.imitation import NO_INIT, load_initial_policy, warm_start
from experiments.train.weights import (
    MAIN_MODULE,
    get_module_weights,
    module_ids,
    save_policy_file,
    trained_module_id,
)

STATE_FILE = "trainer_state.json"


# ---- building the algorithm ---------------------------------------------------------------

def env_class(game: str, multi_agent: bool) -> type:
    """The Gymnasium (or multi-agent) env class of ``game``."""
    if game == "cartographers":
        return (cartographers_env.CartographersMultiAgentEnv if multi_agent
                else cartographers_env.CartographersEnv)
    if game == "cascadia":
        return cascadia_env.CascadiaMultiAgentEnv if multi_agent else cascadia_env.CascadiaEnv
    if game == "dorfromantik":
        return dorfromantik_env.DorfromantikMultiAgentEnv if multi_agent else dorfromantik_env.DorfromantikEnv
    raise ConfigError(f"unknown game {game!r}; known games: cartographers, cascadia, dorfromantik")


def vector_creator(game: str, players: int) -> Any | None:
    """A natively batched vector-env creator for the game, where one exists (solo games)."""
    if players != 1:
        return None
    target = {"cartographers": "envs.cartographers.vector_env", "cascadia": "envs.cascadia.vector_env",
              "dorfromantik": "envs.dorfromantik.vector_env"}.get(game)
    if target is None:
        return None
    try:
        return getattr(importlib.import_module(target), "make_vector_env", None)
    except ModuleNotFoundError:
        return None


def model_config(config: dict[str, Any]) -> dict[str, Any]:
    """The RLModule's ``model_config``; a candidate network's also holds its starting ``theta``
    (read here, so no env runner reads a model file)."""
    out = {"game": config["game"], "game_options": dict(config["game_options"]),
           "net": dict(config["network"])}
    if is_candidate_config(config):
        out["theta"] = initial_theta(config).tolist()
    return out


def build_algorithm(config: dict[str, Any], seed: int, device: str = "cpu"):
    """A PPO algorithm for the config (Ray must be initialised)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.ppo.rl_module import MaskedBoardPPOModule, MaskedCandidatePPOModule

    game_options = dict(config["game_options"])
    players = int(game_options.get("players", 1))
    multi = is_multiplayer(config)
    res, ppo = config["resources"], config["ppo"]
    env_config = {**game_options, "reward": config["env"]["reward"]}
    if config["game"] == "dorfromantik" and players > 1:
        env_config["shared_reward"] = True
    candidates = is_candidate_config(config)
    module_class = MaskedCandidatePPOModule if candidates else MaskedBoardPPOModule
    spec = RLModuleSpec(module_class=module_class, model_config=model_config(config))
    algo_config = PPOConfig().debugging(seed=seed)
    runners: dict[str, Any] = {"num_env_runners": res["num_env_runners"],
                               "num_envs_per_env_runner": res["num_envs_per_env_runner"]}
    # the batched vector envs pay the score reward only; other rewards take Gymnasium's per-env loop
    batched = config["env"]["vectorized"] and config["env"]["reward"] == "score"
    creator = vector_creator(config["game"], players) if batched else None
    if multi:
        from experiments.train.league import policy_mapping_fn

        env_config.setdefault("illegal_action", "penalize")
        if candidates:  # the league over the multi-agent env's candidate mode
            env_config.update(action_space="candidates", max_candidates=max_candidates(config))
        algo_config = algo_config.environment(env_class(config["game"], True), env_config=env_config,
                                              disable_env_checking=True)
        ids = module_ids(config)
        algo_config = algo_config.multi_agent(policies=set(ids), policy_mapping_fn=policy_mapping_fn,
                                              policies_to_train=[MAIN_MODULE])
        algo_config = algo_config.rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={mid: spec for mid in ids}))
    elif candidates:  # the single-agent candidate env (other seats: env.opponent)
        from ray import tune

        name = f"meeplelab-{config['game']}-candidates"
        tune.register_env(name, partial(make_candidate_env, env_class(config["game"], False)))
        algo_config = algo_config.environment(name, env_config=candidate_env_config(config))
        algo_config = algo_config.rl_module(rl_module_spec=spec)
    else:
        if creator is not None:
            from ray import tune

            name = f"meeplelab-{config['game']}-vector"
            tune.register_env(name, creator)
            algo_config = algo_config.environment(name, env_config=env_config)
            runners["gym_env_vectorize_mode"] = "vector_entry_point"
        else:
            algo_config = algo_config.environment(env_class(config["game"], False), env_config=env_config)
        algo_config = algo_config.rl_module(rl_module_spec=spec)
    gpus = res["num_gpus_per_learner"] if device == "cuda" else 0
    if device == "cuda" and gpus == 0:
        gpus = 1
    algo_config = (algo_config.env_runners(**runners)
                   .learners(num_learners=res["num_learners"], num_gpus_per_learner=gpus)
                   .training(lr=ppo["lr"], gamma=ppo["gamma"], lambda_=ppo["lambda"],
                             clip_param=ppo["clip_param"],
                             entropy_coeff=ppo["entropy_coeff"],
                             vf_loss_coeff=ppo["vf_loss_coeff"] / config["network"]["value_scale"] ** 2,
                             vf_clip_param=ppo["vf_clip_param"], kl_coeff=ppo["kl_coeff"],
                             use_kl_loss=ppo["kl_coeff"] > 0, grad_clip=ppo["grad_clip"],
                             train_batch_size_per_learner=ppo["train_batch_size"],
                             minibatch_size=ppo["minibatch_size"], num_epochs=ppo["num_epochs"]))
    return algo_config.build_algo()


# ---- metrics --------------------------------------------------------------------------------

def flatten_numbers(result: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Every finite numeric leaf of an RLlib result dict, keyed by its path (config excluded)."""
    out: dict[str, float] = {}
    for key, value in result.items():
        if key == "config":
            continue
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_numbers(value, path + "/"))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int | float | np.integer | np.floating) and math.isfinite(float(value)):
            out[path] = float(value)
    return out


def headline(metrics: dict[str, float], module_id: str) -> dict[str, float]:
    """The few numbers shown on the terminal each iteration."""
    def pick(*keys: str) -> float:
        for key in keys:
            if key in metrics:
                return metrics[key]
        return float("nan")

    return {
        "return": pick(f"env_runners/module_episode_returns_mean/{module_id}",
                       f"env_runners/module_episode_return_mean/{module_id}",
                       "env_runners/episode_return_mean"),
        "entropy": pick(f"learners/{module_id}/entropy"),
        "kl": pick(f"learners/{module_id}/mean_kl_loss"),
        "vf_explained_var": pick(f"learners/{module_id}/vf_explained_var"),
    }


# ---- checkpoints ----------------------------------------------------------------------------

def checkpoint_dirs(out: Path) -> list[Path]:
    """Checkpoints whose trainer_state.json was written (the last file of one), oldest first."""
    root = out / "checkpoints"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not is_hidden(p) and (p / STATE_FILE).is_file())


def is_complete(path: Path) -> bool:
    """The trainer state parses and the policy file is there (RLlib's files are written before both)."""
    return state_is_complete(path, STATE_FILE, "policy.pt")


def save_checkpoint(algo, out: Path, config: dict[str, Any], state: dict[str, Any], keep: int = 3) -> Path:
    """RLlib checkpoint + policy.pt + trainer state in ``checkpoints/iter_N``; also ``OUT/policy.pt``.

    Written to a temporary folder renamed into place (the trainer state last), so a kill while it is
    written leaves the previous checkpoints intact (see :mod:`experiments.train.checkpoints`). Only
    the newest ``keep`` checkpoints are kept."""
    def write(folder: Path) -> None:
        algo.save_to_path(str(folder.resolve()))
        weights = get_module_weights(algo, trained_module_id(config))
        meta = {"iteration": state["iteration"], "timesteps": state["timesteps"]}
        save_policy_file(folder / "policy.pt", config, weights, meta)
        write_atomic(folder / STATE_FILE, json.dumps(state, indent=1))

    path = write_folder(out / "checkpoints" / f"iter_{state['iteration']:06d}", write)
    copy_atomic(path / "policy.pt", out / "policy.pt")
    for old in checkpoint_dirs(out)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return path


def load_trainer_state(path: Path) -> dict[str, Any]:
    try:
        return json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"checkpoint {str(path)!r} is corrupt: {STATE_FILE} unreadable ({exc})") from None


#: config sections that fix the modules' shapes and the env: a resumed run must keep them
RESUME_FIXED = ("game", "game_options", "network", "league")


def check_resumable(config: dict[str, Any], out: Path) -> None:
    """ConfigError when the config differs from the run's saved one where the checkpoint cannot
    follow (game, options, network, league slots); budgets and PPO settings may change. A run folder
    without its ``config.yaml`` is refused (its checkpoints cannot be checked against the config),
    and so is a saved config that is not YAML or is hostile (:func:`envs.core.textfile.parse_yaml`)."""
    saved_path = out / "config.yaml"
    if not saved_path.exists():
        raise ConfigError(f"--resume {out}: the run folder has no config.yaml (the config it was started "
                          f"with), so its checkpoints cannot be checked against this config: restore "
                          f"{saved_path}, or start a new run with another --out")
    what = f"--resume {out}: the saved config"
    saved = parse_yaml(read_text(saved_path, what), f"{what} {saved_path}")
    if not isinstance(saved, dict):
        raise ConfigError(f"--resume {out}: the saved config {saved_path} is not a mapping of config "
                          f"sections (got {type(saved).__name__}); refused")
    for key in RESUME_FIXED:
        mine, theirs = config.get(key), saved.get(key)
        if key == "game_options" and isinstance(mine or {}, dict) and isinstance(theirs or {}, dict):
            mine, theirs = {"players": 1, **(mine or {})}, {"players": 1, **(theirs or {})}
        if mine != theirs:
            raise ConfigError(f"--resume {out}: the config's {key} {config.get(key)!r} differs from the "
                              f"run's {saved.get(key)!r} (in {saved_path})")


def resume_point(out: Path) -> Path:
    """The last complete checkpoint of a run folder (ConfigError when there is none); what a kill
    left half-written is finished or skipped first, with one line each (:func:`recover`)."""
    if not out.is_dir():
        raise ConfigError(f"--resume: {str(out)!r} is not a training run folder")
    recover(out / "checkpoints", is_complete)
    found = checkpoint_dirs(out)
    if not found:
        raise ConfigError(f"--resume: no complete checkpoint under {str(out / 'checkpoints')!r} (the run "
                          f"stopped before its first one): start it again with --out {out}")
    return found[-1]


# ---- the run --------------------------------------------------------------------------------

class StopFlag:
    """Set by SIGINT: the loop finishes the iteration, saves and returns."""

    def __init__(self) -> None:
        self.stop = False
        self._previous: Any = None

    def __enter__(self) -> StopFlag:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.stop:  # a second Ctrl-C: give up at once
            raise KeyboardInterrupt
        self.stop = True

    def __exit__(self, *exc: Any) -> None:
        signal.signal(signal.SIGINT, self._previous)


def run_training(config: dict[str, Any], out: Path, *, resume: bool = False, timesteps: int | None = None,
                 time_budget: float | None = None, wall_budget: float | None = None,
                 address: str | None = None, device: str = "cpu",
                 seed: int | None = None, init: str | None = None, progress: bool = True,
                 max_iterations: int | None = None) -> dict[str, Any]:
    """Train; return the final trainer state (iteration, timesteps, best evaluation...).

    ``time_budget`` counts PPO seconds only; ``wall_budget`` counts from this call (warm start included).
    """
    command_started = time.monotonic()
    from torch.utils.tensorboard import SummaryWriter

    from experiments.train.league import League

    run = config["run"]
    seed = run["seed"] if seed is None else seed
    target = timesteps or run["timesteps"]
    budget = time_budget if time_budget is not None else run["time_budget"]
    if init and init != NO_INIT and is_candidate_config(config):
        raise ConfigError("--init: a candidate network starts from network.init (greedy or a model.json)")
    checkpoint = resume_point(out) if resume else None
    if checkpoint is not None:
        check_resumable(config, out)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    if device == "cuda":
        import torch

        if not torch.cuda.is_available() and not address:
            raise ConfigError("--device cuda: torch sees no GPU on this machine")
    init_ray(num_cpus=config["resources"]["num_cpus"], address=address)
    algo = build_algorithm(config, seed=seed, device=device)
    state: dict[str, Any] = {"iteration": 0, "timesteps": 0, "best_score": None, "seed": seed,
                             "rng": np.random.default_rng(seed).bit_generator.state, "league": None,
                             "evaluations": []}
    if checkpoint is not None:
        algo.restore_from_path(str(checkpoint.resolve()))
        state = load_trainer_state(checkpoint)
    rng = np.random.default_rng()
    rng.bit_generator.state = state["rng"]
    writer = SummaryWriter(log_dir=str(out))
    eval_seeds = tuple(range(run["eval_seed"], run["eval_seed"] + run["eval_games"]))
    evaluator = TrainingEvaluator(config["game"], config["game_options"], eval_seeds)
    mid = trained_module_id(config)
    league = League.from_state(config, out, state["league"]) if is_multiplayer(config) and \
        config["league"]["enabled"] else None
    with StopFlag() as flag:  # Ctrl-C during the warm start stops after it, with a checkpoint
        if checkpoint is None:
            configured = config["imitation"]["teacher"]
            teacher = init or (f"teacher:{configured}" if configured else NO_INIT)
            if teacher.startswith("policy:"):
                load_initial_policy(algo, config, teacher)
                evaluate_and_log(algo, config, evaluator, writer, out, state, mid, step=0)
            elif teacher != NO_INIT:
                warm_start(algo, config, teacher, writer, out, mid, progress=progress, stop=lambda: flag.stop)
                evaluate_and_log(algo, config, evaluator, writer, out, state, mid, step=0)
            if league is not None:
                league.start(algo)
        elif league is not None:
            league.restore(algo)
        started = time.monotonic()
        with _progress(progress, target, state["timesteps"]) as bar:
            while state["timesteps"] < target and not flag.stop:
                if budget is not None and time.monotonic() - started >= budget:
                    break
                if wall_budget is not None and time.monotonic() - command_started >= wall_budget:
                    break
                if max_iterations is not None and state["iteration"] >= max_iterations:
                    break
                t0 = time.monotonic()
                result = algo.train()
                metrics = flatten_numbers(result)
                state["iteration"] += 1
                state["timesteps"] = int(metrics.get("num_env_steps_sampled_lifetime", state["timesteps"]))
                elapsed = time.monotonic() - t0
                metrics["perf/iteration_seconds"] = elapsed
                sampled = metrics.get("env_runners/num_env_steps_sampled", 0.0)
                metrics["perf/sampled_env_steps_per_s"] = sampled / max(elapsed, 1e-9)
                for key, value in metrics.items():
                    writer.add_scalar(key, value, state["timesteps"])
                if league is not None and state["iteration"] % config["league"]["promote_every"] == 0:
                    league.check_promotion(algo, writer, state["timesteps"], rng, state["iteration"])
                last_eval = None
                if run["eval_every"] and state["iteration"] % run["eval_every"] == 0:
                    last_eval = evaluate_and_log(algo, config, evaluator, writer, out, state, mid,
                                                 state["timesteps"])
                if state["iteration"] % run["checkpoint_every"] == 0:
                    _save(algo, out, config, state, rng, league)
                bar.update(state, headline(metrics, mid), metrics["perf/sampled_env_steps_per_s"], last_eval)
        state["stopped_by"] = "interrupt" if flag.stop else "budget"
        _save(algo, out, config, state, rng, league)
    writer.flush()
    writer.close()
    algo.stop()
    return state


def _save(algo, out: Path, config: dict[str, Any], state: dict[str, Any], rng: np.random.Generator,
          league) -> Path:
    state["rng"] = rng.bit_generator.state
    if league is not None:
        state["league"] = league.state()
    return save_checkpoint(algo, out, config, state)


def evaluate_and_log(algo, config: dict[str, Any], evaluator, writer, out: Path, state: dict[str, Any],
                     mid: str, step: int) -> dict[str, float]:
    """Paired evaluation of the current network; logs it and keeps ``best/`` up to date."""
    weights = get_module_weights(algo, mid)
    path = save_policy_file(out / "eval" / "policy.pt", config, weights,
                            {"iteration": state["iteration"], "timesteps": state["timesteps"]})
    result = evaluator.evaluate(str(path))
    for key, value in result.items():
        writer.add_scalar(f"eval/{key}", value, step)
    score = result.get("mean_evaluation", result["mean_score"])
    state["evaluations"].append({"iteration": state["iteration"], "timesteps": step, **result})
    if state["best_score"] is None or score > state["best_score"]:
        state["best_score"] = score
        (out / "best").mkdir(exist_ok=True)
        copy_atomic(path, out / "best" / "policy.pt")
    return result


class _progress:
    """A one-line rich progress display with the latest iteration's numbers (or nothing), cut to the
    console's width: the fields that matter most first (:func:`progress_fields`)."""

    def __init__(self, enabled: bool, total: int, done: int):
        self.enabled, self.total, self.done = enabled, total, done
        self.started = time.monotonic()
        self.last_eval: dict[str, float] | None = None

    def __enter__(self) -> _progress:
        if self.enabled:
            self.progress = Progress(TextColumn("{task.description}"))
            self.progress.start()
            self.task = self.progress.add_task(self._line([f"train {self.done:,}/{self.total:,} env steps"]),
                                               total=self.total, completed=self.done)
        return self

    def _line(self, fields: list[str]) -> str:
        return fit_line(fields, self.progress.console.width - 1)

    def update(self, state: dict[str, Any], head: dict[str, float], steps_per_s: float,
               evaluation: dict[str, float] | None) -> None:
        if not self.enabled:
            return
        self.last_eval = evaluation or self.last_eval
        fields = progress_fields(state, self.total, head, steps_per_s, self.last_eval,
                                 time.monotonic() - self.started)
        self.progress.update(self.task, completed=min(state["timesteps"], self.total),
                             description=self._line(fields))

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            self.progress.stop()


def progress_fields(state: dict[str, Any], total: int, head: dict[str, float], steps_per_s: float,
                    evaluation: dict[str, float] | None, seconds: float) -> list[str]:
    """The progress line's fields, most important first (:func:`fit_line` drops from the end)."""
    minutes, secs = divmod(int(seconds), 60)
    fields = [f"train {min(state['timesteps'], total):,}/{total:,}", f"it {state['iteration']}",
              f"return {head['return']:.1f}"]
    if evaluation is not None:
        key = "mean_evaluation" if "mean_evaluation" in evaluation else "mean_score"
        fields.append(f"eval {evaluation[key]:.1f} ({evaluation['diff_vs_greedy']:+.1f} vs greedy)")
    fields += [f"{steps_per_s:,.0f} steps/s", f"{minutes}:{secs:02d}", f"entropy {head['entropy']:.2f}",
               f"kl {head['kl']:.4f}"]
    if evaluation is not None:
        fields.append(f"CI [{evaluation['diff_vs_greedy_ci_low']:+.1f}, "
                      f"{evaluation['diff_vs_greedy_ci_high']:+.1f}]")
    return fields

"""``meeplelab train GAME --algo expert-iteration --config configs/exit/<name>.yaml``: expert iteration.

A search (the config's ``search``: an agent spec whose ``{policy}`` is the current network, e.g.
``mcts:prior=ppo:{policy},value=ppo:{policy},simulations=32,value_weight=0.5``) is a stronger
player than the network's argmax; the network is trained to imitate the search's root visit
distribution, and the better network makes a better search. One generation ``g``:

1. **Self-play** (:mod:`experiments.train.exit_data`): the accepted network is written to
   ``generations/gen_NNN/policy.pt``; the search plays every seat of ``selfplay.games`` games
   (their own seeds, see exit_data; with ``selfplay.noise`` > 0 the search adds that fraction of
   Dirichlet noise to its root priors) in chunks on Ray tasks. Every decision keeps the observation,
   the packed legal mask, the root visit distribution (top ``selfplay.top_k`` actions and their
   visit fractions; a forced move is its single action) and the acting seat's points still to
   gain until the end. The generation's data go to ``data/gen_NNN.npz``.
2. **Fit**: a candidate, a copy of the accepted network, is fitted on the last
   ``selfplay.window`` generations' data by :func:`experiments.train.imitation.fit`: soft-target
   cross-entropy to the visit distribution + ``train.value_weight`` x the value loss (in units of
   ``network.value_scale``), ``train.epochs`` epochs with a fresh Adam at ``train.lr``; 10% of
   the games held out for the accuracy (how often the argmax is the search's move).
3. **Gating** (:mod:`experiments.train.exit_gating`): the candidate's search and the accepted
   network's search play ``gating.games`` seeds of this generation; the candidate replaces the
   accepted network only when the paired difference's 95% CI lies above zero
   (``gating.enabled: false``: always); with ``gating.confirm_games`` > 0 a pass is re-played on
   that many fresh seeds and the CI over all the seeds must still lie above zero. A rejected
   candidate is dropped; the next generation fits a new one from the accepted network on a
   window that now holds more data.
4. **Evaluation** every ``run.eval_every`` generations: the accepted network's argmax agent on
   the fixed evaluation seeds, paired against random and greedy
   (:class:`experiments.train.evaluation.TrainingEvaluator`).

TensorBoard (step = generation): ``exit/*`` (losses, target accuracy, gating means, difference,
CI and decision, seconds per phase, decisions, search simulations/s), ``eval/*``, and
``imitation/*`` for a teacher warm start. Generation 0 starts from ``--init policy:PATH`` (same
network config), ``--init teacher:SPEC`` (the imitation warm start of
:func:`experiments.train.imitation.imitate`, sized by the config's ``imitation`` section), the config's
``init``, or a fresh network.

Output folder::

    OUT/config.yaml                      the validated config (a resume must keep game and network)
    OUT/events.out.tfevents.*            TensorBoard
    OUT/data/gen_NNN.npz                 self-play decisions per generation
    OUT/generations/gen_NNN/policy.pt    the network that played generation NNN (+ candidate.pt)
    OUT/checkpoints/gen_NNN/             policy.pt (accepted after NNN) + exit_state.json
    OUT/checkpoints/init/                the starting network (so even generation 0 can resume)
    OUT/policy.pt, OUT/best/policy.pt    the accepted network (``ppo:OUT``, ``mcts:prior=ppo:OUT``)

``exit_state.json`` holds the last finished generation, the history (fit metrics, gating results,
decisions, timings per generation), the evaluations, the RNG state and the config; ``--resume
OUT`` continues at the next generation with that network, history and RNG state (an interrupted
generation's saved self-play is reused). ``--generations N`` is the run's total. Ctrl-C finishes
the current step (self-play, fit or gating), saves and exits cleanly.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from tqdm import tqdm

from envs.core.errors import ConfigError
from envs.core.registry import make_game
from experiments.common.ray_setup import init_ray
from experiments.common.writes import copy_atomic, write_atomic
from experiments.train.checkpoints import is_hidden, recover, state_is_complete, write_folder
from experiments.train.console import console
from experiments.train.evaluation import TrainingEvaluator
from experiments.train.exit_data import GATING, check_search, generation_seeds, load_window, self_play
from experiments.train.exit_gating import gate, record_fields
from experiments.train.imitation import NO_INIT, fit, imitate, parse_init
from experiments.train.ppo import StopFlag
from experiments.train.ppo import check_resumable as check

STATE_FILE = "exit_state.json"
INIT_DIR = "init"


# ---- networks -----------------------------------------------------------------------------

def initial_network(config: dict[str, Any], init: str | None, seed: int, writer, progress: bool, stop):
    """Generation 0's network: a policy file, an imitation warm start, or fresh weights."""
    import torch

    from agents.ppo.network import BoardPolicyValueNet, NetConfig
    from agents.ppo.policy_file import build_network, load_policy_payload
    game = make_game(config["game"], **config["game_options"])
    if init is None:
        torch.manual_seed(seed)
        return BoardPolicyValueNet(game.layout(), NetConfig.from_dict(config["network"]))
    kind, spec = parse_init(init)
    if kind == "teacher":
        run_config = {**config, "run": {**config["run"], "seed": seed}}
        return imitate(run_config, init, writer, progress, stop)[0]
    payload = load_policy_payload(spec)
    if NetConfig.from_dict(payload["net_config"]) != NetConfig.from_dict(config["network"]):
        raise ConfigError(f"--init {init}: its network {payload['net_config']} differs from the config's "
                          f"network section {config['network']}")
    return build_network(payload, game)


def save_network(path: Path, net, config: dict[str, Any], meta: dict[str, Any]) -> Path:
    from agents.ppo.policy_file import save_policy

    game = make_game(config["game"], **config["game_options"])
    return save_policy(path, net, game, config["game_options"], meta)


def load_network(path: Path, config: dict[str, Any]):
    from agents.ppo.policy_file import build_network, load_policy_payload

    return build_network(load_policy_payload(path), make_game(config["game"], **config["game_options"]))


# ---- checkpoints --------------------------------------------------------------------------

def checkpoint_dirs(out: Path) -> list[Path]:
    """Complete checkpoints (their state file written last), in generation order (init first)."""
    root = out / "checkpoints"
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if not is_hidden(p) and (p / STATE_FILE).is_file()
             and (p / "policy.pt").is_file()]
    return sorted(found, key=lambda p: -1 if p.name == INIT_DIR else int(p.name.rpartition("_")[2] or -1))


def is_complete(path: Path) -> bool:
    return state_is_complete(path, STATE_FILE, "policy.pt")


def resume_point(out: Path) -> Path:
    """The last complete checkpoint of a run folder (ConfigError when there is none); what a kill
    left half-written is finished or skipped first, with one line each (:func:`recover`)."""
    if not out.is_dir():
        raise ConfigError(f"--resume: {str(out)!r} is not a training run folder")
    recover(out / "checkpoints", is_complete)
    found = checkpoint_dirs(out)
    if not found:
        raise ConfigError(f"--resume: no complete expert-iteration checkpoint under "
                          f"{str(out / 'checkpoints')!r} (the run stopped before its first one): start it "
                          f"again with --out {out}")
    return found[-1]


def load_state(path: Path) -> dict[str, Any]:
    try:
        return json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"checkpoint {str(path)!r} is corrupt: {STATE_FILE} unreadable ({exc})") from None


def save_checkpoint(out: Path, net, config: dict[str, Any], state: dict[str, Any], keep: int = 3) -> Path:
    """``checkpoints/gen_NNN`` (or ``init``): the accepted network and the state (written last, in a
    temporary folder renamed into place: see :mod:`experiments.train.checkpoints`); also
    ``OUT/policy.pt`` and ``OUT/best/policy.pt``. The newest ``keep`` generations are kept."""
    name = INIT_DIR if state["generation"] < 0 else f"gen_{state['generation']:03d}"

    def write(folder: Path) -> None:
        save_network(folder / "policy.pt", net, config, {"generation": state["generation"]})
        write_atomic(folder / STATE_FILE, json.dumps(state, indent=1))

    path = write_folder(out / "checkpoints" / name, write)
    for target in (out / "policy.pt", out / "best" / "policy.pt"):
        target.parent.mkdir(parents=True, exist_ok=True)
        copy_atomic(path / "policy.pt", target)
    generations = [p for p in checkpoint_dirs(out) if p.name != INIT_DIR]
    for old in generations[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return path


def check_resumable(config: dict[str, Any], out: Path) -> None:
    """The run's game, options and network (its ``config.yaml``, which must be there and is read as
    hostile-safe YAML) must be the config's (one clear line otherwise): :func:`ppo.check_resumable`."""
    check(config, out)


# ---- one generation -----------------------------------------------------------------------

def fit_candidate(accepted, data, config: dict[str, Any], seed: int) -> tuple[Any, dict[str, float]]:
    """A copy of the accepted network fitted to ``data``; returns it and its last epoch's metrics."""
    candidate = copy.deepcopy(accepted)
    tr = config["train"]
    history = fit(candidate, data, tr["epochs"], tr["batch_size"], tr["lr"], tr["value_weight"], seed=seed)
    return candidate, history[-1]


def run_generation(config: dict[str, Any], out: Path, generation: int, accepted_net, state: dict[str, Any],
                   rng: np.random.Generator, stop, progress: bool) -> tuple[Any, Path, dict[str, Any] | None]:
    """Self-play, fit, gate; returns the accepted network after it, its file and the generation's
    record (None when ``stop()`` interrupted it between steps)."""
    started = time.monotonic()
    folder = out / "generations" / f"gen_{generation:03d}"
    playing = save_network(folder / "policy.pt", accepted_net, config, {"generation": generation})
    data = self_play(config, out, generation, playing, state["seed"], progress)
    selfplay_s = time.monotonic() - started
    if stop():
        return accepted_net, playing, None
    window = load_window(out, generation, config["selfplay"]["window"])
    t0 = time.monotonic()
    candidate, fitted = fit_candidate(accepted_net, window, config, int(rng.integers(2**31)))
    fit_s = time.monotonic() - t0
    candidate_path = save_network(folder / "candidate.pt", candidate, config, {"generation": generation})
    if stop():
        return accepted_net, playing, None
    t0 = time.monotonic()
    gating: dict[str, Any] = {"accepted": True}
    if config["gating"]["enabled"]:
        games, confirm = config["gating"]["games"], config["gating"]["confirm_games"]
        seeds = generation_seeds(state["seed"], generation, GATING, games + confirm)
        gating = gate(config, candidate_path, playing, seeds[:games], seeds[games:], progress=progress)
    gating_s = time.monotonic() - t0
    sims, seconds = (data.search_stats.sum(axis=0) if data.search_stats is not None and len(data) else (0, 0))
    fitted = {k: float(v) for k, v in fitted.items()}
    record = {"generation": generation, "loss": fitted["loss"], "policy_loss": fitted["policy_loss"],
              "value_loss": fitted["value_loss"], "target_accuracy": fitted["train_accuracy"],
              "heldout_target_accuracy": fitted["heldout_accuracy"], "decisions": len(data),
              "window_decisions": len(window), "search_sims_per_s": float(sims / seconds) if seconds else 0.0,
              "selfplay_seconds": selfplay_s, "fit_seconds": fit_s, "gating_seconds": gating_s,
              "generation_seconds": time.monotonic() - started,
              **record_fields(gating)}
    if gating["accepted"]:
        return candidate, candidate_path, record
    return accepted_net, playing, record


def log_generation(writer, record: dict[str, Any]) -> None:
    step = record["generation"]
    for key, value in record.items():
        if key != "generation" and isinstance(value, int | float | bool):
            writer.add_scalar(f"exit/{key}", float(value), step)


def summary_line(record: dict[str, Any]) -> str:
    gating = (f"gating {record['gating_mean_diff']:+.1f} [{record['gating_ci_low']:+.1f}, "
              f"{record['gating_ci_high']:+.1f}] " if "gating_mean_diff" in record else "no gating ")
    if "gating_combined_mean_diff" in record:
        gating += (f"confirmed on {record['gating_confirm_games']} more seeds "
                   f"{record['gating_confirm_mean_diff']:+.1f}, "
                   f"all {record['gating_combined_mean_diff']:+.1f} "
                   f"[{record['gating_combined_ci_low']:+.1f}, {record['gating_combined_ci_high']:+.1f}] ")
    return (f"gen {record['generation']}: {record['decisions']} decisions, loss {record['loss']:.3f} "
            f"(target acc {record['target_accuracy']:.2f}), {gating}-> "
            f"{'accepted' if record['accepted'] else 'rejected'} ({record['generation_seconds']:.0f}s)")


# ---- the run ------------------------------------------------------------------------------

def run_expert_iteration(config: dict[str, Any], out: Path, *, resume: bool = False,
                         generations: int | None = None, address: str | None = None, seed: int | None = None,
                         init: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Run generations until ``generations`` (default ``run.generations``) are done or Ctrl-C;
    return the final state."""
    from torch.utils.tensorboard import SummaryWriter
    run = config["run"]
    total = generations or run["generations"]
    checkpoint = resume_point(out) if resume else None
    if checkpoint is not None:
        check_resumable(config, out)
    else:  # self-play files of a run that never saved its start: another network played them
        for stale in (out / "data").glob("gen_*.npz"):
            stale.unlink()
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    init = init or config["init"]
    init = None if init == NO_INIT else init
    if checkpoint is not None:
        probe = load_network(checkpoint / "policy.pt", config)
    else:  # an --init policy file is read here too: a bad one fails before Ray starts
        probe = initial_network(config, init if init and init.startswith("policy:") else None, 0, None, False,
                                None)
    with tempfile.TemporaryDirectory() as tmp:  # so does a bad search spec
        check_search(config, save_network(Path(tmp) / "policy.pt", probe, config, {}))
    init_ray(num_cpus=run["num_cpus"], address=address)
    writer = SummaryWriter(log_dir=str(out))
    evaluator = TrainingEvaluator(config["game"], config["game_options"],
                                  tuple(range(run["eval_seed"], run["eval_seed"] + run["eval_games"])))
    with StopFlag() as flag:
        if checkpoint is not None:
            state = load_state(checkpoint)
            net = load_network(checkpoint / "policy.pt", config)
        else:
            seed = run["seed"] if seed is None else seed
            state = {"generation": -1, "seed": seed, "rng": np.random.default_rng(seed).bit_generator.state,
                     "init": init, "history": [], "evaluations": []}
            net = initial_network(config, init, seed, writer, progress, lambda: flag.stop)
            _save(out, net, config, state, np.random.default_rng(seed))
        rng = np.random.default_rng()
        rng.bit_generator.state = state["rng"]
        bar = tqdm(total=total, initial=min(total, state["generation"] + 1), desc="expert iteration",
                   unit="gen", disable=not progress, dynamic_ncols=True, file=console())
        while state["generation"] + 1 < total and not flag.stop:
            generation = state["generation"] + 1
            net, path, record = run_generation(config, out, generation, net, state, rng, lambda: flag.stop,
                                               progress)
            if record is None:
                break
            log_generation(writer, record)
            if run["eval_every"] and (generation + 1) % run["eval_every"] == 0:
                result = evaluator.evaluate(str(path))
                for key, value in result.items():
                    writer.add_scalar(f"eval/{key}", value, generation)
                state["evaluations"].append({"generation": generation, **result})
            state["generation"] = generation
            state["history"].append(record)
            _save(out, net, config, state, rng)
            writer.flush()
            bar.update(1)
            if progress:
                bar.write(summary_line(record))
        bar.close()
        state["stopped_by"] = "interrupt" if flag.stop else "generations"
        _save(out, net, config, state, rng)
    writer.flush()
    writer.close()
    return state


def _save(out: Path, net, config: dict[str, Any], state: dict[str, Any], rng: np.random.Generator) -> Path:
    """The accepted network and the state as the checkpoint of the last finished generation."""
    state["rng"] = rng.bit_generator.state
    state["config"] = config
    return save_checkpoint(out, net, config, state)

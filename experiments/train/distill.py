"""``meeplelab train GAME --algo distill``: fit a linear candidate model to search labels, DAgger style
(``--algo afterstate``: the same loop on self-play returns, ``label.targets: returns``).

Each iteration:

1. **Label** ``label.games`` fresh seeds: the current model plays them in every seat and, at each
   decision, its ``width`` best candidates are valued by ``futures`` paired greedy playouts (the
   flat search's labels; ``label_games`` of the game's module in :mod:`agents.learned`). Chunks of
   ``chunk_games`` games run as Ray tasks (in-process with one worker and no ``--address``), and each
   finished chunk is written to ``labels/iter_NNN/chunk_NNNN.npz`` at once (a temporary file renamed),
   so a stopped run loses at most the chunks in flight.
2. **Fit** the weights on every label so far (:func:`agents.learned.fit.fit_theta`, shrunk toward the
   start weights: the greedy preset's, or the ``run.start`` model's; they are kept when no fit beats
   them on held-out decisions). With a ``patterns`` section (Cartographers, Cascadia) a pattern table
   is then fitted to what those weights leave (``fit_table`` of :func:`agents.learned.pattern_module`), and
   the model plays with both from the next iteration on.
3. **Checkpoint** ``checkpoints/iter_NNN/model.json``, written in a temporary folder and renamed, and
   **evaluate** it on the first ``eval_games`` dev seeds against the greedy preset, paired by seed
   (TensorBoard scalars in the run folder, one line per iteration on the console).

The best evaluated checkpoint is copied to ``<run>/model.json``, so ``learned:<run folder>`` plays it.
``--resume <run>`` continues after the last complete checkpoint and reuses finished label chunks.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.learned import game_module, pattern_module
from agents.learned.fit import fit_returns, fit_theta
from agents.learned.model import MODEL_FILE, PATTERNS_FILE, load_model, save_model
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.textfile import parse_json, read_text
from experiments.common.ray_setup import init_ray
from experiments.common.writes import copy_atomic, write_atomic
from experiments.eval.stats import paired_comparison
from experiments.eval.suites import load_suite
from experiments.train.distill_config import with_defaults

STATE_FILE = "state.json"
#: the label keys every fit reads (a pattern table's fit adds its module's ``ROW_KEYS``)
ROW_KEYS = ("group", "phase", "features", "target")


def label_chunk(game_name: str, game_options: dict[str, Any], seeds: list[int], theta: np.ndarray,
                width: int, futures: int, preset: str, seed: int, targets: str = "playouts",
                explore: float = 0.0, model_turns: int = 0, horizon: int = 0,
                table: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """One chunk's labelled rows (runs in a Ray worker or in-process): paired-playout values of the
    top candidates, or (``targets="returns"``) the returns of the model's own exploring games.
    A pattern ``table`` (an array, possibly with no rows: a run with ``patterns``) plays
    beside ``theta`` and makes the rows record what a table is fitted to."""
    game = make_game(game_name, **game_options)
    module = game_module(game_name)
    if targets == "returns":
        return module.return_games(game, np.asarray(seeds, dtype=np.int64), theta, explore, width, seed)
    # games without an option never see it
    extra: dict[str, Any] = {key: value for key, value in (("model_turns", model_turns), ("horizon", horizon))
                             if value}
    if table is not None:
        extra.update(table=table, patterns=True)
    return module.label_games(game, np.asarray(seeds, dtype=np.int64), theta, width, futures, preset, seed,
                              **extra)


def _chunk_path(run_dir: Path, iteration: int, index: int) -> Path:
    return run_dir / "labels" / f"iter_{iteration:03d}" / f"chunk_{index:04d}.npz"


def _save_chunk(path: Path, rows: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npz")
    np.savez(tmp, **rows)
    os.replace(tmp, path)


def label_keys(config: dict[str, Any]) -> tuple[str, ...]:
    """The label keys the run's fits read: :data:`ROW_KEYS`, plus the pattern table's with ``patterns``."""
    if config["patterns"] is None:
        return ROW_KEYS
    return ROW_KEYS + pattern_module(config["game"]).ROW_KEYS


def _load_chunk(path: Path, keys: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """A chunk's rows (``keys`` and ``scores``), or None when the file is torn or not a chunk (it is
    labelled again)."""
    keys = keys + ("scores",)
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in keys}
    except (OSError, ValueError, KeyError, EOFError):
        return None


def label_iteration(config: dict[str, Any], run_dir: Path, iteration: int, model: tuple[np.ndarray, Any],
                    address: str | None, progress: bool) -> list[dict[str, np.ndarray]]:
    """Every chunk of ``iteration`` (finished ones read back, the rest labelled now) by ``model``
    (weights and pattern table, :func:`labelling_model`)."""
    theta, table = model
    keys = label_keys(config)
    label, run = config["label"], config["run"]
    first = run["first_seed"] + iteration * label["games"]
    seeds = list(range(first, first + label["games"]))
    chunks = [seeds[i:i + label["chunk_games"]] for i in range(0, len(seeds), label["chunk_games"])]
    results: dict[int, dict[str, np.ndarray]] = {}
    todo = []
    for index in range(len(chunks)):
        path = _chunk_path(run_dir, iteration, index)
        rows = _load_chunk(path, keys) if path.exists() else None
        if rows is None:
            todo.append(index)
        else:
            results[index] = _trimmed(config, rows)
    args = [(config["game"], config["game_options"], chunks[i], theta, label["width"], label["futures"],
             label["preset"], run["seed"] * 1_000_003 + chunks[i][0], label["targets"], label["explore"],
             label["model_turns"], label["horizon"], _table_arg(config, table)) for i in todo]
    start = time.perf_counter()

    def done(index: int, rows: dict[str, np.ndarray]) -> None:
        # decision ids unique over the run: each chunk's count from its first seed on
        results[index] = _trimmed(config, {**rows, "group": rows["group"] + chunks[index][0] * 100_000})
        _save_chunk(_chunk_path(run_dir, iteration, index), results[index])
        if progress:
            finished = len(results)
            print(f"  iteration {iteration}: labelled {finished}/{len(chunks)} chunks "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)

    if todo and (run["workers"] > 1 or address):
        ray = init_ray(num_cpus=run["workers"], address=address)
        remote = ray.remote(label_chunk)
        pending = {remote.remote(*a): i for a, i in zip(args, todo, strict=True)}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                done(pending.pop(ref), ray.get(ref))
    else:
        for a, i in zip(args, todo, strict=True):
            done(i, label_chunk(*a))
    return [results[i] for i in range(len(chunks))]


def _trimmed(config: dict[str, Any], rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A chunk's rows with only what the run's pattern table reads (its module's ``trim_rows``)."""
    if config["patterns"] is None:
        return rows
    return pattern_module(config["game"]).trim_rows(rows, config["patterns"]["rings"])


def _table_arg(config: dict[str, Any], table: np.ndarray | None) -> np.ndarray | None:
    """What ``label_chunk`` gets as its table: None without ``patterns``, else the table (or one with
    no rows before the first fit)."""
    if config["patterns"] is None:
        return None
    return pattern_module(config["game"]).empty_table() if table is None else table


def dev_scores(config: dict[str, Any], theta: np.ndarray, table: np.ndarray | None = None) -> np.ndarray:
    """The learned model (``theta`` and a pattern ``table``) in every seat on the first
    ``run.eval_games`` dev seeds: each game's mean score per seat by the game's metric."""
    game = make_game(config["game"], **config["game_options"])
    seeds = np.asarray(load_suite("dev").seeds[:config["run"]["eval_games"]], dtype=np.int64)
    extra = {} if table is None else {"table": table}
    scores = game_module(config["game"]).label_games(game, seeds, theta, 0, 0, config["label"]["preset"], 0,
                                                     **extra)
    return scores["scores"].reshape(seeds.size, -1).mean(axis=1)


def compare(learned: np.ndarray, greedy: np.ndarray) -> dict[str, float]:
    """Both means and their paired difference with its 95% CI."""
    diff = paired_comparison(learned, greedy)
    return {"learned": float(learned.mean()), "greedy": float(greedy.mean()), "diff": diff.mean_difference,
            "diff_low": float(diff.ci95[0]), "diff_high": float(diff.ci95[1])}


def _write_checkpoint(run_dir: Path, iteration: int, config: dict[str, Any], theta: np.ndarray,
                      training: dict[str, Any], table: np.ndarray | None = None) -> Path:
    final = run_dir / "checkpoints" / f"iter_{iteration:03d}"
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(tmp, config["game"], config["game_options"], theta, config["label"]["preset"], training, table)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    return final


def last_checkpoint(run_dir: Path) -> tuple[int, np.ndarray, np.ndarray | None] | None:
    """The last complete checkpoint (iteration, theta, pattern table or None); torn ones are skipped
    with one line."""
    folder = run_dir / "checkpoints"
    for path in sorted(folder.glob("iter_[0-9][0-9][0-9]"), reverse=True) if folder.is_dir() else []:
        try:
            model = load_model(path)
            return int(path.name[5:]), model["theta"], model["table"]
        except ConfigError as exc:
            print(f"skipping checkpoint {path}: {exc}")
    return None


def start_model(config: dict[str, Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """The weights (and pattern table) a run starts from: the ``run.start`` model's, or the greedy
    preset's weights (a start model's table only when the run fits one: ``patterns``)."""
    start = config["run"]["start"]
    if start is not None:
        model = load_model(start)
        return model["theta"], (model["table"] if config["patterns"] is not None else None)
    return game_module(config["game"]).greedy_theta(config["label"]["preset"]), None


def labelling_model(run_dir: Path, iteration: int,
                    start: tuple[np.ndarray, np.ndarray | None]) -> tuple[np.ndarray, np.ndarray | None]:
    """The weights and table that played ``iteration``'s labelled games: the previous iteration's
    checkpoint, the start model (:func:`start_model`) for the first."""
    if iteration == 0:
        return start
    model = load_model(run_dir / "checkpoints" / f"iter_{iteration - 1:03d}")
    return model["theta"], model["table"]


def run_distill(config: dict[str, Any], run_dir: Path, resume: bool = False, address: str | None = None,
                iterations: int | None = None, progress: bool = True) -> dict[str, Any]:
    """Run (or continue) a distillation; returns the run state (also in ``state.json``)."""
    from torch.utils.tensorboard import SummaryWriter  # TensorBoard through the [rl] extra

    module = game_module(config["game"])
    preset = config["label"]["preset"]
    total = iterations or config["run"]["iterations"]
    state_path = run_dir / STATE_FILE
    state: dict[str, Any] = {"iteration": -1, "evaluations": [], "best": None, "config": config}
    start = start_model(config)
    theta, table = start
    if resume and state_path.is_file():
        state = read_state(state_path)
        found = last_checkpoint(run_dir)
        state["iteration"], theta, table = found if found is not None else (-1, theta, table)
        state["evaluations"] = [e for e in state["evaluations"] if e["iteration"] <= state["iteration"]]
    if not state_path.is_file():  # a run folder from its first moment (resume reuses its labels)
        _write_state(state_path, state)
    writer = SummaryWriter(log_dir=str(run_dir))
    all_rows: list[dict[str, np.ndarray]] = []
    for iteration in range(state["iteration"] + 1):  # the labels the resumed fit needs
        # a lost chunk is labelled again by the weights that labelled it the first time
        labeller = labelling_model(run_dir, iteration, start)
        all_rows += label_iteration(config, run_dir, iteration, labeller, address, progress=False)
    greedy_scores = dev_scores(config, module.greedy_theta(preset))  # the baseline, played once
    try:
        for iteration in range(state["iteration"] + 1, total):
            started = time.perf_counter()
            all_rows += label_iteration(config, run_dir, iteration, (theta, table), address, progress)
            rows = {key: np.concatenate([r[key] for r in all_rows]) for key in label_keys(config)}
            fit = fit_returns if config["label"]["targets"] == "returns" else fit_theta
            theta, report = fit(rows, start[0], seed=config["run"]["seed"])
            entry: dict[str, Any] = {"iteration": iteration, "rows": report.rows,
                                     "decisions": report.decisions, "ridge": report.ridge,
                                     "held_out_gain": report.held_out_gain, "held_out_se": report.held_out_se}
            if config["patterns"] is not None:
                table, entry["patterns"] = fit_patterns(config, rows, theta)
            scores = compare(dev_scores(config, theta, table), greedy_scores)
            entry.update(seconds=time.perf_counter() - started, **scores)
            _write_checkpoint(run_dir, iteration, config, theta, entry, table)
            state["iteration"] = iteration
            state["evaluations"].append(entry)
            if state["best"] is None or entry["diff"] > state["best"]["diff"]:
                state["best"] = entry
                best = run_dir / "checkpoints" / f"iter_{iteration:03d}"
                if (best / PATTERNS_FILE).is_file():  # the table first: model.json names it
                    copy_atomic(best / PATTERNS_FILE, run_dir / PATTERNS_FILE)
                copy_atomic(best / MODEL_FILE, run_dir / MODEL_FILE)
            for key in ("learned", "greedy", "diff", "held_out_gain"):
                writer.add_scalar(f"distill/{key}", entry[key], iteration)
            if "patterns" in entry:
                writer.add_scalar("distill/pattern_gain", entry["patterns"]["held_out_gain"], iteration)
            writer.flush()
            _write_state(state_path, state)
            if progress:
                fitted = (f"held-out squared error {-report.held_out_gain:+.1f} against greedy's direction"
                          if config["label"]["targets"] == "returns" else
                          f"held-out gain per decision {report.held_out_gain:+.3f}")
                fitted += f" (se {report.held_out_se:.3f})"
                if "patterns" in entry:
                    fitted += (f"; pattern table {entry['patterns']['held_out_gain']:+.3f} more "
                               f"(se {entry['patterns']['held_out_se']:.3f})")
                print(f"iteration {iteration}: {report.rows:,} rows from {report.decisions:,} decisions; "
                      f"{fitted}; "
                      f"dev {config['run']['eval_games']} games: learned {entry['learned']:.2f} vs greedy "
                      f"{entry['greedy']:.2f}, {entry['diff']:+.2f} [{entry['diff_low']:+.2f}, "
                      f"{entry['diff_high']:+.2f}] ({entry['seconds']:.0f} s)", flush=True)
    finally:
        writer.close()
    return state


def fit_patterns(config: dict[str, Any], rows: dict[str, np.ndarray],
                 theta: np.ndarray) -> tuple[np.ndarray | None, dict[str, Any]]:
    """The ``patterns`` section's table fitted to ``rows`` beside ``theta`` (None when it gains nothing
    on held-out decisions) and what the fit reported."""
    options = config["patterns"]
    fit_table = pattern_module(config["game"]).fit_table
    table, report = fit_table(rows, theta, rings=options["rings"], epochs=options["epochs"], lr=options["lr"],
                              decay=options["decay"], seed=config["run"]["seed"])
    return (table if table.shape[0] else None), {"best_epoch": report.best_epoch,
                                                 "held_out_gain": report.held_out_gain,
                                                 "held_out_se": report.held_out_se}


def _write_state(path: Path, state: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(state, indent=1) + "\n")


def read_state(path: Path) -> dict[str, Any]:
    """A run's ``state.json`` (size, line length and nesting limited); ConfigError naming it."""
    state = parse_json(read_text(path, "distillation state"), f"distillation state {path}")
    if not isinstance(state, dict):
        raise ConfigError(f"{str(path)!r} is corrupt (not a JSON object)")
    return state


def check_resumable(config: dict[str, Any], run_dir: Path) -> None:
    """A run folder continues only with the config that started it (its ``run.iterations`` may grow:
    that is the run's budget, not what it learns from)."""
    path = run_dir / STATE_FILE
    if not path.is_file():
        raise ConfigError(f"{str(run_dir)!r} holds no distillation run (no {STATE_FILE})")
    saved = read_state(path).get("config")
    if not isinstance(saved, dict):
        raise ConfigError(f"{str(path)!r} is corrupt (no config)")
    saved = with_defaults(saved)  # keys added since the run started take their defaults
    def learning(c: dict[str, Any]) -> dict[str, Any]:
        return {**c, "run": {k: v for k, v in c.get("run", {}).items() if k != "iterations"}}

    if learning(saved) != learning(json.loads(json.dumps(config))):
        raise ConfigError(f"{str(run_dir)!r} was started with another config (game {saved.get('game')!r}, "
                          f"name {saved.get('name')!r}); give a new --out")


def resume_point(run_dir: Path) -> int:
    """The iteration a resumed run continues after (-1: none finished yet; its labels are reused);
    ConfigError for a folder that holds no distillation run."""
    found = last_checkpoint(run_dir)
    if found is None and not (run_dir / STATE_FILE).is_file():
        raise ConfigError(f"{str(run_dir)!r} holds no distillation run to resume")
    return -1 if found is None else found[0]


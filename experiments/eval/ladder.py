"""``meeplelab ladder GAME --agents A,B,C``: a strength ladder of agents on the same seeds.

Reads top to bottom: build the evaluation (command line or ``--config configs/ladder/x.yaml``),
optionally give every search agent the same time per decision (``--equal-time S``: ``mcts``
agents get ``simulations=none,time_limit=S``), play the seeds through the eval harness
(:func:`experiments.eval.evaluate.run_evaluation`) into ``OUT/parts/<first>-<last>/``, then combine
every part found and write the ladder.

Parts: every game depends only on its seed (and lineup), so a long ladder runs in pieces over
seed ranges (``--seeds 1000000-1000099``, then ``--seeds 1000100-1000199``, ... into one
``--out``; a part already complete is not replayed) and ``ladder --combine DIR1 DIR2 ... --out
DIR`` merges parts written elsewhere (with ``--agents``, only those rungs, from parts whose
other rungs may differ, where every table seats one agent). The ladder uses the seeds every agent
finished.

The ladder (``ladder.md``, ``ladder.csv``, ``ladder.png``, ``summary.json``): agents best first
by mean score (evaluation points when the game's score sheet has them, as solo Cartographers'
does), each with its 95% CI, the paired difference to the rung below (CI, paired t p-value), the
Bradley-Terry Elo with a CI from resampled seeds (multiplayer games, agents sharing tables) and
milliseconds per decision. Its numbers are the eval summary's numbers for the same games.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click
import pandas as pd

from agents.base import parse_agent_spec
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.textfile import parse_json, read_text
from experiments.common.output_dir import prepare_out_dir
from experiments.common.ray_options import workers_option
from experiments.common.runner import GameRecord
from experiments.common.writes import write_atomic
from experiments.eval import stats
from experiments.eval.config import CONFIG_KEYS, EvalSpec, build_spec, load_config, split_agents
from experiments.eval.evaluate import run_evaluation, summarize_run
from experiments.eval.report import json_default
from experiments.eval.run import EvalRun, lineups, per_seed_scores

#: agents whose strength is bought with time: --equal-time gives them the same time per decision
SEARCH_AGENTS = ("mcts",)
LADDER_KEYS = {**CONFIG_KEYS, "equal_time": float, "seeds": str}
META_FILE = "ladder_part.json"


# ---- what to play ---------------------------------------------------------------------------

def parse_seed_range(text: str) -> tuple[int, int]:
    """``"a-b"`` (inclusive) -> (a, b)."""
    first, sep, last = str(text).partition("-")
    try:
        a, b = int(first), int(last if sep else first)
    except ValueError as exc:
        raise ConfigError(f"--seeds must look like FIRST-LAST (e.g. 0-99), got {text!r}") from exc
    if a < 0 or b < a:
        raise ConfigError(f"--seeds must be FIRST-LAST with 0 <= FIRST <= LAST, got {text!r}")
    return a, b


def equal_time(spec: str, seconds: float) -> str:
    """``spec`` with ``simulations=none,time_limit=seconds`` when it names a search agent."""
    name, options = parse_agent_spec(spec)
    if name not in SEARCH_AGENTS:
        return spec
    options.update(simulations="none", time_limit=seconds)
    return f"{name}:" + ",".join(f"{k}={v}" for k, v in options.items())


def load_ladder_config(path: str) -> dict[str, Any]:
    """A ladder config: the eval config keys plus ``equal_time`` (seconds) and ``seeds`` ("a-b")."""
    return load_config(path, LADDER_KEYS)


def build_ladder_spec(game: str | None, agents: str | None, players: int | None, suite: str | None,
                      seeds: str | None, seconds: float | None, config: str | None,
                      seating: str | None = None, metric: str | None = None) -> tuple[EvalSpec, float | None]:
    """The evaluation a ladder plays (the command line wins over the config, key by key)."""
    data = load_ladder_config(config) if config else {}
    seeds = seeds or data.get("seeds")
    seconds = seconds if seconds is not None else data.get("equal_time")
    if seconds is not None and seconds <= 0:
        raise ConfigError(f"--equal-time must be a positive number of seconds, got {seconds}")
    suite = suite or data.get("suite")
    first, last = parse_seed_range(seeds) if seeds else (None, None)
    spec = build_spec(game or data.get("game"), agents or data.get("agents"),
                      None if suite or first is None else last - first + 1,
                      None if suite else first, players if players is not None else data.get("players"),
                      suite=suite, seating=seating or data.get("seating"),
                      metric=metric or data.get("metric"))
    spec.options = dict(data.get("options") or {})
    if suite and first is not None:
        spec.seeds = tuple(s for s in spec.seeds if first <= s <= last)
        if not spec.seeds:
            raise ConfigError(f"no seed of suite {suite!r} lies in {seeds}")
        spec.seeds_label = f"suite {suite}, seeds {spec.seeds[0]}..{spec.seeds[-1]}"
    if seconds is not None:
        spec.agents = [equal_time(a, float(seconds)) for a in spec.agents]
    if metric is None and not data.get("metric"):
        spec.metric = default_metric(spec)
    return spec, seconds


def default_metric(spec: EvalSpec) -> str:
    """Evaluation points when the game's score sheet has them (solo Cartographers), else the total."""
    game = make_game(spec.game, **spec.game_options())
    extra = game.scores(game.new_game(spec.seeds[0]))[0].extra
    return "evaluation" if "evaluation" in extra else "total"


# ---- parts ----------------------------------------------------------------------------------

def _part_meta(spec: EvalSpec, players: int) -> dict[str, Any]:
    return {"game": spec.game, "players": players, "options": spec.options, "agents": list(spec.agents),
            "seating": spec.seating, "metric": spec.metric, "seeds": [spec.seeds[0], spec.seeds[-1]],
            "games": len(spec.seeds)}


def read_meta(path: Path) -> dict[str, Any]:
    """A part's meta file (size, line length and nesting limited); ConfigError naming it."""
    meta = parse_json(read_text(path, "ladder part meta"), f"ladder part meta {path}")
    if not isinstance(meta, dict):
        raise ConfigError(f"ladder part meta {path} is not a JSON object")
    return meta


def _part_complete(part: Path, meta: dict[str, Any], per_seed: int) -> bool:
    try:
        old = read_meta(part / META_FILE)
        rows = pd.read_csv(part / "games.csv")
    except (OSError, ValueError):
        return False
    return old == meta and len(rows.groupby(["seed", "lineup"])) == meta["games"] * per_seed


def play_part(spec: EvalSpec, out: Path, workers: int = 1, progress: bool = True) -> EvalRun | None:
    """Play ``spec`` into ``out/parts/<first>-<last>``; None when that part was already complete.
    A part stopped by Ctrl-C is not marked complete (a rerun plays it again)."""
    game = make_game(spec.game, **spec.game_options())
    players = game.num_players()
    part = out / "parts" / f"{spec.seeds[0]}-{spec.seeds[-1]}"
    meta = _part_meta(spec, players)
    if _part_complete(part, meta, len(lineups(spec.agents, players, spec.seating))):
        click.echo(f"{part} is complete: not replayed", err=True)
        return None
    part.mkdir(parents=True, exist_ok=True)
    (part / META_FILE).unlink(missing_ok=True)
    run = run_evaluation(spec, out_dir=part, progress=progress, game=game, workers=workers)
    if not run.interrupted:  # written last and whole: a part without it is played again
        write_atomic(part / META_FILE, json.dumps(meta, indent=2))
    return run


def combine_parts(dirs: list[Path], keep: list[str] | None = None) -> EvalRun:
    """Every part under ``dirs`` (a ladder --out or one part folder) as one evaluation run; the
    parts must describe the same game, agents, seating and metric.

    ``keep`` (agent specs) merges only those rungs, from every part that played them, even parts
    whose other rungs differ: allowed where every table seats a single agent (solo games, or
    ``seating: same``), since such a game depends only on its seed and that agent. The run holds
    the seeds that every kept rung played."""
    metas, frames = [], []
    for d in dirs:
        for meta_path in sorted(Path(d).glob(f"**/{META_FILE}")):
            metas.append(read_meta(meta_path))
            frames.append(pd.read_csv(meta_path.parent / "games.csv"))
    if not frames:
        raise ConfigError(f"no finished ladder part under {', '.join(str(d) for d in dirs)}")
    keys = ("game", "players", "options", "agents", "seating", "metric")
    if keep is not None:
        metas, frames = _kept_rungs(metas, frames, list(keep))
        keys = ("game", "players", "options", "seating", "metric")
    first = {k: metas[0][k] for k in keys}
    for meta in metas[1:]:
        for k in keys:
            if meta[k] != first[k]:
                raise ConfigError(f"ladder parts disagree on {k}: {first[k]!r} vs {meta[k]!r}")
    agents = list(keep) if keep is not None else list(first["agents"])
    rows = pd.concat(frames, ignore_index=True).drop_duplicates(["seed", "lineup", "seat"], keep="last")
    if keep is not None:  # the seeds every kept rung played, as within one part
        played = rows.groupby("seed").lineup.nunique()
        rows = rows[rows.seed.isin(played[played == len(keep)].index)]
        if rows.empty:
            raise ConfigError(f"no seed was played by every one of {', '.join(keep)}")
    rows = rows.sort_values(["seed", "lineup", "seat"]).reset_index(drop=True)
    seeds = tuple(int(s) for s in sorted(rows.seed.unique()))
    spec = EvalSpec(game=first["game"], agents=agents, seeds=seeds, players=first["players"],
                    options=dict(first["options"]), seeds_label=_seeds_label(seeds), seating=first["seating"],
                    metric=first["metric"])
    return EvalRun(spec=spec, players=int(first["players"]), records=records_from_rows(rows), rows=rows)


def _kept_rungs(metas: list[dict[str, Any]], frames: list[pd.DataFrame],
                keep: list[str]) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
    """The parts' rows of the ``keep`` agents only, each lineup renumbered to its place in
    ``keep``; parts that played none of them are left out."""
    if not keep or len(set(keep)) != len(keep):
        raise ConfigError(f"--agents with --combine must name distinct agents, got {keep}")
    kept_metas, kept_frames, found = [], [], set()
    for meta, frame in zip(metas, frames, strict=True):
        if meta["players"] != 1 and meta["seating"] != "same":
            raise ConfigError("--agents with --combine needs tables of one agent each (solo games or "
                              f"seating 'same'); parts with {meta['players']} players and seating "
                              f"{meta['seating']!r} mix agents at a table")
        index = {_canonical(spec): i for i, spec in enumerate(meta["agents"])}
        mine = [a for a in keep if _canonical(a) in index]
        if not mine:
            continue
        found.update(mine)
        renumber = {index[_canonical(a)]: keep.index(a) for a in mine}
        part = frame[frame.lineup.isin(renumber)].copy()
        part["lineup"] = part.lineup.map(renumber)
        kept_metas.append(meta)
        kept_frames.append(part)
    missing = [a for a in keep if a not in found]
    if missing:
        raise ConfigError(f"no ladder part played {', '.join(missing)}")
    return kept_metas, kept_frames


def _canonical(spec: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """An agent spec independent of its options' order."""
    name, options = parse_agent_spec(spec)
    return name, tuple(sorted((k, str(v)) for k, v in options.items()))


def _seeds_label(seeds: tuple[int, ...]) -> str:
    if seeds == tuple(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}..{seeds[-1]}"
    return f"{len(seeds)} seeds in {seeds[0]}..{seeds[-1]}"


def records_from_rows(rows: pd.DataFrame) -> list[GameRecord]:
    """The per-game facts the summary needs (seats' agents, totals, winners) back from games.csv."""
    records = []
    for (seed, _), game in rows.groupby(["seed", "lineup"], sort=True):
        game = game.sort_values("seat")
        wins = game["win"].to_numpy() if "win" in game else [1.0] * len(game)
        n = len(game)
        records.append(GameRecord(seed=int(seed), agents=list(game.agent),
                                  totals=[float(t) for t in game.total], categories=[{}] * n, extras=[{}] * n,
                                  decisions=list(game.decisions), decision_seconds=[0.0] * n,
                                  max_decision_seconds=[0.0] * n, wall_seconds=0.0,
                                  winning_seats=[i for i in range(n) if wins[i] > 0]))
    return records


# ---- the ladder -----------------------------------------------------------------------------

def ladder_table(run: EvalRun, summary: dict[str, Any]) -> pd.DataFrame:
    """One row per agent, best first: mean with CI, paired difference to the rung below, Elo, ms."""
    by_seed = per_seed_scores(run.rows, run.spec.metric_column)
    order = sorted(summary["agents"], key=lambda a: -summary["agents"][a]["mean"])
    elo = {}
    if "ratings" in summary:
        r = summary["ratings"]
        elo = {n: (e, ci) for n, e, ci in zip(r["names"], r["elo"], r["elo_ci95"], strict=True)}
    rows = []
    for rank, agent in enumerate(order, start=1):
        s = summary["agents"][agent]
        row: dict[str, Any] = {"rank": rank, "agent": agent, "seeds": int(s.get("n_seeds", s["n"])),
                               "mean": s["mean"], "ci_low": s["ci95_t"][0], "ci_high": s["ci95_t"][1]}
        if rank < len(order):
            below = order[rank]
            pair = stats.paired_comparison(by_seed[agent], by_seed[below], a=agent, b=below)
            row.update(below=below, diff_below=pair.mean_difference, diff_ci_low=pair.ci95[0],
                       diff_ci_high=pair.ci95[1], p_value=pair.t_pvalue)
        if agent in elo:
            row.update(elo=elo[agent][0], elo_ci_low=elo[agent][1][0], elo_ci_high=elo[agent][1][1])
        row["ms_per_decision"] = s["decision_ms_mean"]
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame, run: EvalRun, command: str) -> str:
    """The ladder as a Markdown section headed by the command line that produced it."""
    metric = "evaluation points" if run.spec.metric == "evaluation" else f"score ({run.spec.metric})"
    has_elo = "elo" in table
    head = "| rank | agent | seeds | mean | 95% CI | vs rung below | 95% CI | p |" + (
        " Elo | Elo 95% CI |" if has_elo else "") + " ms/decision |"
    lines = [f"`{command}`", "",
             f"{run.spec.game}, {run.players} player(s), {run.spec.seeds_label}; mean {metric}; "
             "every agent played the same seeds (paired).", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for r in table.to_dict("records"):
        diff = ("", "", "") if pd.isna(r.get("diff_below", float("nan"))) else (
            f"{r['diff_below']:+.2f}", f"[{r['diff_ci_low']:+.2f}, {r['diff_ci_high']:+.2f}]",
            f"{r['p_value']:.2g}")
        line = (f"| {r['rank']} | {r['agent']} | {r['seeds']} | {r['mean']:.2f} | "
                f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}] | {diff[0]} | {diff[1]} | {diff[2]} |")
        if has_elo:
            line += f" {r['elo']:.0f} | [{r['elo_ci_low']:.0f}, {r['elo_ci_high']:.0f}] |"
        lines.append(line + f" {r['ms_per_decision']:.1f} |")
    return "\n".join(lines) + "\n"


def ladder_plot(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Means with 95% CIs, best on top (and Elo with CIs beside them for multiplayer games)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if "elo" in table else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 0.55 * len(table) + 1.6), squeeze=False)
    y = list(range(len(table)))[::-1]
    for ax, (mid, low, high, label) in zip(axes[0], (("mean", "ci_low", "ci_high", "mean, 95% CI"),
                                                     ("elo", "elo_ci_low", "elo_ci_high", "Elo, 95% CI")),
                                           strict=False):
        ax.errorbar(table[mid], y, xerr=[table[mid] - table[low], table[high] - table[mid]], fmt="o",
                    capsize=4, color="#4C72B0")
        ax.set_yticks(y, table.agent)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return write_atomic(path, buffer.getvalue())


def write_ladder(run: EvalRun, out: Path, command: str) -> tuple[pd.DataFrame, str]:
    """Summarise ``run`` and write ladder.md, ladder.csv, ladder.png and summary.json into ``out``,
    each whole or not at all (a full disk: DiskFullError, the previous file of that name kept)."""
    summary = summarize_run(run)
    table = ladder_table(run, summary)
    text = markdown(table, run, command)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "ladder.md", text)
    csv_text = io.StringIO()
    table.to_csv(csv_text, index=False)
    write_atomic(out / "ladder.csv", csv_text.getvalue())
    ladder_plot(table, out / "ladder.png", f"{run.spec.game} ({run.players}p), {run.spec.seeds_label}")
    write_atomic(out / "summary.json", json.dumps(summary, indent=2, default=json_default))
    return table, text


# ---- command --------------------------------------------------------------------------------

@click.command(name="ladder")
@click.argument("args", nargs=-1)
@click.option("--agents", help="Comma-separated agent specs (the rungs); with --combine, the rungs to "
              "merge (solo or seating 'same' parts, which may hold other rungs too).")
@click.option("--players", type=int, help="Number of seats (default: the game's default).")
@click.option("--suite", help="Named seed suite (configs/suites.yaml), e.g. dev or test.")
@click.option("--seeds", help="Seed range FIRST-LAST (inclusive; within --suite when both are given): "
              "one part.")
@click.option("--equal-time", "seconds", type=float, help="Give every search agent this many seconds per "
              "decision (simulations=none,time_limit=S).")
@click.option("--config", type=click.Path(dir_okay=False), help="Ladder YAML (configs/ladder/*.yaml).")
@click.option("--seating", type=click.Choice(["mixed", "same"]), help="As in eval.")
@click.option("--metric", help="Score compared (default: evaluation points where the game has them, "
              "else total).")
@click.option("--out", type=click.Path(file_okay=False), help="Folder for the parts and the ladder "
              "(default runs/ladder/<game>).")
@click.option("--combine", is_flag=True, help="ARGS are ladder folders whose parts are merged into --out.")
@workers_option(1, "1: play here; more: here first, Ray tasks once faster; same results")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def ladder(args: tuple[str, ...], agents: str | None, players: int | None, suite: str | None,
           seeds: str | None, seconds: float | None, config: str | None, seating: str | None,
           metric: str | None, out: str | None, combine: bool, workers: int, no_progress: bool) -> None:
    """Rank agents on GAME by paired evaluation on the same seeds (see experiments/eval/ladder.py)."""
    argv = sys.argv[2:] if sys.argv[1:2] == ["ladder"] else list(args)
    command = "meeplelab ladder " + " ".join(shlex.quote(a) for a in argv)
    if combine:
        if not args or not out:
            raise ConfigError("ladder --combine needs the part folders as arguments and --out")
        keep = split_agents(agents) if agents else None
        run = combine_parts([Path(a) for a in args], keep)
        out_dir = prepare_out_dir(out)
    else:
        if len(args) > 1:
            raise ConfigError(f"ladder takes one GAME (or --combine DIR...), got {' '.join(args)}")
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {workers}")
        spec, _ = build_ladder_spec(args[0] if args else None, agents, players, suite, seeds, seconds, config,
                                    seating, metric)
        out_dir = prepare_out_dir(out or f"runs/ladder/{spec.game}")
        played = play_part(spec, out_dir, workers=workers, progress=not no_progress)
        if played is not None and played.interrupted:
            click.echo(f"interrupted: this ladder covers the {played.rows.seed.nunique()} seeds every agent "
                       "finished; rerun the same --seeds to play the part whole", err=True)
            run = played
        else:
            run = combine_parts([out_dir])
    _, text = write_ladder(run, out_dir, command)
    click.echo(text)
    click.echo(f"wrote {out_dir}/ladder.md, ladder.csv, ladder.png, summary.json")

"""``meeplelab exit-report RUN``: what an expert-iteration run did, generation by generation.

Without ``--suite``/``--seeds`` nothing is played: the run's saved history (the newest
``checkpoints/*/exit_state.json``) becomes one row per generation (self-play decisions, fit losses
and target accuracy, the gating means of the candidate's and the accepted network's search, their
paired difference with its 95% CI, the decision, seconds per phase, and the ``eval/*`` numbers of
the network accepted after that generation: its argmax agent against random and greedy), written
to ``OUT/generations.md``, ``generations.csv`` and ``generations.png`` (default OUT: RUN/report).

With ``--suite``/``--seeds`` the networks are also played on those seeds through the ladder
(:mod:`experiments.eval.ladder`: parts over seed ranges under ``OUT/parts`` that combine, so a long
test-suite evaluation runs in pieces into one ``--out``). The rungs: ``greedy``; the search
(``--search``, default the run's ``search`` template, no root noise) with the starting network
(``generations/gen_000/policy.pt``, label ``init-search``) and with every accepted generation's
network (``generations/gen_NNN/candidate.pt``, the network accepted after generation NNN, label
``genNNN-search``); with ``--argmax`` also each network's ``ppo:`` argmax agent. The ladder table
(``ladder.md``/``.csv``/``.png``) has each rung's mean with its CI, the paired difference to the
rung below and ms per decision.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import pandas as pd

from envs.core.errors import ConfigError
from experiments.common.output_dir import prepare_out_dir
from experiments.common.ray_options import workers_option
from experiments.common.writes import write_atomic
from experiments.eval.ladder import (
    build_ladder_spec,
    combine_parts,
    default_metric,
    parse_seed_range,
    play_part,
    write_ladder,
)
from experiments.train.exit_config import _check_search
from experiments.train.exit_data import search_spec

if TYPE_CHECKING:
    from experiments.eval.config import EvalSpec

STATE_FILE = "exit_state.json"
#: history keys -> table columns, in table order (a key a run lacks, e.g. gating when it was off, stays empty)
HISTORY_COLUMNS = ("generation", "decisions", "window_decisions", "loss", "policy_loss", "value_loss",
                   "target_accuracy", "heldout_target_accuracy", "gating_games", "gating_candidate_mean",
                   "gating_accepted_mean", "gating_mean_diff", "gating_ci_low", "gating_ci_high",
                   "gating_confirm_games", "gating_confirm_mean_diff", "gating_combined_mean_diff",
                   "gating_combined_ci_low", "gating_combined_ci_high", "accepted",
                   "search_sims_per_s", "selfplay_seconds", "fit_seconds", "gating_seconds",
                   "generation_seconds")


# ---- the run's history ----------------------------------------------------------------------

def load_run_state(run: Path) -> dict[str, Any]:
    """The newest saved state of an expert-iteration run folder (one clear line when there is none)."""
    states = [p for p in (run / "checkpoints").glob(f"gen_*/{STATE_FILE}") if p.parent.name[4:].isdigit()]
    if not run.is_dir() or not states:
        raise ConfigError(f"exit-report: {str(run)!r} is not an expert-iteration run folder "
                          f"(no checkpoints/gen_NNN/{STATE_FILE}: is it a finished generation's --out?)")
    newest = max(states, key=lambda p: int(p.parent.name[4:]))
    try:
        state = json.loads(newest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"exit-report: {str(newest)!r} is unreadable ({exc})") from None
    if not isinstance(state.get("history"), list) or "search" not in (state.get("config") or {}):
        raise ConfigError(f"exit-report: {str(newest)!r} is not an expert-iteration state "
                          "(no history or config)")
    return state


def history_table(state: dict[str, Any]) -> pd.DataFrame:
    """One row per finished generation: the history record and the evaluation after it (``eval_*``)."""
    evaluations = {e["generation"]: e for e in state.get("evaluations", [])}
    rows = []
    for record in state["history"]:
        row: dict[str, Any] = {key: record.get(key) for key in HISTORY_COLUMNS}
        row.update({key: value for key, value in record.items() if key not in row})
        for key, value in evaluations.get(record["generation"], {}).items():
            if key != "generation":
                row[f"eval_{key}"] = value
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else list(HISTORY_COLUMNS))


def _num(value: Any, fmt: str = ".2f") -> str:
    return "" if value is None or pd.isna(value) else format(value, fmt)


def _interval(row: dict[str, Any], mid: str, prefix: str) -> str:
    """``mid`` with its CI (``<prefix>ci_low``, ``<prefix>ci_high``), or "" when the row lacks it."""
    if row.get(mid) is None or pd.isna(row.get(mid)):
        return ""
    return f"{row[mid]:+.2f} [{row[prefix + 'ci_low']:+.2f}, {row[prefix + 'ci_high']:+.2f}]"


def _confirmation(row: dict[str, Any]) -> str:
    """The confirmation's games and the difference over all gating seeds, or "" when none was played."""
    combined = _interval(row, "gating_combined_mean_diff", "gating_combined_")
    return f"{_num(row['gating_confirm_games'], '.0f')}, {combined}" if combined else ""


def history_markdown(table: pd.DataFrame, run: Path, state: dict[str, Any]) -> str:
    """The history table as Markdown (every number as saved; generations.csv has every column)."""
    config = state["config"]
    accepted = int(table["accepted"].sum()) if len(table) else 0
    head = ("| gen | decisions | loss (policy, value) | target acc (held out) | gating games | "
            "candidate search | accepted search | difference [95% CI] | "
            "confirmation: games, all seeds [95% CI] | accepted | self-play s | fit s | "
            "gating s | eval mean | eval vs random [95% CI] | eval vs greedy [95% CI] |")
    lines = [f"Expert iteration run `{run}`: {config['game']} {config['game_options']}, search "
             f"`{config['search']}`, {len(table)} generation(s), {accepted} accepted. Gating: the "
             "candidate's search minus the accepted network's search on the generation's gating seeds; "
             "after a pass, the confirmation's fresh seeds and the difference over all of them (it decides); "
             "eval: the accepted network's argmax agent after the generation.", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for r in table.to_dict("records"):
        cells = [str(r["generation"]), _num(r["decisions"], "d"),
                 f"{_num(r['loss'], '.3f')} ({_num(r['policy_loss'], '.3f')}, "
                 f"{_num(r['value_loss'], '.3f')})",
                 f"{_num(r['target_accuracy'])} ({_num(r['heldout_target_accuracy'])})",
                 _num(r["gating_games"], ".0f"), _num(r["gating_candidate_mean"]),
                 _num(r["gating_accepted_mean"]), _interval(r, "gating_mean_diff", "gating_"),
                 _confirmation(r), "yes" if r["accepted"] else "no", _num(r["selfplay_seconds"], ".1f"),
                 _num(r["fit_seconds"], ".1f"), _num(r["gating_seconds"], ".1f"),
                 _num(r.get("eval_mean_score")),
                 _interval(r, "eval_diff_vs_random", "eval_diff_vs_random_"),
                 _interval(r, "eval_diff_vs_greedy", "eval_diff_vs_greedy_")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def gating_figure(table: pd.DataFrame, title: str):
    """Each generation's gating difference with its 95% CI; accepted generations filled green."""
    from experiments.eval.plots import BLUE, GREEN, plt

    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(table) + 3.0), 4.2), layout="constrained")
    gated = table.dropna(subset=["gating_mean_diff"]) if "gating_mean_diff" in table else table.iloc[:0]
    for accepted, color, label in ((True, GREEN, "accepted"), (False, BLUE, "rejected")):
        part = gated[gated["accepted"].astype(bool) == accepted]
        if len(part):
            mid = part["gating_mean_diff"].astype(float)
            errors = [mid - part["gating_ci_low"], part["gating_ci_high"] - mid]
            ax.errorbar(part["generation"], mid, yerr=errors,
                        fmt="o" if accepted else "s", color=color, capsize=4, label=f"{label} (95% CI)",
                        mfc=color if accepted else "white")
    ungated = table[~table["generation"].isin(gated["generation"])]
    for g in ungated["generation"]:
        ax.axvline(g, color="grey", lw=0.6, ls=":")
    if len(ungated):
        ax.plot([], [], color="grey", lw=0.6, ls=":", label="no gating (accepted)")
    ax.axhline(0.0, color="black", lw=1)
    ax.set_xlabel("generation")
    ax.set_ylabel("candidate search - accepted search\n(mean score difference per gating seed)")
    ax.set_xticks(list(table["generation"]) or [0])
    ax.set_xlim(-0.5, max(list(table["generation"]) or [0]) + 0.5)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="best")
    return fig


def write_history(run: Path, state: dict[str, Any], out: Path) -> tuple[pd.DataFrame, str]:
    """generations.md, generations.csv and generations.png in ``out``; returns the table and Markdown."""
    from experiments.eval.plots import _save as save_figure

    table = history_table(state)
    text = history_markdown(table, run, state)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "generations.md", text)
    table.to_csv(out / "generations.csv", index=False)
    game, players = state["config"]["game"], state["config"]["game_options"].get("players", 1)
    title = f"{game} ({players}p), expert-iteration gating per generation: {run.resolve().name}"
    save_figure(gating_figure(table, title), out / "generations.png")
    return table, text


# ---- the networks on a seed suite -----------------------------------------------------------

def generation_networks(run: Path, state: dict[str, Any]) -> list[tuple[str, Path]]:
    """(label, policy file): the starting network, then the network accepted after each accepted
    generation (its ``candidate.pt``)."""
    generations = run / "generations"
    start = generations / "gen_000" / "policy.pt"
    if not start.is_file():
        start = run / "checkpoints" / "init" / "policy.pt"
    networks = [("init", start)]
    for record in state["history"]:
        if record["accepted"]:
            g = record["generation"]
            networks.append((f"gen{g:03d}", generations / f"gen_{g:03d}" / "candidate.pt"))
    missing = [str(path) for _, path in networks if not path.is_file()]
    if missing:
        raise ConfigError(f"exit-report: network file(s) missing from the run: {', '.join(missing)}")
    return networks


def ladder_agents(run: Path, state: dict[str, Any], search: str | None, argmax: bool) -> list[str]:
    """greedy, then each network's search (and its argmax ``ppo:`` agent with ``argmax``)."""
    template = _check_search(search or state["config"]["search"], "--search")
    agents = ["greedy"]
    for label, path in generation_networks(run, state):
        agents.append(search_spec(template, path, f"{label}-search"))
        if argmax:
            agents.append(f"ppo:{path.resolve()},label={label}-argmax")
    return agents


def ladder_spec(state: dict[str, Any], agents: list[str], suite: str | None, seeds: str | None,
                games: int | None) -> EvalSpec:
    """The ladder's evaluation: ``agents`` on the run's game and options, over the chosen seeds (each
    agent at its own tables for multiplayer games, as in gating)."""
    config = state["config"]
    options = dict(config["game_options"])
    players = int(options.pop("players", 1))
    spec, _ = build_ladder_spec(config["game"], agents, players, suite, seeds, None, None,
                                seating="same" if players > 1 else None)
    if games is not None:
        spec.seeds = spec.seeds[:games]
        spec.seeds_label = f"{spec.seeds_label}, first {len(spec.seeds)}"
    spec.options = options
    spec.metric = default_metric(spec)
    return spec


def play_ladder(spec: EvalSpec, out: Path, workers: int, progress: bool,
                command: str) -> tuple[pd.DataFrame, str]:
    """Play ``spec`` as a ladder part into ``out``, combine every part there, write the ladder."""
    played = play_part(spec, out, workers=workers, progress=progress)
    result = played if played is not None and played.interrupted else combine_parts([out])
    return write_ladder(result, out, command)


# ---- command --------------------------------------------------------------------------------

@click.command(name="exit-report")
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--suite", help="Named seed suite (configs/suites.yaml), e.g. dev or test: play the networks.")
@click.option("--seeds", help="Seed range FIRST-LAST (inclusive; within --suite when both are given): one "
              "ladder part.")
@click.option("--games", type=int, help="Only the first N seeds of --suite/--seeds.")
@click.option("--search", help="Search template with {policy} (default: the run's search, no noise).")
@click.option("--argmax", is_flag=True, help="Also a rung for each network's argmax ppo: agent.")
@workers_option(1, "1: play here; more: here first, Ray tasks once faster; same results")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Report folder (default "
              "RUN/report); ladder parts of several --seeds runs into one --out combine.")
@click.option("--json", "as_json", is_flag=True, help="Print the table(s) as JSON instead of Markdown.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def exit_report(run_dir: Path, suite: str | None, seeds: str | None, games: int | None, search: str | None,
                argmax: bool, workers: int, out: Path | None, as_json: bool, no_progress: bool) -> None:
    """Per-generation report of an expert-iteration run; with --suite/--seeds, its networks'
    strength on those seeds (see experiments/train/exit_report.py)."""
    state = load_run_state(run_dir)
    playing = bool(suite or seeds)
    if games is not None and (games < 1 or not playing):
        raise ConfigError(f"--games must be at least 1 and needs --suite or --seeds, got {games}")
    if (search or argmax) and not playing:
        raise ConfigError("--search and --argmax choose the rungs played: give --suite or --seeds")
    if seeds:
        parse_seed_range(seeds)  # before the network files are looked for
    spec = ladder_spec(state, ladder_agents(run_dir, state, search, argmax), suite, seeds, games) \
        if playing else None
    out_dir = prepare_out_dir(out or run_dir / "report")
    table, text = write_history(run_dir, state, out_dir)
    result: dict[str, Any] = {"run": str(run_dir), "out": str(out_dir),
                              "generations": json.loads(table.to_json(orient="records"))}
    if spec is not None:
        argv = sys.argv[2:] if sys.argv[1:2] == ["exit-report"] else [str(run_dir)]
        command = "meeplelab exit-report " + " ".join(shlex.quote(a) for a in argv)
        ladder, text = play_ladder(spec, out_dir, workers, not (no_progress or as_json), command)
        result["ladder"] = json.loads(ladder.to_json(orient="records"))
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    click.echo(text)
    written = "ladder.md, ladder.csv, ladder.png, summary.json" if playing else ""
    click.echo(f"wrote {out_dir}/generations.md, generations.csv, generations.png, {written}".rstrip(", "))

"""``meeplelab solo-eval --agents random,greedy --games 500 --seed 0``: the solo Cartographers report.

Solo Cartographers is scored against the scoring cards in play: evaluation points = final score
minus the sum of the four cards' solo values (rules decision 15), and a title from the table in
the rules. Every agent plays the same seeds (so the same cards, deck and ambushes: common
random numbers), and this report gives, per agent: mean score, mean threshold, mean evaluation
points with 95% CIs, the share of games at or above 0, the title distribution, a breakdown per
scoring card (games with that card in play: evaluation points, and the points the card itself
scored) and per card combination; per pair of agents: the paired difference (t and Wilcoxon).

Reads top to bottom: agents and seeds, play (via :func:`experiments.eval.evaluate.run_evaluation`,
rows written as they come), summarise, print, write ``DIR`` (games.csv, cards.csv,
combinations.csv, card_pairs.csv, report.md, summary.json, evaluation.png, scores.png,
paired_differences.png).
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.registry import make_game
from experiments.common.output_dir import prepare_out_dir
from experiments.common.ray_options import address_option, workers_option
from experiments.common.tables import print_table
from experiments.common.writes import write_atomic
from experiments.eval import stats
from experiments.eval.config import EvalSpec, split_agents
from experiments.eval.evaluate import (
    run_evaluation,
    summarize_run,
    warn_if_interrupted,
)
from experiments.eval.report import agent_legend, ci_text, json_default, markdown_tables, spread_notes
from experiments.eval.run import EvalRun, per_seed_scores
from experiments.eval.suites import resolve_seeds

EDICTS = "ABCD"


def title_table(game: Game) -> list[tuple[int, str]]:
    """(minimum evaluation, title), best first, from the game's data."""
    titles = getattr(getattr(game, "data", None), "titles", None) or getattr(game, "solo_titles", ())
    return sorted(((int(low), str(name)) for low, name in titles), reverse=True)


def card_columns(game: Game):
    """A ``final_info`` hook: the scoring card under each edict, as columns ``edict_A``..."""
    if not hasattr(game, "edict_names"):
        raise ConfigError(f"{game.name} does not say which scoring cards are in play (no edict_names)")

    def info(state: State) -> dict[str, Any]:
        return {f"edict_{EDICTS[i]}": name for i, name in enumerate(game.edict_names(state))}

    return info


def _edict_columns(rows: pd.DataFrame) -> list[str]:
    return [c for c in rows.columns if c.startswith("edict_")]


def card_points(rows: pd.DataFrame, letter: str) -> pd.Series | None:
    """Points scored by the card under edict ``letter`` (sum of the ``cat_<season>_<letter>``
    categories), or None when the game does not break scores down by edict."""
    columns = [c for c in rows.columns if c.startswith("cat_") and c.endswith(f"_{letter}")]
    return rows[columns].sum(axis=1) if columns else None


def per_card_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (agent, scoring card): games with it in play, mean evaluation points, mean
    points the card scored, share of those games at or above 0."""
    parts = []
    for column in _edict_columns(rows):
        points = card_points(rows, column[-1])
        parts.append(pd.DataFrame({"agent": rows.agent, "card": rows[column], "edict": column[-1],
                                   "evaluation": rows.x_evaluation,
                                   "card_points": points if points is not None else np.nan}))
    if not parts:
        return pd.DataFrame(columns=["agent", "card", "games", "mean_evaluation", "mean_card_points",
                                     "share_at_or_above_0"])
    long = pd.concat(parts, ignore_index=True)
    table = long.groupby(["agent", "card"], sort=True).agg(
        games=("evaluation", "size"), mean_evaluation=("evaluation", "mean"),
        mean_card_points=("card_points", "mean"),
        share_at_or_above_0=("evaluation", lambda e: float((e >= 0).mean())))
    return table.reset_index()


def per_combination_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (agent, set of scoring cards in play): games and mean evaluation points."""
    columns = _edict_columns(rows)
    combo = rows[columns].apply(lambda r: " + ".join(sorted(r)), axis=1) if columns else ""
    frame = pd.DataFrame({"agent": rows.agent, "combination": combo, "evaluation": rows.x_evaluation})
    table = frame.groupby(["agent", "combination"]).evaluation.agg(["size", "mean"]).reset_index()
    return table.rename(columns={"size": "games", "mean": "mean_evaluation"})


def per_card_pair_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (agent, two scoring cards in play together): games and mean evaluation points.
    Pairs recur far more often than whole four-card combinations, so they show which cards are
    hard together with a useful number of games."""
    columns = _edict_columns(rows)
    parts = [pd.DataFrame({"agent": rows.agent, "pair": [" + ".join(sorted(p)) for p in zip(rows[a], rows[b],
                                                                                             strict=True)],
                           "evaluation": rows.x_evaluation})
             for i, a in enumerate(columns) for b in columns[i + 1:]]
    if not parts:
        return pd.DataFrame(columns=["agent", "pair", "games", "mean_evaluation"])
    table = pd.concat(parts).groupby(["agent", "pair"]).evaluation.agg(["size", "mean"]).reset_index()
    return table.rename(columns={"size": "games", "mean": "mean_evaluation"})


def solo_summary(run: EvalRun, titles: list[tuple[int, str]]) -> dict[str, Any]:
    """The solo report as plain data: per agent, per pair, per card, title distribution."""
    base = summarize_run(run)
    rows = run.rows
    agents: dict[str, Any] = {}
    for name in base["agents"]:
        mine = rows[rows.agent == name]
        evaluation = mine.x_evaluation.to_numpy(dtype=float)
        s = stats.summarize(evaluation)
        at_or_above = int((evaluation >= 0).sum())
        counts = Counter(mine.x_title)
        agents[name] = {
            "games": int(len(mine)),
            "mean_score": float(mine.total.mean()),
            "mean_threshold": float(mine.x_threshold.mean()),
            "mean_evaluation": s.mean,
            "sd_evaluation": s.sd,
            "ci95_evaluation": list(s.ci95_t),
            "ci95_evaluation_bootstrap": list(s.ci95_bootstrap),
            "p10_p50_p90_evaluation": [s.p10, s.p50, s.p90],
            "min_max_evaluation": [s.min, s.max],
            "share_at_or_above_0": at_or_above / len(mine),
            "ci95_share_at_or_above_0": list(stats.wilson_interval(at_or_above, len(mine))),
            "titles": {title: counts.get(title, 0) for _, title in titles if counts.get(title, 0)},
            "score": base["agents"][name],
        }
    cards = per_card_table(rows)
    first = next(iter(agents))
    return {
        "game": run.spec.game, "seeds": run.spec.seeds_label, "agent": first, **{
            k: agents[first][k] for k in ("games", "mean_score", "mean_threshold", "mean_evaluation",
                                          "ci95_evaluation", "share_at_or_above_0", "titles")},
        "agents": agents,
        "pairs": base["pairs"],
        "cards": {name: {r.card: {"games": int(r.games), "mean_evaluation": float(r.mean_evaluation),
                                  "mean_card_points": None if pd.isna(r.mean_card_points)
                                  else float(r.mean_card_points),
                                  "share_at_or_above_0": float(r.share_at_or_above_0)}
                         for r in cards[cards.agent == name].itertuples()} for name in agents},
        "title_table": [[low, title] for low, title in titles],
    }


# ---- output -------------------------------------------------------------------------------

def print_report(summary: dict[str, Any], console: Console | None = None) -> None:
    """Rich tables (plain blocks where one is wider than the console): the per-agent solo table, paired
    differences, titles and scoring cards."""
    console = console or Console()
    main = Table(title=f"solo {summary['game']}: {summary['games']} games per agent ({summary['seeds']}); "
                       "means per game, evaluation = score - threshold")
    for column in ("agent", "score", "threshold", "evaluation", "95% CI", ">= 0", "ms/move"):
        main.add_column(column, justify="left" if column == "agent" else "right")
    cells = []
    for name, a in summary["agents"].items():
        row = [name, f"{a['mean_score']:.1f}", f"{a['mean_threshold']:.1f}", f"{a['mean_evaluation']:+.1f}",
               ci_text(a["ci95_evaluation"], 1, signed=True), f"{100 * a['share_at_or_above_0']:.0f}%",
               f"{a['score']['decision_ms_mean']:.2f}"]
        main.add_row(*row)
        cells += row
    print_table(main, console, notes=spread_notes(cells))
    if summary["pairs"]:
        pairs = Table(title="paired comparisons on the same seeds: agent's evaluation points minus "
                            "baseline's")
        for column in ("agent", "baseline", "mean diff", "95% CI", "p (paired t)", "p (Wilcoxon)"):
            pairs.add_column(column, justify="left" if column in ("agent", "baseline") else "right")
        cells = []
        for p in summary["pairs"]:
            row = [p["a"], p["b"], f"{p['mean_difference']:+.2f}", ci_text(p["ci95"], 2, signed=True),
                   f"{p['t_pvalue']:.3g}", f"{p['wilcoxon_pvalue']:.3g}"]
            pairs.add_row(*row)
            cells += row
        print_table(pairs, console, notes=spread_notes(cells))
    names = list(summary["agents"])
    titles = Table(title="title distribution (share of games)")
    titles.add_column("title (min evaluation)")
    for name in names:
        titles.add_column(name, justify="right")
    for low, title in summary["title_table"]:
        titles.add_row(f"{title} ({low:+d})", *(
            f"{100 * summary['agents'][n]['titles'].get(title, 0) / summary['agents'][n]['games']:.0f}%"
            for n in names))
    print_table(titles, console, by="column")
    cards = Table(title="per scoring card: mean evaluation points in games with the card "
                        "(points the card scored)")
    cards.add_column("card")
    for name in names:
        cards.add_column(name, justify="right")
    for card in sorted({c for n in names for c in summary["cards"][n]}):
        cells = []
        for name in names:
            c = summary["cards"][name].get(card)
            points = "" if c is None or c["mean_card_points"] is None else f" ({c['mean_card_points']:.1f})"
            cells.append("-" if c is None else f"{c['mean_evaluation']:+.1f}{points}")
        cards.add_row(card, *cells)
    print_table(cards, console, by="column")


def write_outputs(run: EvalRun, summary: dict[str, Any], out_dir: Path) -> None:
    """report.md, summary.json, cards.csv, combinations.csv and the plots (games.csv is already
    written, row by row)."""
    from experiments.eval import plots
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = run.rows
    cards, combos, pairs = per_card_table(rows), per_combination_table(rows), per_card_pair_table(rows)
    for table, name in ((pairs, "card_pairs.csv"), (cards, "cards.csv"), (combos, "combinations.csv")):
        text = io.StringIO()
        table.to_csv(text, index=False)
        write_atomic(out_dir / name, text.getvalue())
    evaluations = {a: rows[rows.agent == a].x_evaluation.to_numpy() for a in summary["agents"]}
    plots.evaluation_points_plot(evaluations, out_dir / "evaluation.png",
                                 title_thresholds=[(low, t) for low, t in summary["title_table"]])
    plots.score_histograms({a: rows[rows.agent == a].total.to_numpy() for a in summary["agents"]},
                           out_dir / "scores.png", title="solo final scores")
    if summary["pairs"]:
        by_seed = per_seed_scores(rows, "x_evaluation")
        plots.paired_difference_plot(
            {f"{p['a']} - {p['b']}": (by_seed[p["a"]] - by_seed[p["b"]]).to_numpy()
             for p in summary["pairs"]},
            {f"{p['a']} - {p['b']}": tuple(p["ci95"]) for p in summary["pairs"]},
            out_dir / "paired_differences.png",
            title="Paired differences in evaluation points (later - baseline)",
            xlabel="evaluation points, difference per seed")
    lines = [f"# Solo {summary['game']}: {', '.join(summary['agents'])}", "",
             f"{summary['games']} games per agent ({summary['seeds']}); every agent played the same "
             "seeds, so the same scoring cards, deck and ambushes. Evaluation points = final score - "
             "sum of the four cards' solo values.", *agent_legend(run.spec.agents), "",
             "| agent | games | mean score | mean threshold | mean evaluation | 95% t CI | 95% bootstrap CI "
             "| share >= 0 (95% CI) |", "|" + "---|" * 8]
    for name, a in summary["agents"].items():
        share, (t_lo, t_hi) = a["ci95_share_at_or_above_0"], a["ci95_evaluation"]
        b_lo, b_hi = a["ci95_evaluation_bootstrap"]
        lines.append(f"| {name} | {a['games']} | {a['mean_score']:.2f} | {a['mean_threshold']:.2f} | "
                     f"{a['mean_evaluation']:+.2f} | [{t_lo:+.2f}, {t_hi:+.2f}] | "
                     f"[{b_lo:+.2f}, {b_hi:+.2f}] | "
                     f"{a['share_at_or_above_0']:.3f} [{share[0]:.3f}, {share[1]:.3f}] |")
    names = list(summary["agents"])
    lines += ["", "## Titles (share of games)", "", "| title | min | " + " | ".join(names) + " |",
              "|---|---|" + "---|" * len(names)]
    for low, title in summary["title_table"]:
        shares = (summary["agents"][n]["titles"].get(title, 0) / summary["agents"][n]["games"] for n in names)
        lines.append(f"| {title} | {low:+d} | " + " | ".join(f"{x:.3f}" for x in shares) + " |")
    lines += ["", "## Per scoring card", "", "Mean evaluation points in the games where the card was in play "
              "(mean points the card itself scored over the game). Full table: cards.csv.", "",
              "| card | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for card in sorted(cards.card.unique()):
        cells = []
        for name in names:
            hit = cards[(cards.agent == name) & (cards.card == card)]
            if hit.empty:
                cells.append("-")
                continue
            r = hit.iloc[0]
            pts = "" if pd.isna(r.mean_card_points) else f" ({r.mean_card_points:.1f})"
            cells.append(f"{r.mean_evaluation:+.1f}{pts} n={r.games}")
        lines.append(f"| {card} | " + " | ".join(cells) + " |")
    for title, table, column, csv_name in (("Card combinations", combos, "combination", "combinations.csv"),
                                           ("Card pairs", pairs, "pair", "card_pairs.csv")):
        lines += ["", f"## {title}", "", f"The five hardest and five easiest for each agent (mean evaluation "
                  f"points; all of them in {csv_name}).", ""]
        for name in names:
            mine = table[table.agent == name].sort_values("mean_evaluation")
            shown = pd.concat([mine.head(5), mine.tail(5)]).drop_duplicates()
            lines += [f"**{name}**", "", f"| {column} | games | mean evaluation |", "|---|---|---|"]
            lines += [f"| {getattr(r, column)} | {r.games} | {r.mean_evaluation:+.1f} |"
                      for r in shown.itertuples()]
            lines.append("")
    lines += ["## Scores", "", *markdown_tables(summarize_run(run)), "",
              "![evaluation points](evaluation.png)", "![scores](scores.png)"]
    if summary["pairs"]:
        lines.append("![paired differences](paired_differences.png)")
    write_atomic(out_dir / "report.md", "\n".join(lines) + "\n")
    write_atomic(out_dir / "summary.json", json.dumps(summary, indent=2, default=json_default))


# ---- command ------------------------------------------------------------------------------

@click.command(name="solo-eval")
@click.option("--agent", "agent", help="One agent spec (same as --agents with one name).")
@click.option("--agents", "agents",
              help="Comma-separated agent specs, e.g. random,greedy,mcts:simulations=48.")
@click.option("--games", type=int, help="Number of seeds (default 100).")
@click.option("--seed", type=int, help="First seed (default 0).")
@click.option("--suite", help="Named seed suite from configs/suites.yaml (instead of --seed/--games).")
@click.option("--side", default="A", show_default=True, help="Map side (A, or B: wastelands).")
@click.option("--game", "game_name", default="cartographers", hidden=True)
@click.option("--out", type=click.Path(file_okay=False), help="Write games.csv, report.md, plots... here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--show-map", is_flag=True, help="Print the final map of the best game.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@workers_option(1, "1: play here; more: here first, Ray tasks once faster; same results")
@address_option
def solo_eval(agent: str | None, agents: str | None, games: int | None, seed: int | None,
              suite: str | None, side: str, game_name: str, out: str | None, as_json: bool, show_map: bool,
              no_progress: bool, workers: int, address: str | None) -> None:
    """Solo Cartographers: evaluation points (score - card thresholds), titles, per-card breakdown."""
    if agent and agents:
        raise ConfigError("give --agent or --agents, not both")
    specs = split_agents(agents or agent or "random")
    seeds, label = resolve_seeds(suite, seed, games, default_games=100)
    options: dict[str, Any] = {"players": 1}
    if game_name == "cartographers":
        options["side"] = side
    game = make_game(game_name, **options)
    spec = EvalSpec(game=game_name, agents=specs, seeds=seeds, players=1, seeds_label=label)
    out_dir = prepare_out_dir(out)
    run = run_evaluation(spec, out_dir=out_dir, progress=not no_progress, keep_best_state=show_map,
                         final_info="experiments.eval.solo_eval:card_columns", game=game, workers=workers,
                         address=address)
    warn_if_interrupted(run)
    if "x_evaluation" not in run.rows.columns:
        raise ConfigError(f"{game_name} reports no solo evaluation points "
                          "(no 'evaluation' in its score sheet)")
    summary = solo_summary(run, title_table(game))
    if out_dir is not None:
        write_outputs(run, summary, out_dir)
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=json_default))
        return
    print_report(summary)
    if show_map and run.best is not None and run.best.final_state is not None:
        best = run.best
        click.echo(f"\nbest game: seed {best.seed}, agent {best.agents[0]}, score {best.totals[0]:.0f}, "
                   f"evaluation {best.extras[0]['evaluation']:+d} ({best.extras[0]['title']})")
        click.echo(game.render_ansi(best.final_state))
    if out_dir is not None:
        paired = " paired_differences.png" if summary["pairs"] else ""
        click.echo(f"wrote {out_dir}/: games.csv cards.csv combinations.csv card_pairs.csv report.md "
                   f"summary.json evaluation.png scores.png{paired}")

"""``meeplelab replay FILE [--out game.html] [--open]``: a game record as one self-contained HTML page.

The record is replayed through the engine (and refused if it does not replay); every position
is turned into drawing data by the game's view (:mod:`experiments.replay.views`) and embedded as
JSON in a page whose script and style are inline (templates in ``experiments/replay/assets``):
no network access, no server. The page shows every seat's board, the decision with the agent's
candidates highlighted, the scores and a chart of the score categories over time; step with the
buttons, the slider or the arrow keys, jump to a season, round or tile count, or open the page at
decision k with ``game.html#step=k``.
"""

from __future__ import annotations

import html
import json
import re
import webbrowser
from importlib import resources
from pathlib import Path
from typing import Any

import click

from envs.core.game import Game, State
from envs.core.registry import make_game
from experiments.common.writes import write_atomic
from experiments.replay.browser import screenshot as take
from experiments.replay.records import Record, read_record, replay, score_dicts
from experiments.replay.views import view_for

_STAT_KEYS = ("visits", "value", "probability", "prob")
_SLOT = re.compile(r"__(TITLE|STYLE|SCRIPT|DATA)__")


def _asset(name: str) -> str:
    return resources.files("experiments.replay").joinpath("assets", name).read_text(encoding="utf-8")


def _label(game: Game, view: Any, state: State, action: int) -> str:
    try:
        return view.label(state, action)
    except Exception:  # an action the view cannot word (never expected): the engine's description
        return game.describe_action(action)


def _is_number(value: Any) -> bool:
    """A statistic the viewer shows (a record's text in a statistic's place is left out)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _played_index(turns: list[list[int]], played: list[int]) -> int:
    """The candidate whose turn is the one played (its actions open ``played``), else the first whose
    first action is the move: one candidate, where several turns share their first action."""
    for i, turn in enumerate(turns):
        if turn == played[:len(turn)]:
            return i
    return next(i for i, turn in enumerate(turns) if turn[0] == played[0])


def _candidates(game: Game, view: Any, before: State, line: dict[str, Any],
                played: list[int] | None = None) -> tuple[list[dict], str]:
    """The candidates to highlight (the agent's, or the move alone) and a line saying whose they are.
    ``played``: the actions this seat played from this decision on (the move first); exactly one
    candidate, the turn played, is ``chosen``."""
    explanation = line.get("explanation") or {}
    listed = list(explanation.get("candidates") or [])
    if not any(int(c["action"]) == line["action"] for c in listed):
        listed.append({"action": line["action"]})  # the move is always shown, listed or not
    turns = [[int(a) for a in c.get("turn", [c["action"]])] for c in listed]  # a turn search lists turns
    picked = _played_index(turns, played or [int(line["action"])])
    out = []
    for index, (entry, turn) in enumerate(zip(listed, turns, strict=True)):
        action = int(entry["action"])
        where, labels, state = None, [], before.copy() if len(turn) > 1 else before
        try:
            for i, a in enumerate(turn):  # the turn's later actions (tile, token) are drawn too
                labels.append(_label(game, view, state, a))
                seen = view.candidate(state, a)
                if where is not None and "token" in seen and "hex" in where:
                    seen = {**seen, "token_hex": seen.get("hex")}  # a turn's token may go on another tile
                where = seen if where is None else {**seen, **where}
                if i + 1 < len(turn):
                    game.step(state, a)
        except Exception:  # a candidate the view cannot place (never expected) is listed, not drawn
            labels = [_label(game, view, before, a) for a in turn]
        out.append({"action": action, "label": "; ".join(labels),
                    "chosen": index == picked, "where": where,
                    "stats": {k: entry[k] for k in _STAT_KEYS if _is_number(entry.get(k))}})
    if not explanation:
        return out, ""
    what = f"{explanation.get('kind', 'agent')} candidates"
    if explanation.get("forced") or explanation.get("planned"):
        what = "forced: the only legal action" if explanation.get("forced") else "planned earlier this turn"
    if "simulations" in explanation:
        what += f" after {explanation['simulations']} simulations"
    if "legal" in explanation:
        what += f" (best of {explanation['legal']} legal)"
    return out, what


def viewer_data(record: Record, source: str = "record") -> dict[str, Any]:
    """Every position of ``record`` as drawing data (replaying it; RecordError if it does not replay)."""
    header = record.header
    game = make_game(header["game"], **header["options"])
    view = view_for(game)
    steps: list[dict[str, Any]] = []
    decisions = record.decisions

    def played_from(k: int) -> list[int]:
        """The actions the seat of decision ``k`` played from it on, as many as its longest candidate turn
        (they stop where another seat plays)."""
        listed = (decisions[k].get("explanation") or {}).get("candidates") or []
        longest = max([len(c.get("turn", [0])) for c in listed], default=1)
        played: list[int] = []
        for d in decisions[k:k + longest]:
            if d["seat"] != decisions[k]["seat"]:
                break
            played.append(int(d["action"]))
        return played

    def add(state: State, line: dict[str, Any] | None) -> None:
        sheets = score_dicts(game, state)
        step = {"stage": view.stage(state), **view.position(state),
                "scores": [{**view.chart(s), "total": s["total"]} for s in sheets],
                "seat": -1, "move": "", "candidates": [], "explained": ""}
        if line is not None:
            played = played_from(len(steps))  # steps so far: one per decision before this one
            step["candidates"], step["explained"] = _candidates(game, view, state, line, played)
            step.update(seat=int(line["seat"]), move=_label(game, view, state, int(line["action"])),
                        action=int(line["action"]))
        steps.append(step)

    final = replay(record, on_decision=lambda line, before, after: add(before, line), source=source)
    add(final, None)
    stages, last = [], None
    for k, step in enumerate(steps):
        if step["stage"] != last:
            stages.append({"step": k, "label": step["stage"]})
            last = step["stage"]
    players = game.num_players()
    agents = header.get("labels") or header["agents"]
    title = (f"{game.name.capitalize()}, {players} player{'s' if players > 1 else ''}, "
             f"seed {header['seed']}: "
             + ", ".join(agents if len(set(agents)) > 1 else [f"{agents[0]} in every seat"]))
    return {"game": game.name, "title": title, "seed": header["seed"], "agents": agents,
            "specs": header["agents"], "seat_names": [f"player_{i}" for i in range(players)],
            "static": view.static(),
            "legend": view.legend(), "chart_keys": [k for k in steps[0]["scores"][0] if k != "total"],
            "stages": stages, "steps": steps}


def render_html(data: dict[str, Any]) -> str:
    """The page: template, style, script and ``data`` inline.

    Text from the record (agent labels, explanations) cannot leave its place: the title is
    HTML-escaped, the JSON has no ``<``, ``>`` or ``&`` (``\\u003c``...: no ``</script>`` or ``<!--``
    can end its script element) and the slots are filled in one pass, so a label holding
    ``__SCRIPT__`` is not a slot. The viewer inserts record text with ``esc()``."""
    payload = json.dumps(data, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        payload = payload.replace(char, code)
    slots = {"TITLE": html.escape(data["title"]), "STYLE": _asset("viewer.css"),
             "SCRIPT": _asset("viewer.js"), "DATA": payload}
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("viewer.html"))


def write_replay(record_file: str | Path, out: str | Path | None = None) -> Path:
    """Read, replay and draw ``record_file``; write the page (default: beside it, ``.html``)."""
    record_file = Path(record_file)
    data = viewer_data(read_record(record_file), source=f"record {record_file}")
    out = Path(out) if out is not None else record_file.with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(out, render_html(data))


@click.command(name="replay")
@click.argument("record_file", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HTML file to write (default: FILE with .html).")
@click.option("--open", "open_page", is_flag=True, help="Open the page in the default browser.")
@click.option("--screenshot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also save a PNG of the page (headless chromium: make browser).")
@click.option("--step", type=int, default=None, help="Decision shown by --screenshot (default: the last).")
def replay_command(record_file: Path, out: Path | None, open_page: bool, screenshot: Path | None,
                   step: int | None) -> None:
    """Turn the game record FILE into one self-contained HTML page to watch the game."""
    page = write_replay(record_file, out)
    click.echo(f"wrote {page} ({page.stat().st_size // 1024} KiB); open it in any browser "
               f"(add #step=K to open at decision K)")
    if screenshot is not None:
        png = take(page, screenshot, step if step is not None else 10**9)
        click.echo(f"wrote {png} ({png.stat().st_size // 1024} KiB)")
    if open_page and not webbrowser.open(page.resolve().as_uri()):
        click.echo(f"no browser could be opened on this machine: open {page.resolve()} in one", err=True)

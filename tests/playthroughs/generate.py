"""Write (or check) the playthrough files: whole games, decision by decision, in words.

One file per case of :data:`CASES`, ``tests/playthroughs/<game>_<players>p_seed<seed>.txt``: a header
(game, options, seed, policy), the initial position, then per decision its number, the seat to act,
the number of legal actions, the action in the game's own words (``describe_action``, with what the
action takes from the position: the card, the market slot, the drawn tile), and each score sheet that
changed (the categories that are not zero); at the end the final scores, the game's score sheet and its
text picture of the final position. Any change to the rules, the chance streams, the codec, the scores
or the texts shows up as a difference, and so does a change to the greedy agent that plays.

    python -m tests.playthroughs.generate           # regenerate every file
    python -m tests.playthroughs.generate --check   # exit 1 at the first line the engine no longer writes
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.base import make_agent
from envs.core.game import Game, ScoreSheet, State
from envs.core.registry import make_game
from envs.core.rng import numpy_generator
from tests.paths import REPO_ROOT

HERE = REPO_ROOT / "tests" / "playthroughs"
REGENERATE = "python -m tests.playthroughs.generate"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Case:
    """One recorded game: the game, its options, the seed and the agent spec every seat plays."""

    game: str
    players: int
    seed: int
    policy: str = "greedy"
    #: further game options as (name, value) pairs (the case stays hashable)
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def filename(self) -> str:
        return f"{self.game}_{self.players}p_seed{self.seed}.txt"

    def make(self) -> Game:
        return make_game(self.game, players=self.players, **dict(self.options))


CASES: tuple[Case, ...] = (
    Case("cartographers", 1, 7),
    Case("cartographers", 3, 7),
    Case("cascadia", 1, 7),
    Case("cascadia", 2, 7),
    Case("cascadia", 4, 7),
    Case("dorfromantik", 1, 7),
    Case("dorfromantik", 2, 7),
)


# ---- an action in words -------------------------------------------------------------------------


def _cartographers_words(game: Game, state: State, action: int) -> str:
    from envs.cartographers import kernels as K

    f = game.decode_action(action, state)
    where = ""
    if state.meta[K.M_PHASE] == K.PHASE_AMBUSH:
        where = f" on player_{int(state.meta[K.M_TARGET])}'s map"
    cells = " ".join(f"({r},{c})" for r, c in f.get("cells") or [])
    return (f"{game.card_name(state.current_card)}: {game.describe_action(action)}{where}"
            f" -> {f.get('terrain', '?')} on {cells}")


def _cascadia_words(game: Game, state: State, action: int) -> str:
    from envs.cascadia import kernels as K
    from envs.cascadia.data import WILDLIFE

    def tile(t: int) -> str:
        return game.data.tile_codes[t] if t >= 0 else "--"

    def token(w: int) -> str:
        return WILDLIFE[w] if w >= 0 else "--"

    f = game.decode_action(action)
    market, ctl = state.market, state.ctl
    kind = f["kind"]
    if kind == "pair":
        what = f"take tile {tile(market[0, f['slot']])} + {token(market[1, f['slot']])} from slot {f['slot']}"
    elif kind == "nature_pair":
        what = (f"spend a nature token: tile {tile(market[0, f['tile_slot']])} from slot {f['tile_slot']} + "
                f"{token(market[1, f['token_slot']])} from slot {f['token_slot']}")
    elif kind == "nature_redraw":
        slots = [i for i in range(4) if f["subset"] >> i & 1]
        what = f"spend a nature token to redraw the tokens of slots {slots}"
    elif kind == "three_redraw":
        what = "redraw the three identical tokens"
    elif kind == "place_tile":
        what = f"place tile {tile(ctl[K.C_HAND_TILE])} at {f['at']} rotation {f['rotation']}"
    elif kind == "place_token":
        what = f"place the {token(ctl[K.C_HAND_TOKEN])} at {f['at']}"
    else:
        what = f"return the {token(ctl[K.C_HAND_TOKEN])} to the bag"
    return f"{what} [{game.describe_action(action)}]"


def _dorfromantik_words(game: Game, state: State, action: int) -> str:
    drawn = game.drawn_tile(state)
    q, r, rot = game.action_to_placement(state, action)
    task = f" (task: {drawn['task']} {drawn['target']})" if drawn["task"] else ""
    return f"place {drawn['id']}{task} at ({q}, {r}) rotation {rot} [{game.describe_action(action)}]"


_WORDS = {"cartographers": _cartographers_words, "cascadia": _cascadia_words,
          "dorfromantik": _dorfromantik_words}


def action_words(game: Game, state: State, action: int) -> str:
    """The decision in words, read in the position before it is played."""
    words = _WORDS.get(game.name)
    return words(game, state, action) if words else game.describe_action(action)


# ---- score sheets -------------------------------------------------------------------------------


def sheet_line(sheet: ScoreSheet) -> str:
    """The total and every category that is not zero."""
    cats = " ".join(f"{k}={v}" for k, v in sheet.categories.items() if v != 0)
    return f"total {sheet.total}" + (f"  {cats}" if cats else "")


def points(sheet: ScoreSheet) -> tuple[int, dict[str, int]]:
    """What a sheet scores: the total and the categories (extras such as counters left out)."""
    return sheet.total, sheet.categories


def changed_sheets(before: list[ScoreSheet], after: list[ScoreSheet]) -> list[str]:
    """One line per seat whose points changed (one line for all when the seats share one sheet)."""
    if len(after) > 1 and all(points(s) == points(after[0]) for s in after):
        changed = points(after[0]) != points(before[0])
        return [f"  score (all seats): {sheet_line(after[0])}"] if changed else []
    return [f"  score player_{seat}: {sheet_line(new)}"
            for seat, (old, new) in enumerate(zip(before, after, strict=True)) if points(new) != points(old)]


# ---- a whole game -------------------------------------------------------------------------------


def plain(text: str) -> str:
    """``text`` without ANSI colour codes or trailing blanks."""
    return "\n".join(line.rstrip() for line in _ANSI.sub("", text).splitlines())


def milestone(game: Game, old: Any, new: Any) -> str:
    """The milestone passed: the end of what the old progress marker names where the game names it
    (a Cartographers season), else the markers themselves (a Cascadia round, Dorfromantik tens of tiles)."""
    name = getattr(game, "milestone_name", None)
    return f"-- end of {name(old)}" if name else f"-- progress marker {old} -> {new}"


def header(case: Case, game: Game) -> list[str]:
    """The file's first lines: what was played, from which seed, by whom."""
    options = {"players": case.players, **dict(case.options)}
    return [f"# meeplelab playthrough: {game.name}",
            f"# options: {json.dumps(options, sort_keys=True)}",
            f"# seed: {case.seed}",
            f"# policy: {case.policy} in every seat, built by agents.base.make_agent; seat i draws from "
            f"envs.core.rng.numpy_generator(seed, 'seat<i>')",
            f"# num_actions: {game.num_actions}",
            f"# regenerate: {REGENERATE}",
            ""]


def playthrough_text(case: Case) -> str:
    """The whole playthrough file of ``case``."""
    game = case.make()
    agents = [make_agent(case.policy, game) for _ in range(game.num_players())]
    rngs = [numpy_generator(case.seed, f"seat{i}") for i in range(game.num_players())]
    state = game.new_game(case.seed)
    lines = header(case, game) + ["## initial position", plain(game.render_ansi(state)), "", "## decisions"]
    sheets = game.scores(state)
    marker = game.progress_marker(state)
    decision = 0
    while not game.is_over(state):
        seat = game.current_player(state)
        mask = game.legal_mask(state)
        action = int(agents[seat].act(state, mask, rngs[seat]))
        lines.append(f"{decision:04d} player_{seat} ({int(mask.sum())} legal) action {action}: "
                     f"{action_words(game, state, action)}")
        game.step(state, action)
        new_sheets = game.scores(state)
        lines += changed_sheets(sheets, new_sheets)
        sheets = new_sheets
        decision += 1
        if game.progress_marker(state) != marker:
            lines.append(milestone(game, marker, game.progress_marker(state)))
            marker = game.progress_marker(state)
    lines += ["", f"## final scores after {decision} decisions"]
    lines += [f"player_{seat}: {sheet_line(sheet)}" for seat, sheet in enumerate(sheets)]
    lines += ["", "## score sheet", plain(game.score_sheet_text(state)),
              "", "## final position", plain(game.render_ansi(state)), ""]
    return "\n".join(lines)


# ---- files --------------------------------------------------------------------------------------


def first_difference(expected: str, actual: str) -> str | None:
    """Where ``actual`` first departs from ``expected`` (1-based line), or None when they are equal."""
    if expected == actual:
        return None
    old, new = expected.splitlines(), actual.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number}:\n  file:   {a}\n  engine: {b}"
    if len(old) != len(new):
        number = min(len(old), len(new)) + 1
        line = (old + new)[number - 1] if len(old) > len(new) else new[number - 1]
        side = "only the file" if len(old) > len(new) else "only the engine"
        return f"line {number}: {side} has it: {line}"
    return "the files differ in line endings only"


def check(case: Case, directory: Path | None = None) -> str | None:
    """None when the file of ``case`` is what the engine writes now, else the first difference."""
    path = (directory or HERE) / case.filename
    if not path.exists():
        return f"{path.name} is missing"
    problem = first_difference(path.read_text(), playthrough_text(case))
    return None if problem is None else f"{path.name} differs at {problem}"


def stray_files(directory: Path | None = None) -> list[str]:
    """Playthrough files that no case writes."""
    return sorted({p.name for p in (directory or HERE).glob("*.txt")} - {c.filename for c in CASES})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.playthroughs.generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming the first line that differs")
    args = parser.parse_args(argv)
    if args.check:
        differing = [p for p in (check(c) for c in CASES) if p]
        problems = differing + [f"{name} is not written by any case (delete it)" for name in stray_files()]
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"{len(CASES) - len(differing)} of {len(CASES)} playthroughs as recorded"
              + (f"; regenerate with {REGENERATE} if the change is intended" if problems else ""))
        return 1 if problems else 0
    for case in CASES:
        path = HERE / case.filename
        path.write_text(playthrough_text(case))
        print(f"wrote {path.relative_to(REPO_ROOT)} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Game records: one versioned JSON-lines format for every game, written, read and replayed.

A record file (``*.jsonl``) holds one JSON object per line:

1. the header: ``{"format": "meeplelab-record", "version": 1, "game": "cascadia",
   "options": {"players": 4}, "seed": 7, "players": 4, "agents": ["greedy", ...],
   "labels": ["greedy", ...], "position": "<digest of the start position>"}``: ``agents[i]``, the
   full spec of seat i's agent, ``labels[i]`` its short name in tables;
2. one line per decision, in play order: ``{"decision": k, "seat": s, "action": a,
   "move": "<the action in words>", "scores": [<ScoreSheet.as_dict() of every seat after the
   action>], "position": "<digest after the action>", "explanation": {...}}``; ``explanation``
   (present when the acting agent offers one, see :mod:`agents.explain`) lists the agent's best
   candidates: ranked values for greedy, visits and mean values for a search;
3. the end line: ``{"end": true, "decisions": n, "totals": [...], "winners": [...]}``.

A position digest is a SHA-1 (16 hex digits) over every array and scalar of the engine's state,
hidden deck order and chance stream included, so a replay that reaches the same digests has
reproduced every position exactly. :func:`replay` steps a record through the engine and refuses
it, with one line naming the first decision that differs, when an action is illegal there, a
seat, score or position disagrees, the record is truncated or it is of another format version.
Records are built from a finished game's seed and actions (:func:`record_game`), so writing one
never touches the game being played.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np

from agents.base import agent_label
from envs.core.errors import ConfigError, MeeplelabError
from envs.core.game import Game, State
from envs.core.registry import make_game
from envs.core.textfile import parse_json, read_text
from experiments.common.runner import play_game
from experiments.common.writes import write_atomic

FORMAT = "meeplelab-record"
VERSION = 1

#: called for every decision during a replay: (decision line, state before, state after)
OnDecision = Callable[[dict[str, Any], State, State], None]


class RecordError(ConfigError):
    """A record file that cannot be read or does not replay (the message names where)."""


@dataclass
class Record:
    """A parsed record: header, decision lines and the end line."""

    header: dict[str, Any]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    def lines(self) -> Iterator[dict[str, Any]]:
        yield self.header
        yield from self.decisions
        if self.end is not None:
            yield self.end


# ---- building ----------------------------------------------------------------------------------

def canonical_fields(state: State) -> dict[str, Any]:
    """The fields of ``state`` with union-find parents (a ``uf`` array, row 0: Dorfromantik's
    groups) replaced by each node's root: path halving rewrites parents whenever a group is looked
    up, so they depend on which questions were asked, not on the position."""
    fields = dict(vars(state))
    uf = fields.get("uf")
    if isinstance(uf, np.ndarray) and uf.ndim == 2:
        roots = uf[0].copy()
        for _ in range(roots.size):  # pointer jumping until every node points at its root
            jumped = roots[roots]
            if np.array_equal(jumped, roots):
                break
            roots = jumped
        fields["uf"] = np.vstack([roots[None, :], uf[1:]])
    return fields


def position_digest(state: State) -> str:
    """SHA-1 (16 hex digits) of every field of ``state`` (:func:`canonical_fields`): arrays by
    dtype, shape and bytes, hidden deck order and chance stream included."""
    digest = hashlib.sha1()
    for name, value in sorted(canonical_fields(state).items()):
        digest.update(name.encode())
        if isinstance(value, np.ndarray):
            digest.update(f"{value.dtype.str}{value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()[:16]


def spec_text(spec: str | dict[str, Any]) -> str:
    """An agent spec as its full ``name:key=value,...`` text (what rebuilds the same agent)."""
    if isinstance(spec, dict):
        options = ",".join(f"{k}={v}" for k, v in spec.items() if k != "name")
        return str(spec.get("name", "")) + (f":{options}" if options else "")
    return spec.strip()


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (numpy scalars and arrays, tuples, nested dicts)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def score_dicts(game: Game, state: State) -> list[dict[str, Any]]:
    """Every seat's ``ScoreSheet.as_dict()`` as plain data."""
    return [plain(sheet.as_dict()) for sheet in game.scores(state)]


def record_game(game_name: str, options: dict[str, Any], seed: int, agents: Sequence[str | dict[str, Any]],
                actions: Sequence[int], explanations: Sequence[dict[str, Any] | None] = ()) -> Record:
    """The record of a finished game, rebuilt from its seed and actions through the engine."""
    game = make_game(game_name, **options)
    state = game.new_game(int(seed))
    header = {"format": FORMAT, "version": VERSION, "game": game.name, "options": plain(dict(options)),
              "seed": int(seed), "players": game.num_players(), "agents": [spec_text(a) for a in agents],
              "labels": [agent_label(a) for a in agents],
              "position": position_digest(state)}
    record = Record(header)
    for k, action in enumerate(actions):
        seat = game.current_player(state)
        game.step(state, int(action))
        line = {"decision": k, "seat": seat, "action": int(action), "move": game.describe_action(int(action)),
                "scores": score_dicts(game, state), "position": position_digest(state)}
        explanation = explanations[k] if k < len(explanations) else None
        if explanation is not None:
            line["explanation"] = plain(explanation)
        record.decisions.append(line)
    if not game.is_over(state):
        raise RecordError(f"{game.name} seed {seed}: the game is not over after {len(actions)} actions")
    totals = [s["total"] for s in score_dicts(game, state)]
    record.end = {"end": True, "decisions": len(actions), "totals": totals, "winners": _winners(game, state)}
    return record


def _winners(game: Game, state: State) -> list[int]:
    found = getattr(game, "winners", None)
    if callable(found):
        return [int(w) for w in found(state)]
    totals = [s.total for s in game.scores(state)]
    return [i for i, t in enumerate(totals) if t == max(totals)]


def record_from_result(game_name: str, options: dict[str, Any], result: Any) -> Record:
    """The record of a :class:`experiments.common.runner.GameRecord` (played with ``explain=True`` to keep
    the agents' views)."""
    return record_game(game_name, options, result.seed, result.agents, result.actions, result.explanations)


# ---- writing and reading -----------------------------------------------------------------------

def write_record(record: Record, path: str | Path) -> Path:
    """Write ``record`` as JSON lines, atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, "".join(json.dumps(line, separators=(",", ":")) + "\n"
                                      for line in record.lines()))


def read_record(path: str | Path) -> Record:
    """Parse a record file; RecordError (one line) if it is not one of this format version."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"no record file {path}")
    lines = [raw for raw in read_text(path, "record file", RecordError).splitlines() if raw.strip()]
    if not lines:
        raise RecordError(f"record {path} is empty")
    parsed = []
    for number, raw in enumerate(lines, start=1):
        parsed.append(parse_json(raw, f"record {path}: line {number}", RecordError))
        if not isinstance(parsed[-1], dict):
            raise RecordError(f"record {path}: line {number} is not a JSON object")
    header = parsed[0]
    if header.get("format") != FORMAT:
        raise RecordError(f"{path} is not a meeplelab game record (its first line has no "
                          f"\"format\": \"{FORMAT}\")")
    if header.get("version") != VERSION:
        raise RecordError(f"record {path} is format version {header.get('version')!r}; this meeplelab "
                          f"reads version {VERSION}")
    missing = [k for k in ("game", "options", "seed", "agents") if k not in header]
    if missing:
        raise RecordError(f"record {path}: the header lacks {', '.join(missing)}")
    record = Record(header)
    for number, line in enumerate(parsed[1:], start=2):
        if record.end is not None:
            raise RecordError(f"record {path}: line {number} follows the end line")
        if line.get("end"):
            record.end = line
        elif "action" in line and "seat" in line:
            record.decisions.append(line)
        else:
            raise RecordError(f"record {path}: line {number} is neither a decision nor the end line")
    return record


# ---- replaying ---------------------------------------------------------------------------------

def replay(record: Record, on_decision: OnDecision | None = None, source: str = "record") -> State:
    """Step ``record`` through the engine, checking every decision; return the final state.

    Raises RecordError naming the first decision whose seat, action, scores or position differ
    from the engine's, or what is missing at the end. ``on_decision(line, before, after)`` sees
    every decision (the viewer draws from it)."""
    header = record.header
    try:
        game = make_game(header["game"], **header["options"])
        state = game.new_game(int(header["seed"]))
    except MeeplelabError as exc:
        raise RecordError(f"{source}: cannot set up its game: {exc}") from exc
    if len(header["agents"]) != game.num_players():
        raise RecordError(f"{source}: {len(header['agents'])} agents for {game.num_players()} seats")
    if header.get("position") not in (None, position_digest(state)):
        raise RecordError(f"{source}: the start position differs from this engine's for seed "
                          f"{header['seed']} (another rules version?)")
    for k, line in enumerate(record.decisions):
        where = f"{source}: decision {k}"
        if line.get("decision", k) != k:
            raise RecordError(f"{where} is numbered {line.get('decision')!r} "
                              "(a decision is missing or repeated)")
        if game.is_over(state):
            raise RecordError(f"{where}: the game is already over")
        seat, action = game.current_player(state), line["action"]
        if line["seat"] != seat:
            raise RecordError(f"{where}: recorded for seat {line['seat']}, but seat {seat} is to act")
        before = state.copy() if on_decision is not None else state
        try:
            game.step(state, int(action))
        except MeeplelabError as exc:
            raise RecordError(f"{where} (seat {seat}): {exc}") from exc
        _check_scores(where, line.get("scores"), score_dicts(game, state))
        if "position" in line and line["position"] != position_digest(state):
            raise RecordError(f"{where} (seat {seat}, action {action}): the position after it differs "
                              "from the recorded one")
        if on_decision is not None:
            on_decision(line, before, state)
    n = len(record.decisions)
    if record.end is None:
        raise RecordError(f"{source}: the record stops after decision {n - 1} without its end line "
                          "(truncated)")
    if not game.is_over(state):
        raise RecordError(f"{source}: the game is not over after the last decision {n - 1}")
    if record.end.get("decisions") != n:
        raise RecordError(f"{source}: the end line counts {record.end.get('decisions')} decisions, "
                          f"the record holds {n}")
    return state


def _check_scores(where: str, recorded: Any, replayed: list[dict[str, Any]]) -> None:
    if recorded is None:
        return
    if len(recorded) != len(replayed):
        raise RecordError(f"{where}: scores for {len(recorded)} seats, the game has {len(replayed)}")
    for seat, (a, b) in enumerate(zip(recorded, replayed, strict=True)):
        if a != b:
            key = next((k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)), "?")
            raise RecordError(f"{where}: seat {seat}'s score {key} is {a.get(key)!r} in the record, "
                              f"{b.get(key)!r} on replay")


def check_file(path: str | Path) -> Record:
    """Read and fully replay the record at ``path`` (RecordError if it does not replay)."""
    record = read_record(path)
    replay(record, source=f"record {path}")
    return record


# ---- writing records of command runs -----------------------------------------------------------

def parse_seed_list(text: str | None) -> list[int]:
    """``"3,5,10-12"`` -> [3, 5, 10, 11, 12] (ConfigError on anything else)."""
    if not text:
        return []
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        try:
            seeds.extend(range(int(low), int(high) + 1) if dash else [int(low)])
        except ValueError as exc:
            raise ConfigError(f"--record-seeds: {part!r} is not a seed or a range like 10-12") from exc
    return seeds


def record_path(directory: str | Path, seed: int, lineup: int | None = None) -> Path:
    """Where a command writes the record of one game: ``DIR/records/seed_<seed>[_lineup_<i>].jsonl``."""
    name = f"seed_{seed}" + ("" if lineup is None else f"_lineup_{lineup}") + ".jsonl"
    return Path(directory) / "records" / name


def replay_with_explanations(game_name: str, options: dict[str, Any], seed: int,
                             agents: Sequence[str | dict[str, Any]],
                             actions: Sequence[int] | None = None) -> Record:
    """Play a finished game again with explaining agents and return its record.

    Commands write records after their results, from such a second play, so recording can never
    change a result. Games depend only on their seed and agents, so the second play repeats the
    ``actions`` of the first; where it does not (an agent with a time limit), the record keeps the
    game as first played, without the agents' views."""
    result = play_game(make_game(game_name, **options), list(agents), int(seed), explain=True)
    if actions is not None and list(result.actions) != [int(a) for a in actions]:
        return record_game(game_name, options, seed, agents, actions)
    return record_from_result(game_name, options, result)


def chosen(position: int, seed: int, first: int | None, seeds: Sequence[int]) -> bool:
    """Whether the game at ``position`` (play order) with ``seed`` is to be recorded."""
    return (first is not None and position < first) or seed in seeds


def record_options(command: Callable) -> Callable:
    """The ``--record N`` and ``--record-seeds LIST`` options of ``eval`` and ``simulate``."""
    command = click.option("--record-seeds", "record_seeds", metavar="LIST",
                           help="Write game records of the games on these seeds, e.g. 3,7,10-12.")(command)
    return click.option("--record", "record_first", type=int, metavar="N",
                        help="Write game records (DIR/records/*.jsonl, for meeplelab replay) of the first "
                             "N games; results are unchanged.")(command)


def record_request(first: int | None, seeds_text: str | None,
                   out_dir: str | Path | None) -> tuple[int | None, list[int]] | None:
    """Check ``--record``/``--record-seeds`` before anything is played: None when no record is
    asked for, else (first, seeds). Records go beside the results, so ``--out`` is needed."""
    seeds = parse_seed_list(seeds_text)
    if first is None and not seeds:
        return None
    if first is not None and first < 0:
        raise ConfigError(f"--record must be a number of games >= 0, got {first}")
    if out_dir is None:
        raise ConfigError("--record/--record-seeds write records beside the results: give --out DIR")
    return first, seeds


def write_simulation_records(game_name: str, options: dict[str, Any], agents: Sequence[str], first_seed: int,
                             games: int, first: int | None, seeds: Sequence[int],
                             out_dir: str | Path) -> list[Path]:
    """Records of a simulation's games (the first ``first`` seeds and those in ``seeds`` that the run
    covers) as ``out_dir/records/seed_<s>.jsonl``, played again after the run (see
    :func:`replay_with_explanations`)."""
    wanted = [s for s in range(first_seed, first_seed + games) if chosen(s - first_seed, s, first, seeds)]
    return [write_record(replay_with_explanations(game_name, options, s, agents), record_path(out_dir, s))
            for s in wanted]

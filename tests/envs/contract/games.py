"""What the contract suite knows about each registered game: the seat counts its engine accepts, how to
encode a decoded action back, where its hidden information lives and how its score categories add up.

A new game adds one :class:`GameFacts` to :data:`FACTS`; ``test_every_registered_game_has_facts``
fails until it does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from envs.core.game import Game, ScoreSheet, State

#: a hidden group: (state field, flat indices) pieces whose values together are one shuffled unknown
HiddenGroup = list[tuple[str, np.ndarray]]


@dataclass(frozen=True)
class GameFacts:
    """The per-game knowledge the generic checks need."""

    #: every seat count the engine accepts (it must refuse one fewer and one more)
    seats: tuple[int, ...]
    #: ``encode(decode(action))`` through the game's own codec, in ``state``
    round_trip: Callable[[Game, State, int], int]
    #: the hidden groups of a state (what determinize may reorder)
    hidden: Callable[[State], list[HiddenGroup]]
    #: fields holding the state's chance stream (hidden future as a whole)
    streams: tuple[str, ...]
    #: raises AssertionError unless the sheets' categories add up as the game documents
    check_scores: Callable[[Game, list[ScoreSheet]], None]
    #: raises AssertionError unless the decoded legal ``action`` agrees with the position
    check_legal_decoded: Callable[[Game, State, int], None]


# ---- Cartographers ------------------------------------------------------------------------------


def _cartographers_round_trip(game: Game, state: State, action: int) -> int:
    from envs.cartographers.game import FALLBACK_TERRAINS

    f = game.decode_action(action, state)
    if f["kind"] == "place":
        return game.encode_action("place", f["anchor"], f["terrain_option"], f["shape"], f["orientation"])
    if f["kind"] == "fallback":
        return game.encode_action("fallback", f["cells"][0], FALLBACK_TERRAINS.index(f["terrain"]))
    if f["kind"] == "ambush":
        return game.encode_action("ambush", f["anchor"], orientation=f["orientation"])
    return game.encode_action(f["kind"], f["cells"][0])


def _cartographers_hidden(state: State) -> list[HiddenGroup]:
    """The unrevealed deck and the ambush pile: which ambushes are in which is unknown too."""
    from envs.cartographers import kernels as K

    m = state.meta
    deck = np.arange(int(m[K.M_POS]), int(m[K.M_LEN]))
    pile = np.arange(int(m[K.M_AMB_POS]), state.amb.size)
    return [[("deck", deck), ("amb", pile)]]


def _cartographers_scores(game: Game, sheets: list[ScoreSheet]) -> None:
    """Per season: the two edicts, coins and monsters (<= 0) make the season's total (an informational
    subtotal, ``<season>_total``); the four season totals make the final score."""
    for seat, sheet in enumerate(sheets):
        cats = sheet.categories
        seasons = [k.removesuffix("_total") for k in cats if k.endswith("_total")]
        assert len(seasons) == 4, f"player_{seat}: expected 4 season totals in {sorted(cats)}"
        for season in seasons:
            parts = {k: v for k, v in cats.items() if k.startswith(f"{season}_") and k != f"{season}_total"}
            assert len(parts) == 4, f"player_{seat} {season}: expected 2 edicts, coins, monsters: {parts}"
            assert sum(parts.values()) == cats[f"{season}_total"], f"player_{seat} {season}: {cats}"
            assert cats[f"{season}_monsters"] <= 0, f"player_{seat} {season}: monsters count against"
        season_sum = sum(cats[f"{s}_total"] for s in seasons)
        assert season_sum == sheet.total, f"player_{seat}: seasons {season_sum} != total {sheet.total}"


def _cartographers_legal_decoded(game: Game, state: State, action: int) -> None:
    """A legal drawing covers only empty cells of the map being drawn on."""
    from envs.cartographers import kernels as K

    f = game.decode_action(action, state)
    cells = f.get("cells")
    assert cells, f"legal action {action} decodes without its cells: {f}"
    grid = state.grid[K.decision_map(state.meta)]
    for r, c in cells:
        assert 0 <= r < 11 and 0 <= c < 11, f"legal action {action} leaves the map: {f}"
        assert grid[r * 11 + c] == 0, f"legal action {action} covers a filled cell ({r},{c}): {f}"


# ---- Cascadia -----------------------------------------------------------------------------------

_CASCADIA_PHASE = {"pair": "market", "nature_pair": "market", "nature_redraw": "market",
                   "three_redraw": "market", "place_tile": "tile", "place_token": "token",
                   "return_token": "token"}


def _cascadia_round_trip(game: Game, state: State, action: int) -> int:
    return game.encode_action(**game.decode_action(action))


def _cascadia_hidden(state: State) -> list[HiddenGroup]:
    """The unseen tiles (the stack and the box)."""
    from envs.cascadia import kernels as K

    return [[("stack", np.arange(int(state.ctl[K.C_STACK_POS]), state.stack.size))]]


def _cascadia_scores(game: Game, sheets: list[ScoreSheet]) -> None:
    """Wildlife, corridors, majority bonuses and nature tokens make the total; ``base`` is the total
    without the bonuses, and the extra subtotals are the sums of their categories."""
    for seat, sheet in enumerate(sheets):
        cats, extra = sheet.categories, sheet.extra
        assert sum(cats.values()) == sheet.total, f"player_{seat}: {cats} != total {sheet.total}"
        bonus = sum(v for k, v in cats.items() if k.startswith("bonus_"))
        corridors = sum(v for k, v in cats.items() if k.startswith("corridor_"))
        assert extra["base"] == sheet.total - bonus, f"player_{seat}: base {extra['base']}"
        assert extra["bonus"] == bonus and extra["habitat"] == corridors, f"player_{seat}: {extra}"
        assert extra["wildlife"] == sheet.total - bonus - corridors - cats["nature_tokens"], f"player_{seat}"


def _cascadia_legal_decoded(game: Game, state: State, action: int) -> None:
    """A legal action belongs to the phase; a tile goes on an empty hex touching the area, a token on
    an empty tile."""
    from envs.cascadia.data import CELL_INDEX

    f = game.decode_action(action)
    assert _CASCADIA_PHASE[f["kind"]] == game.phase(state), f"legal {f} in phase {game.phase(state)}"
    p = game.current_player(state)
    if f["kind"] == "place_tile":
        cell = CELL_INDEX[f["at"]]
        assert state.tiles[p, cell] < 0 and state.front[p, cell] != 0, f"legal {f} on a bad hex"
    elif f["kind"] == "place_token":
        cell = CELL_INDEX[f["at"]]
        assert state.tiles[p, cell] >= 0 and state.tokens[p, cell] < 0, f"legal {f} on a bad hex"


# ---- Dorfromantik -------------------------------------------------------------------------------


def _dorfromantik_round_trip(game: Game, state: State, action: int) -> int:
    return game.encode_action(state, *game.action_to_placement(state, action))


def _dorfromantik_hidden(state: State) -> list[HiddenGroup]:
    """The landscape stack with the tiles set aside unseen, the task stack, each type's marker pile."""
    from envs.dorfromantik import kernels as K

    m = state.meta
    groups = [[("deck", np.r_[0:int(m[K.M_UNSEEN]), int(m[K.M_LAND_POS]):K.NUM_LAND])],
              [("deck", np.arange(K.DECK_TASK + int(m[K.M_TASK_POS]), K.DECK_MARKER))]]
    for t in range(5):
        lo = K.DECK_MARKER + 5 * t
        groups.append([("deck", np.arange(lo + int(m[K.M_MARKER_POS + t]), lo + 5))])
    return groups


def _dorfromantik_scores(game: Game, sheets: list[ScoreSheet]) -> None:
    """Tasks, flags, longest rail and river make the one shared total; the per-type extras add up to
    their category."""
    first = sheets[0]
    for seat, sheet in enumerate(sheets):
        assert sheet == first, f"player_{seat}'s sheet differs from player_0's in a cooperative game"
    cats, extra = first.categories, first.extra
    assert sum(cats.values()) == first.total, f"{cats} != total {first.total}"
    for category in ("tasks", "flags"):
        detail = sum(v for k, v in extra.items() if k.startswith(f"{category}_"))
        assert detail == cats[category], f"{category}: {cats[category]}, its per-type detail {detail}"


def _dorfromantik_legal_decoded(game: Game, state: State, action: int) -> None:
    """A legal action places the drawn tile at one of its legal placements."""
    placement = game.action_to_placement(state, action)
    assert placement in set(game.legal_placements(state)), f"legal action {action} places at {placement}"


FACTS: dict[str, GameFacts] = {
    "cartographers": GameFacts(tuple(range(1, 7)), _cartographers_round_trip, _cartographers_hidden,
                               ("rng",), _cartographers_scores, _cartographers_legal_decoded),
    "cascadia": GameFacts(tuple(range(1, 5)), _cascadia_round_trip, _cascadia_hidden, ("rng",),
                          _cascadia_scores, _cascadia_legal_decoded),
    "dorfromantik": GameFacts(tuple(range(1, 7)), _dorfromantik_round_trip, _dorfromantik_hidden,
                              ("stream", "seed"), _dorfromantik_scores, _dorfromantik_legal_decoded),
}


def cases() -> list[tuple[str, int]]:
    """(game name, players) for every game and seat count."""
    return [(name, players) for name, facts in FACTS.items() for players in facts.seats]

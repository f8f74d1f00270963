"""The worked examples of the seed rules (002) and the project's Dorfromantik decisions."""

from __future__ import annotations

import pytest

from envs.core.errors import IllegalActionError
from envs.dorfromantik import kernels as K
from envs.dorfromantik.game import DorfromantikGame
from tests.envs.dorfromantik.helpers import put, rotation_with

# directions: 0 E, 1 NE, 2 NW, 3 W, 4 SW, 5 SE
E, NE, NW, W, SW, SE = range(6)


@pytest.fixture(scope="module")
def game() -> DorfromantikGame:
    return DorfromantikGame(players=3)


def opening(game: DorfromantikGame, landscape: list[str], landscape_count: int | None = None,
            forest_markers: list[int] | None = None):
    """Seed example: forest 4 task at the centre, a river 5 task beside it, a village task third.

    T03 (MMWMMW) at the origin has forest toward NE and SW; T09 (river, MMSMMS) west of it runs its
    river NW-SE; T12 (village) south-east of the origin."""
    state = game.new_game_with_stacks(3, landscape=landscape, tasks=["T03", "T09", "T12", "T06", "T07"],
                                      markers={"forest": forest_markers or [4, 5], "river": [5]},
                                      landscape_count=landscape_count)
    assert game.drawn_tile(state) == {"tile": game.data.tile_ids.index("T03"), "id": "T03",
                                      "edges": game.drawn_tile(state)["edges"], "task": "forest", "target": 4}
    game.place_at(state, 0, 0, rotation_with(game, "T03", {NE: "W", SW: "W"}))
    assert game.open_tasks(state)[0]["size"] == 1 and game.open_tasks(state)[0]["target"] == 4
    assert game.drawn_tile(state)["id"] == "T09" and game.drawn_tile(state)["target"] == 5
    game.place_at(state, -1, 0, rotation_with(game, "T09", {NW: "S", SE: "S"}))
    sizes = {t["type"]: t["size"] for t in game.open_tasks(state)}
    assert sizes == {"forest": 1, "river": 1}
    assert game.drawn_tile(state)["id"] == "T12"        # third turn: a task tile again
    game.place_at(state, 0, 1, 0)
    assert len(game.open_tasks(state)) == 3
    return state


def test_first_tile_only_at_origin(game):
    state = game.new_game(11)
    legal = game.legal_placements(state)
    assert sorted(legal) == [(0, 0, rot) for rot in range(6)]
    with pytest.raises(IllegalActionError, match="origin"):
        game.place_at(state, 1, 0, 0)


def test_forest_four_completed_by_fourth_tile_then_a_task_is_drawn(game):
    state = opening(game, ["L18", "L04", "L28"])
    assert game.drawn_tile(state)["id"] == "L18"      # three open tasks: a landscape tile
    game.place_at(state, 1, -1, rotation_with(game, "L18", {SW: "W", NW: "M"}))
    assert game.drawn_tile(state)["id"] == "L04"
    game.place_at(state, 0, -1, rotation_with(game, "L04", {E: "W", SE: "W"}))
    forest = [t for t in game.tasks(state) if t["type"] == "forest"][0]
    assert forest["size"] == 3 and forest["status"] == "open"
    assert game.drawn_tile(state)["id"] == "L28"
    game.place_at(state, 1, 0, rotation_with(game, "L28", {NW: "W", W: "W", SW: "W"}))
    forest = [t for t in game.tasks(state) if t["type"] == "forest"][0]
    assert forest["status"] == "completed" and forest["size"] == 4
    assert game.breakdown(state)["tasks_forest"] == 4
    # the completed task no longer counts: two open tasks, so the next draw is a task tile
    assert len(game.open_tasks(state)) == 2
    assert game.drawn_tile(state)["id"] == "T06"
    assert game.drawn_tile(state)["target"] == 5


def test_joining_three_and_one_forest_skips_the_target_and_fails(game):
    state = opening(game, ["L18", "L04", "L13", "L46"])
    game.place_at(state, 1, -1, rotation_with(game, "L18", {SW: "W", NW: "M"}))
    game.place_at(state, 0, -1, rotation_with(game, "L04", {E: "W", SE: "W"}))
    # a separate one-tile forest south-east, touching only the village task by meadow
    game.place_at(state, 1, 1, rotation_with(game, "L13", {NW: "W", W: "M"}))
    assert [t["size"] for t in game.tasks(state) if t["type"] == "forest"] == [3]
    # L46 (WWWWTT) joins the 3-tile forest and the 1-tile forest at once: 3 + 1 + 1 = 5 > 4
    game.place_at(state, 1, 0, rotation_with(game, "L46", {NW: "W", SE: "W", W: "W", SW: "W"}))
    forest = [t for t in game.tasks(state) if t["type"] == "forest"][0]
    assert forest["size"] == 5 and forest["status"] == "failed"
    assert game.breakdown(state)["tasks"] == 0
    assert state.meta[K.M_FAILED] == 1
    assert game.drawn_tile(state)["task"] is not None   # one open task fewer: a task tile comes next


def test_end_after_last_landscape_with_chained_task_draws(game):
    state = opening(game, ["L18", "L04", "L28"], landscape_count=3)
    game.place_at(state, 1, -1, rotation_with(game, "L18", {SW: "W", NW: "M"}))
    game.place_at(state, 0, -1, rotation_with(game, "L04", {E: "W", SE: "W"}))
    game.place_at(state, 1, 0, rotation_with(game, "L28", {NW: "W", W: "W", SW: "W"}))
    assert game.stack_counts(state)["landscape"] == 0
    assert not game.is_over(state)                      # forest 4 done: a task is drawn (chained)
    drawn = game.drawn_tile(state)
    assert drawn["id"] == "T06" and drawn["target"] == 5
    # T06 (all forest) joins the completed forest of 4: exactly 5, completed at once on placement
    game.place_at(state, 2, -1, 0)
    assert [t["status"] for t in game.tasks(state) if t["type"] == "forest"] == ["completed", "completed"]
    assert not game.is_over(state)                      # still fewer than 3 open: another task
    assert game.drawn_tile(state)["id"] == "T07"
    q, r, rot = next(m for m in game.legal_placements(state))
    game.place_at(state, q, r, rot)
    assert len(game.open_tasks(state)) == 3             # decision 4 keeps the new rail task open
    assert game.is_over(state)                          # a landscape is needed and none is left
    assert game.drawn_tile(state) is None
    assert game.current_player(state) == -1
    assert game.stack_counts(state)["task"] == 20
    assert game.breakdown(state)["tasks_forest"] == 9


def field_flag_position(game, close: bool):
    """L48 (three field arms) at the origin; L33 (yellow flag) east, L19 north-west, L26 south-west,
    and when ``close`` L07 south-east, which closes the five-tile field."""
    state = game.new_game(1)
    put(game, state, "L48", 0, 0, {E: "G", NW: "G", SW: "G"})
    put(game, state, "L33", 1, 0, {W: "G"})
    put(game, state, "L19", 0, -1, {SE: "G"})
    put(game, state, "L26", -1, 1, {NE: "G", E: "G"})
    if close:
        put(game, state, "L07", 0, 1, {W: "G"})
    return state


def test_closed_field_with_flag_scores_its_tiles(game):
    state = field_flag_position(game, close=True)
    b = game.breakdown(state)
    assert b["flags_field"] == 5 and b["flags"] == 5


def test_open_field_with_flag_scores_zero(game):
    state = field_flag_position(game, close=False)
    assert game.breakdown(state)["flags"] == 0


def test_score_sum_42_5_8_5_is_60(game):
    state = field_flag_position(game, close=True)
    # completed markers worth 42 over the five types and longest lines of 8 and 5 (set directly)
    state.meta[K.M_TASK_POINTS:K.M_TASK_POINTS + 5] = [16, 6, 10, 5, 5]
    state.meta[K.M_MAX_RAIL] = 8
    state.meta[K.M_MAX_RIVER] = 5
    sheet = game.scores(state)[0]
    assert sheet.categories == {"tasks": 42, "flags": 5, "longest_rail": 8, "longest_river": 5}
    assert sheet.total == 60
    assert all(s.total == 60 for s in game.scores(state))   # one shared score for all three seats

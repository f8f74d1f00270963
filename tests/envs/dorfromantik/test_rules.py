"""Single rules: edge matching, adjacency, new-task limits (decision 4), several tasks at once, the
draw rule, decision 5, bad options and data files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envs.core.errors import ConfigError, DataFileError, IllegalActionError
from envs.core.registry import make_game
from envs.dorfromantik import kernels as K
from envs.dorfromantik.data import DEFAULT_PATH, load_data
from envs.dorfromantik.game import DorfromantikGame
from tests.envs.dorfromantik.helpers import put, rotation_with

E, NE, NW, W, SW, SE = range(6)


@pytest.fixture(scope="module")
def game() -> DorfromantikGame:
    return DorfromantikGame()


def test_data_counts_and_flags(game):
    d = game.data
    assert len(d.tile_ids) == 73 and d.tile_ids[0] == "L01" and d.tile_ids[48] == "T01"
    assert sorted(np.bincount(d.task_type[48:], minlength=6)[1:].tolist()) == [5] * 5
    assert {d.tile_ids[i]: int(d.flag[i]) for i in np.flatnonzero(d.flag)} == {"L33": 2, "L38": 3, "L43": 1}
    assert sorted(d.markers[0].tolist()) == [4, 5, 5, 6, 6]
    # T05 and T25 carry the research note's photo corrections
    assert "".join("MWGVTS"[e] for e in d.edges[d.tile_ids.index("T05")]) == "GGMMMM"
    assert "".join("MWGVTS"[e] for e in d.edges[d.tile_ids.index("T25")]) == "WWWMVM"


def test_rotation_turns_clockwise(game):
    # L01 GGMTTM: file edges clockwise; direction order E, NE, NW, W, SW, SE is counter-clockwise
    tile = game.data.tile_ids.index("L01")
    assert "".join("MWGVTS"[e] for e in game._rot_edges[tile, 0]) == "GMTTMG"
    # one clockwise step moves the edge shown at E to SE
    for rot in range(6):
        assert game._rot_edges[tile, (rot + 1) % 6, SE] == game._rot_edges[tile, rot, E]


def test_players_out_of_range():
    for bad in (0, 7, -1, "2", 2.0, True):
        with pytest.raises(ConfigError):
            DorfromantikGame(players=bad)
    with pytest.raises(ConfigError):
        make_game("dorfromantik", players=9)
    assert make_game("dorfromantik", players=6).num_players() == 6


def test_current_player_rotates(game):
    g = DorfromantikGame(players=4)
    state = g.new_game(2)
    seats = []
    for _ in range(6):
        seats.append(g.current_player(state))
        g.place_at(state, *g.legal_placements(state)[0])
    assert seats == [0, 1, 2, 3, 0, 1]


def test_rail_only_against_rail(game):
    state = game.new_game(1)
    put(game, state, "L05", 0, 0, {E: "T", W: "T"})            # straight rail E-W (GTVMTM)
    game.set_hand(state, "L48")                                 # GMGMGM: no rail
    with pytest.raises(IllegalActionError, match="rail/river mismatch"):
        game.place_at(state, 1, 0, 0)
    game.set_hand(state, "L09")                                 # MWTMGT: straight rail
    game.place_at(state, 1, 0, rotation_with(game, "L09", {W: "T"}))
    game.set_hand(state, "L22")                                 # GGGTMT: rail must not meet grain
    with pytest.raises(IllegalActionError, match="rail/river mismatch"):
        game.place_at(state, -1, 0, rotation_with(game, "L22", {E: "G"}))
    # an open rail edge toward an empty position is fine
    game.place_at(state, 0, -1, rotation_with(game, "L22", {SE: "M"}))
    assert game.breakdown(state)["longest_rail"] == 2


def test_river_only_against_river(game):
    state = game.new_game(1)
    put(game, state, "L02", 0, 0, {E: "S", W: "S"})            # SVMSWM: straight river
    game.set_hand(state, "L05")                                 # rail tile
    with pytest.raises(IllegalActionError, match="river"):
        game.place_at(state, 1, 0, rotation_with(game, "L05", {W: "T"}))
    with pytest.raises(IllegalActionError, match="field edge toward W meets a river"):
        game.place_at(state, 1, 0, rotation_with(game, "L05", {W: "G"}))
    game.set_hand(state, "L03")                                 # river tile joins the river
    game.place_at(state, -1, 0, rotation_with(game, "L03", {E: "S"}))
    assert game.breakdown(state)["longest_river"] == 2


def test_meadow_forest_field_village_meet_freely(game):
    state = game.new_game(1)
    put(game, state, "L28", 0, 0, {E: "G"})                     # GGGWWW
    put(game, state, "L35", 1, 0, {W: "V"})                     # village against field: allowed
    assert len(game.placed_tiles(state)) == 2


def test_not_adjacent_and_occupied(game):
    state = game.new_game(1)
    game.place_at(state, *game.legal_placements(state)[0])
    with pytest.raises(IllegalActionError, match="not adjacent"):
        game.place_at(state, 3, 0, 0)
    with pytest.raises(IllegalActionError, match="already holds"):
        game.place_at(state, 0, 0, 0)
    action = game.encode_action(state, 3, 0, 0)
    with pytest.raises(IllegalActionError, match="not adjacent"):
        game.step(state, action)
    with pytest.raises(IllegalActionError, match="outside the action space"):
        game.step(state, game.num_actions)


def test_new_task_may_not_exceed_its_target(game):
    state = game.new_game(1)
    put(game, state, "L18", 0, 0, {W: "M"})                     # forest on five edges
    put(game, state, "L28", 1, 0, {W: "W", NW: "W", SW: "W"})   # forest 2
    put(game, state, "L35", -1, 1, {NE: "W"})                   # forest 3
    put(game, state, "L13", 0, -1, {SE: "W"})                   # forest 4, no task on it
    game.set_hand(state, "T19", marker=4)                       # MMMMWW forest task, target 4
    legal = set(game.legal_placements(state))
    tile = game.data.tile_ids.index("T19")
    edge_legal = {(int(c) % K.GRID_SIDE - K.GRID_RADIUS, int(c) // K.GRID_SIDE - K.GRID_RADIUS, rot)
                  for c in state.frontier[:state.meta[K.M_FRONT]] for rot in range(6)
                  if K.fits(state.cells, game._rot_edges, tile, rot, int(c))}
    excluded = edge_legal - legal
    assert legal and excluded and legal < edge_legal
    for move, allowed in [(m, True) for m in legal] + [(m, False) for m in excluded]:
        probe = state.copy()
        cell = (move[1] + K.GRID_RADIUS) * K.GRID_SIDE + move[0] + K.GRID_RADIUS
        K.place(probe.cells, probe.frontier, probe.placed, probe.uf, probe.tasks, probe.meta,
                game._rot_edges, game._task_type, cell, move[2])     # bypasses the legality check
        task = game.tasks(probe)[-1]
        assert (task["size"] <= 4 and not (task["open_edges"] == 0 and task["size"] < 4)) == allowed


def test_new_task_limit_reasons(game):
    state = game.new_game(1)
    put(game, state, "L18", 0, 0, {W: "M"})
    put(game, state, "L28", 1, 0, {W: "W", NW: "W", SW: "W"})
    put(game, state, "L35", -1, 1, {NE: "W"})
    put(game, state, "L13", 0, -1, {SE: "W"})                   # forest 4 now
    game.set_hand(state, "T19", marker=4)
    # east of L18's NE neighbourhood: touching the 4-tile forest with a forest edge exceeds 4
    rot = rotation_with(game, "T19", {SW: "W"})
    problem = game.placement_problem(state, 1, -1, rot)
    assert problem is not None and "above the target 4" in problem and "decision 4" in problem
    # closing below: T19's two forest edges both against non-forest edges
    game2 = DorfromantikGame()
    s2 = game2.new_game(1)
    put(game2, s2, "L31", 0, 0, {E: "M"})                       # MVMVMV
    put(game2, s2, "L47", 1, -1, {SW: "G"})                     # GGGVVV, next to the origin
    game2.set_hand(s2, "T19", marker=5)
    # (1, 0) touches L31 (W) and L47 (NW): T19 with forest toward W and NW faces meadow/grain
    rot = rotation_with(game2, "T19", {W: "W", NW: "W"})
    edge_w = game2._rot_edges[game2.data.tile_ids.index("L31"), rotation_with(game2, "L31", {E: "M"}), E]
    assert edge_w == 0
    problem = game2.placement_problem(s2, 1, 0, rot)
    assert problem is not None and "below the target 5" in problem
    with pytest.raises(IllegalActionError, match="new task's limit"):
        game2.place_at(s2, 1, 0, rot)


def test_decision4_fallback_places_anywhere_and_fails(tmp_path):
    # a custom tile set in which L18 is all forest makes a board whose whole rim is forest
    text = DEFAULT_PATH.read_text().replace("{id: L18, edges: MWWWWW}", "{id: L18, edges: WWWWWW}")
    path = tmp_path / "forest.yaml"
    path.write_text(text)
    game = DorfromantikGame(data_path=str(path))
    state = game.new_game(4)
    game.set_hand(state, "L18")
    game.place_at(state, 0, 0, 0)
    game.set_hand(state, "T06", marker=4)                       # all forest, target 4
    game.place_at(state, 1, 0, 0)                               # forest 2 (task tile joins)
    task = game.tasks(state)[0]
    assert task["size"] == 2 and task["status"] == "open"
    # a second all-forest task: every position joins the forest, 3 <= 4 is still fine
    game.set_hand(state, "T06", marker=4)
    legal = set(game.legal_placements(state))
    edge_legal = {(q, r, rot) for q, r, rot in legal}
    assert len(edge_legal) == 6 * 8                             # all 8 frontier cells, 6 rotations
    game.place_at(state, 0, 1, 0)                               # forest 3: fine, nothing fails
    game.set_hand(state, "T06", marker=4)
    game.place_at(state, -1, 1, 0)                              # forest 4: both tasks complete
    assert [t["status"] for t in game.tasks(state)] == ["completed"] * 3
    game.set_hand(state, "T06", marker=4)
    # every position now joins the 4-tile forest: 5 > 4 everywhere, so every edge-legal one is allowed
    legal = game.legal_placements(state)
    assert len(legal) == 6 * len({(q, r) for q, r, _ in legal}) and legal
    q, r, rot = legal[0]
    assert game.placement_problem(state, q, r, rot) is None
    game.place_at(state, q, r, rot)
    last = game.tasks(state)[-1]
    assert last["status"] == "failed" and last["size"] == 5


def test_several_tasks_complete_at_once(game):
    state = game.new_game(1)
    put(game, state, "T03", 0, 0, {NE: "W", SW: "W"}, marker=5)  # forest 5
    put(game, state, "T19", 1, -1, {SW: "W", SE: "W"}, marker=5)  # forest 5 in the same forest
    put(game, state, "L18", 1, 0, {NW: "W", W: "M"})
    put(game, state, "L04", -1, 1, {NE: "W"})
    tasks = game.tasks(state)
    assert [t["size"] for t in tasks] == [4, 4] and all(t["status"] == "open" for t in tasks)
    put(game, state, "L24", 2, 0, {W: "W"})                      # GGMWWM: the fifth forest tile
    assert [t["status"] for t in game.tasks(state)] == ["completed", "completed"]
    assert game.breakdown(state)["tasks_forest"] == 10
    assert state.meta[K.M_DONE] == 2


def test_area_count_is_tiles_not_edges(game):
    state = game.new_game(1)
    put(game, state, "T06", 0, 0, {}, marker=4)                  # six forest edges, one tile
    put(game, state, "L18", 1, 0, {W: "W", NW: "W"})             # touches with one edge: 2 tiles
    assert game.tasks(state)[0]["size"] == 2


def test_draw_rule_and_open_task_limit_over_random_games(game):
    rng = np.random.default_rng(0)
    for seed in range(6):
        state = game.new_game(seed)
        turn = 0
        while not game.is_over(state):
            drawn = game.drawn_tile(state)
            open_now = len(game.open_tasks(state))
            assert open_now <= 3
            if turn < 3:
                assert drawn["task"] is not None
            elif open_now < 3 and game.stack_counts(state)["task"] + (drawn["task"] is not None) > 0:
                assert drawn["task"] is not None
            else:
                assert drawn["task"] is None
            legal = game.legal_placements(state)
            game.place_at(state, *legal[rng.integers(len(legal))])
            turn += 1
        assert game.stack_counts(state)["landscape"] == 0
        assert state.meta[K.M_PLACED] == 45 + state.meta[K.M_TASK_POS] - state.meta[K.M_SET_ASIDE]


def test_decision5_tile_without_position_is_set_aside(game):
    state = game.new_game(1)
    put(game, state, "L05", 0, 0, {E: "T"})                      # rail toward E
    put(game, state, "L02", 1, -1, {SE: "S"})           # river toward SE, i.e. toward (1, 0)
    # (1, 0) faces a rail edge (from the W) and a river edge (from the NW): no base tile fits there.
    # Keep only that position open to exercise the rule.
    cell = (0 + K.GRID_RADIUS) * K.GRID_SIDE + (1 + K.GRID_RADIUS)
    for i in range(state.meta[K.M_FRONT]):
        state.cells[state.frontier[i], 3] = -1
    state.frontier[0] = cell
    state.cells[cell, 3] = 0
    state.meta[K.M_FRONT] = 1
    state.meta[K.M_DRAWN] = -1
    before_land = game.stack_counts(state)["landscape"]
    before_task = game.stack_counts(state)["task"]
    K.advance(state.cells, state.frontier, state.deck, state.meta, game._rot_edges, game._task_type)
    assert game.is_over(state)                                   # nothing ever fits: all set aside
    # every remaining landscape tile, and every task tile drawn on the way, was set aside
    assert game.stack_counts(state)["task"] == 0
    assert state.meta[K.M_SET_ASIDE] == before_land + before_task
    assert game.stack_counts(state)["landscape"] == 0


@pytest.mark.parametrize("mutate, message", [
    (lambda t: t.replace("{id: L01, edges: GGMTTM}", "{id: L01, edges: GGMTT}"), "6 letters"),
    (lambda t: t.replace("{id: L01, edges: GGMTTM}", "{id: L01, edges: TTMTTM}"), "more than two"),
    (lambda t: t.replace("task: river}", "task: lake}", 1), "task must be one of"),
    (lambda t: t.replace("forest: [4, 5, 5, 6, 6]", "forest: [4, 5]"), "task_markers.forest"),
    (lambda t: t.replace("landscape_tiles:", "landscape_tilez:"), "missing key"),
    (lambda t: t + "\n  - [unclosed", "YAML"),
])
def test_malformed_data_file(tmp_path: Path, mutate, message):
    path = tmp_path / "bad.yaml"
    path.write_text(mutate(DEFAULT_PATH.read_text()))
    with pytest.raises(DataFileError, match=message):
        load_data(path)


def test_missing_data_file(tmp_path):
    with pytest.raises(DataFileError, match="not found"):
        load_data(tmp_path / "nope.yaml")

"""Each game's observation/action layout against its own observation() and decode_action().

Positions come from random play; every check reads the game's state directly (grids, occupied
cells, placed tiles, legal placements) and compares it with what the layout says sits where.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.layout import HEX_KERNEL_MASK, GameLayout
from envs.core.registry import make_game

#: grid offsets (dh, dw) a hex kernel sees besides its centre
HEX_OFFSETS = {(i - 1, j - 1) for i in range(3) for j in range(3)
               if HEX_KERNEL_MASK[i, j] and (i, j) != (1, 1)}

OPTION_SETS = [
    ("cartographers", {"players": 1}), ("cartographers", {"players": 3}),
    ("cascadia", {"players": 1}), ("cascadia", {"players": 4}),
    ("dorfromantik", {"players": 1}), ("dorfromantik", {"players": 3, "window_radius": 6}),
]


def play_random(game, seed: int, steps: int):
    """A state after ``steps`` random legal decisions (fewer if the game ends first)."""
    rng = np.random.default_rng(seed)
    state = game.new_game(seed)
    for _ in range(steps):
        if game.is_over(state):
            break
        game.step(state, int(rng.choice(np.flatnonzero(game.legal_mask(state)))))
    return state


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=lambda v: str(v))
def test_layout_validates_and_matches_the_spaces(name, options):
    game = make_game(name, **options)
    layout = game.layout()
    assert isinstance(layout, GameLayout)
    layout.validate()
    assert layout.observation.size == game.observation_shape()[0]
    assert layout.action.num_actions == game.num_actions
    assert len(layout.observation.plane_names) == layout.observation.channels
    assert len(layout.action.channel_names) == layout.action.channels
    assert layout.observation.hex_grid == (name != "cartographers")


# ---- Cartographers ----------------------------------------------------------------------------


@pytest.mark.parametrize("players", [1, 3])
def test_cartographers_planes_hold_the_maps(players):
    game = make_game("cartographers", players=players)
    layout = game.layout().observation
    ruins = game.data.maps[game.side].ruins.reshape(11, 11)
    for seed, steps in ((1, 10), (2, 40)):
        state = play_random(game, seed, steps)
        for p in range(players):
            obs = game.observation(state, p)
            planes = layout.planes(obs)
            assert np.array_equal(planes[:8].argmax(axis=0), state.grid[p].reshape(11, 11))
            assert np.all(planes[:8].sum(axis=0) == 1)
            assert np.array_equal(planes[8].astype(bool), ruins)
            assert layout.vector(obs)[27] == pytest.approx(state.coins[p] / 14.0)  # after card 17 + season 10


def test_cartographers_ambush_planes_hold_the_neighbours_map():
    from envs.cartographers import kernels as K

    game = make_game("cartographers", players=3)
    layout = game.layout().observation
    rng = np.random.default_rng(1)
    state = game.new_game(1)
    while state.meta[K.M_PHASE] != K.PHASE_AMBUSH:
        assert not game.is_over(state)
        game.step(state, int(rng.choice(np.flatnonzero(game.legal_mask(state)))))
    actor, target = int(state.meta[K.M_ACTOR]), int(state.meta[K.M_TARGET])
    assert actor != target
    planes = layout.planes(game.observation(state, actor))
    assert np.array_equal(planes[9:17].argmax(axis=0), state.grid[target].reshape(11, 11))
    assert np.all(planes[9:17].sum(axis=0) == 1)
    bystander = 3 - actor - target
    assert not layout.planes(game.observation(state, bystander))[9:17].any()


def test_cartographers_spatial_actions_decode_to_their_cell_and_channel():
    game = make_game("cartographers", players=2)
    layout = game.layout().action
    for k, name in enumerate(layout.channel_names):
        for h in range(11):
            for w in range(11):
                f = game.decode_action(int(layout.spatial_index[k, h, w]))
                if name.startswith("place_"):
                    t, s, o = (int(part[1:]) for part in name.split("_")[1:])
                    fields = (f["kind"], f["terrain_option"], f["shape"], f["orientation"])
                    assert fields == ("place", t, s, o)
                    assert f["anchor"] == (h, w)
                elif name.startswith("fallback_"):
                    assert (f["kind"], f["terrain"], f["cells"]) == ("fallback", name[9:], [(h, w)])
                elif name == "ambush_1x1":
                    assert (f["kind"], f["cells"]) == ("ambush_1x1", [(h, w)])
                else:
                    assert (f["kind"], f["orientation"], f["anchor"]) == ("ambush", int(name[8:]), (h, w))
    assert layout.nonspatial.size == 0


# ---- Cascadia ---------------------------------------------------------------------------------


def test_cascadia_cell_features_sit_at_their_axial_position():
    from envs.cascadia import kernels as K
    from envs.cascadia.data import CELL_COORDS, RADIUS

    game = make_game("cascadia", players=4)
    layout = game.layout()
    state = play_random(game, 3, 90)
    checked = 0
    for p in range(4):
        obs = game.observation(state, p)
        planes = layout.observation.planes(obs)
        occupied = state.cells[p, :state.pinfo[p, K.P_NCELLS]]
        assert planes[0].sum() == occupied.size
        for c in occupied:
            q, r = (int(v) for v in CELL_COORDS[c])
            h, w = r + RADIUS, q + RADIUS
            habitats = set(state.edges[p, c].tolist())
            assert planes[0, h, w] == 1.0
            assert {i for i in range(5) if planes[1 + i, h, w]} == habitats
            token = int(state.tokens[p, c])
            assert {i for i in range(5) if planes[12 + i, h, w]} == ({token} if token >= 0 else set())
            checked += 1
        frontier = {(int(CELL_COORDS[c, 1]) + RADIUS, int(CELL_COORDS[c, 0]) + RADIUS)
                    for c in state.flist[p, :state.pinfo[p, K.P_NFRONT]]}
        assert set(zip(*np.nonzero(planes[23]), strict=True)) == frontier
        vec = layout.observation.vector(obs)
        assert vec[85] == pytest.approx(state.pinfo[p, K.P_NATURE] / 10.0)
        assert vec[95] == pytest.approx(1.0) and vec[96] == float(game.current_player(state) == p)
    assert checked > 20


def test_cascadia_legal_placements_lie_on_the_frontier_plane():
    game = make_game("cascadia", players=2)
    layout = game.layout()
    rng = np.random.default_rng(5)
    state = game.new_game(5)
    seen = 0
    while seen < 4 and not game.is_over(state):
        if game.phase(state) == "tile":
            p = game.current_player(state)
            mask = np.append(game.legal_mask(state), False)
            tile_cells = mask[layout.action.spatial_index[:6]].any(axis=0)
            frontier = layout.observation.planes(game.observation(state, p))[23] > 0
            assert tile_cells.any() and np.array_equal(tile_cells, frontier)
            seen += 1
        game.step(state, int(rng.choice(np.flatnonzero(game.legal_mask(state)))))
    assert seen == 4


def test_cascadia_actions_decode_to_their_cell_and_channel():
    from envs.cascadia.data import RADIUS

    game = make_game("cascadia", players=1)
    layout = game.layout().action
    hs, ws = np.nonzero(layout.spatial_index[0] >= 0)
    for k in range(7):
        for h, w in zip(hs.tolist(), ws.tolist(), strict=True):
            f = game.decode_action(int(layout.spatial_index[k, h, w]))
            assert f["at"] == (w - RADIUS, h - RADIUS)
            assert (f["kind"], f.get("rotation")) == (("place_tile", k) if k < 6 else ("place_token", None))
    for a, name in zip(layout.nonspatial.tolist(), layout.nonspatial_names, strict=True):
        f = game.decode_action(a)
        assert "at" not in f and name.startswith(f["kind"])


def test_cascadia_neighbours_are_the_hex_kernel():
    from envs.cascadia.data import NEIGHBORS, NUM_CELLS, RADIUS
    from envs.cascadia.layout import cell_grid_positions

    h, w = cell_grid_positions()
    per_direction = []
    for d in range(6):
        inside = NEIGHBORS[:, d] >= 0
        n = NEIGHBORS[inside, d]
        offsets = set(zip((h[n] - h[inside]).tolist(), (w[n] - w[inside]).tolist(), strict=True))
        assert len(offsets) == 1
        per_direction.append(offsets.pop())
    assert set(per_direction) == HEX_OFFSETS and len(per_direction) == 6
    assert NUM_CELLS == 3 * RADIUS * (RADIUS + 1) + 1


# ---- Dorfromantik -----------------------------------------------------------------------------


def _dorf_positions(game, state) -> tuple[dict[tuple[int, int], tuple[int, int]], int]:
    """Window (h, w) -> (tile, rot) of every placed tile, and the window radius."""
    cq, cr = game.window_centre(state)
    W = game.window_radius
    return {(r - cr + W, q - cq + W): (tile, rot) for q, r, tile, rot in game.placed_tiles(state)}, W


@pytest.mark.parametrize(("players", "radius", "steps"), [(1, 15, 30), (3, 6, 12)])
def test_dorfromantik_planes_hold_the_placed_tiles(players, radius, steps):
    from envs.core.hexgrid import HEX_DIRECTIONS
    from envs.dorfromantik.data import RAIL, RIVER

    game = make_game("dorfromantik", players=players, window_radius=radius)
    layout = game.layout().observation
    state = play_random(game, 4, steps)
    planes = layout.planes(game.observation(state, 0))
    tiles, W = _dorf_positions(game, state)
    assert set(zip(*np.nonzero(planes[0]), strict=True)) == set(tiles)
    matched_lines = 0
    for (h, w), (tile, rot) in tiles.items():
        edges = game.data.rot_edges[tile, rot]
        for d in range(6):
            t = int(edges[d])
            assert {k for k in range(1, 6) if planes[1 + 5 * d + k - 1, h, w]} == ({t} if t else set())
            dq, dr = HEX_DIRECTIONS[d]
            nh, nw = h + dr, w + dq
            if t in (RAIL, RIVER) and (nh, nw) in tiles:  # a line must meet the same line (rules)
                assert planes[1 + 5 * ((d + 3) % 6) + t - 1, nh, nw] == 1.0
                matched_lines += 1
    legal = {(r - game.window_centre(state)[1] + W, q - game.window_centre(state)[0] + W)
             for q, r, _ in game.legal_placements(state)}
    assert set(zip(*np.nonzero(planes[31]), strict=True)) == legal
    assert layout.vector(game.observation(state, 0))[69] == pytest.approx(len(tiles) / 70.0)
    if players == 1:
        assert matched_lines > 0


def test_dorfromantik_actions_decode_to_their_cell_and_rotation():
    game = make_game("dorfromantik", players=2, window_radius=5)
    layout = game.layout().action
    side = game.side
    for k in range(6):
        for h in range(side):
            for w in range(side):
                f = game.decode_action(int(layout.spatial_index[k, h, w]))
                assert (f["dr"], f["dq"], f["rot"]) == (h - 5, w - 5, k)
    state = play_random(game, 8, 9)
    mask = game.legal_mask(state)
    legal_grid = {(h, w, k) for k, h, w in zip(*np.nonzero(mask[layout.spatial_index]), strict=True)}
    cq, cr = game.window_centre(state)
    assert legal_grid == {(r - cr + 5, q - cq + 5, rot) for q, r, rot in game.legal_placements(state)}


def test_dorfromantik_neighbours_are_the_hex_kernel():
    from envs.dorfromantik import kernels as K

    origin_h, origin_w = divmod(K.ORIGIN, K.GRID_SIDE)
    offsets = [divmod(int(K.ORIGIN + o), K.GRID_SIDE) for o in K.DIR_OFFSETS]
    assert {(h - origin_h, w - origin_w) for h, w in offsets} == HEX_OFFSETS and len(set(offsets)) == 6

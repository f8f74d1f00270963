"""Differential tests: the numba kernels and the engine's legal mask against reference.py.

Random maps are drawn from seeded generators: the printed mountains, wastelands and ruins of side
A or B (or, for scoring, sometimes mountains and ruins anywhere, edges included), then every other
cell empty or one of forest, village, farm, water, monster with per-map weights, so that some maps
are sparse, some full, and some dominated by one terrain (big clusters). The fast set runs a
few hundred cases per check; the ``slow`` set runs at least 2,000.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.cartographers import kernels as K
from envs.cartographers import reference as ref
from envs.cartographers.data import CORNERS, N_EXPLORE_CARDS, TERRAIN_NAMES, load_cartographers_data
from envs.cartographers.game import CartographersGame
from tests.envs.cartographers.test_reference_rules import BUGBEAR, GNOLL, GOBLIN, KOBOLD

DATA = load_cartographers_data()
DRAWN = np.array([ref.FOREST, ref.VILLAGE, ref.FARM, ref.WATER, ref.MONSTER], dtype=np.int8)
FAST, SLOW = 300, 2000


def random_map(rng: np.random.Generator, anywhere: bool = False, fill: float | None = None):
    """(grid int8[121], ruins bool[121]) of a random position (see the module docstring)."""
    if anywhere:
        grid = np.zeros(121, np.int8)
        grid[rng.choice(121, size=rng.integers(0, 9), replace=False)] = ref.MOUNTAIN
        grid[rng.choice(121, size=rng.integers(0, 8), replace=False)] = ref.WASTELAND
        ruins = np.zeros(121, bool)
        ruins[rng.choice(121, size=rng.integers(0, 10), replace=False)] = True
    else:
        sheet = DATA.maps["AB"[rng.integers(2)]]
        grid = np.array(sheet.terrain, np.int8)
        ruins = np.array(sheet.ruins, bool)
    weights = rng.dirichlet(np.full(5, 0.4))
    fill = rng.uniform(0.0, 1.0) if fill is None else fill
    open_cells = np.flatnonzero(grid == ref.EMPTY)
    drawn = open_cells[rng.random(open_cells.size) < fill]
    grid[drawn] = rng.choice(DRAWN, size=drawn.size, p=weights)
    return grid, ruins


def maps(n: int, seed: int, **kwargs):
    rng = np.random.default_rng(seed)
    for i in range(n):
        yield random_map(rng, anywhere=(i % 5 == 4), **kwargs)


# ---- scoring, monsters, mountains ------------------------------------------------------------

def compare_scoring(n: int, seed: int) -> np.ndarray:
    """Compare all 16 cards, the monster penalty and surrounded mountains on ``n`` maps; returns
    how many maps scored > 0 per card (to show the maps exercise every card)."""
    nonzero = np.zeros(16, int)
    out = np.zeros(121, bool)
    for i, (grid, ruins) in enumerate(maps(n, seed)):
        rows = ref.as_rows(grid)
        ruin_rows = [[bool(v) for v in row] for row in ref.as_rows(ruins)]
        for card in range(16):
            expected = ref.CARD_RULES[card](rows, ruin_rows)
            got = K.score_card(card, grid, ruins)
            assert got == expected, (f"map {i}: card {card} {ref.CARD_NAMES[card]}: kernel {got}, "
                                     f"reference {expected}\n{grid.reshape(11, 11)}\n"
                                     f"ruins {np.flatnonzero(ruins)}")
            nonzero[card] += expected > 0
        assert K.monster_penalty(grid) == ref.monster_penalty(grid), f"map {i}\n{grid.reshape(11, 11)}"
        count = K.surrounded_mountains(grid, out)
        expected_cells = {r * 11 + c for r, c in ref.surrounded_mountains(grid)}
        assert set(np.flatnonzero(out)) == expected_cells and count == len(expected_cells), f"map {i}"
    return nonzero


def test_scoring_kernels_match_reference_fast():
    nonzero = compare_scoring(FAST, seed=1)
    assert (nonzero > 0).all(), f"some card never scored on the random maps: {nonzero}"


@pytest.mark.slow
def test_scoring_kernels_match_reference_2000_maps():
    nonzero = compare_scoring(SLOW, seed=2)
    assert (nonzero >= 20).all(), f"some card rarely scored on the random maps: {nonzero}"


# ---- solo ambush -----------------------------------------------------------------------------

def test_data_ambush_cards_match_the_component_reference():
    # the shapes, corners and arrows in seeds/cartographers.yaml vs shared/reference/cartographers.md
    for j, (shape, corner, arrow) in enumerate((GOBLIN, BUGBEAR, KOBOLD, GNOLL)):
        c = N_EXPLORE_CARDS + j
        assert ref.normalise_shape(DATA.card_shapes[c][0]) == ref.normalise_shape(shape)
        assert CORNERS[DATA.ambush_corner[j]] == corner
        assert (DATA.ambush_arrow[j] > 0) == (arrow == "clockwise")


def compare_solo_ambush(n: int, seed: int) -> tuple[int, int]:
    """Kernel vs reference solo ambush on ``n`` maps per ambush card; returns (placements found
    off the outer ring, ambushes ignored)."""
    tables = CartographersGame(players=1).tb
    inner = ignored = 0
    rng = np.random.default_rng(seed)
    for i in range(n):
        grid, _ = random_map(rng, fill=rng.uniform(0.3, 1.0))
        for j in range(4):
            c = N_EXPLORE_CARDS + j
            corner = CORNERS[DATA.ambush_corner[j]]
            arrow = "clockwise" if DATA.ambush_arrow[j] > 0 else "counterclockwise"
            expected = ref.solo_ambush_placement(grid, DATA.card_shapes[c][0], corner, arrow)
            cells = K.solo_ambush_cells(grid, j, tables)
            got = frozenset(divmod(int(cell), 11) for cell in cells) if cells.size else None
            assert got == expected, (f"map {i}, ambush {DATA.card_names[c]}: kernel {sorted(got or [])}, "
                                     f"reference {sorted(expected or [])}\n{grid.reshape(11, 11)}")
            if expected is None:
                ignored += 1
            elif min(ref.ring_of(r, c) for r, c in expected) > 0:
                inner += 1
    return inner, ignored


def test_solo_ambush_kernel_matches_reference_fast():
    inner, ignored = compare_solo_ambush(FAST // 2, seed=3)
    assert inner > 0 and ignored > 0


@pytest.mark.slow
def test_solo_ambush_kernel_matches_reference_2000_maps():
    inner, ignored = compare_solo_ambush(SLOW, seed=4)
    assert inner > 50 and ignored > 50


# ---- the engine's legal mask -----------------------------------------------------------------

GAMES = {side: CartographersGame(players=1, side=side) for side in "AB"}
EXPLORE_CARDS = [c for c in range(N_EXPLORE_CARDS) if DATA.card_kind[c] == 0]


def mask_case(game: CartographersGame, grid: np.ndarray, card: int, require_ruins: bool):
    """A solo state whose decision is explore card ``card`` on ``grid``."""
    state = game.new_game(0)
    state.grid[0] = grid
    state.meta[K.M_PHASE] = K.PHASE_EXPLORE
    state.meta[K.M_CARD] = card
    state.meta[K.M_RUINS] = int(require_ruins)
    state.meta[K.M_ACTOR] = 0
    return state


def compare_legal_masks(n: int, seed: int) -> dict[str, int]:
    """Engine mask vs reference placements and fallback on ``n`` random cases."""
    rng = np.random.default_rng(seed)
    seen = {"fallback": 0, "ruins": 0, "place": 0}
    for i in range(n):
        side = "AB"[rng.integers(2)]
        game = GAMES[side]
        sheet = DATA.maps[side]
        grid, _ = random_map(rng, fill=rng.uniform(0.0, 1.0) ** 0.5)
        grid[sheet.terrain != ref.EMPTY] = sheet.terrain[sheet.terrain != ref.EMPTY]
        ruins = np.array(sheet.ruins, bool)
        card = int(rng.choice(EXPLORE_CARDS))
        require = bool(rng.random() < 0.35)
        state = mask_case(game, grid, card, require)
        mask = game.legal_mask(state)
        legal = np.flatnonzero(mask)
        shapes = DATA.card_shapes[card]
        n_terrains = int(DATA.card_n_terrains[card])
        expected = {(t, k, p) for k, shape in enumerate(shapes)
                    for p in ref.legal_placements(grid, ruins, shape, require) for t in range(n_terrains)}
        got = set()
        fallback = set()
        for a in legal:
            fields = game.decode_action(int(a), state)
            if fields["kind"] == "place":
                got.add((fields["terrain_option"], fields["shape"], frozenset(fields["cells"])))
            elif fields["kind"] == "fallback":
                fallback.add((fields["terrain"], fields["cells"][0]))
            else:
                raise AssertionError(f"case {i}: an ambush action {a} is legal in an explore decision")
        where = (f"case {i}: side {side}, card {DATA.card_names[card]}, ruins {require}\n"
                 f"{grid.reshape(11, 11)}")
        assert len(got) == int(sum(1 for a in legal if a < K.FALLBACK_BASE)), f"{where}: duplicate actions"
        assert got == expected, f"{where}: kernel-only {sorted(got - expected)[:3]}, " \
                                f"reference-only {sorted(expected - got)[:3]}"
        if ref.fallback_allowed(grid, ruins, shapes, require):
            empties = {divmod(int(c), 11) for c in np.flatnonzero(grid == ref.EMPTY)}
            terrains = {"forest", "village", "farm", "water", "monster"}
            assert fallback == {(t, cell) for t in terrains for cell in empties}, where
            seen["fallback"] += 1
        else:
            assert not fallback, f"{where}: fallback offered while a shape fits"
            seen["place"] += 1
        seen["ruins"] += require and bool(got)
    return seen


def test_legal_mask_matches_reference_fast():
    seen = compare_legal_masks(FAST, seed=5)
    assert seen["fallback"] > 0 and seen["ruins"] > 0 and seen["place"] > 0, seen


@pytest.mark.slow
def test_legal_mask_matches_reference_2000_cases():
    seen = compare_legal_masks(SLOW, seed=6)
    assert seen["fallback"] > 20 and seen["ruins"] > 100, seen


def test_decoded_cells_are_the_cells_the_engine_draws():
    # stepping an action must fill exactly the decoded cells with the chosen terrain
    rng = np.random.default_rng(7)
    game = GAMES["A"]
    for _ in range(40):
        grid, _ = random_map(rng, fill=rng.uniform(0.0, 0.6))
        grid[DATA.maps["A"].terrain != 0] = DATA.maps["A"].terrain[DATA.maps["A"].terrain != 0]
        card = int(rng.choice(EXPLORE_CARDS))
        state = mask_case(game, grid, card, False)
        legal = np.flatnonzero(game.legal_mask(state))
        action = int(rng.choice(legal))
        fields = game.decode_action(action, state)
        before = state.grid[0].copy()
        game.step(state, action)
        changed = {divmod(int(c), 11) for c in np.flatnonzero(state.grid[0] != before)}
        code = TERRAIN_NAMES.index(fields["terrain"])
        assert set(fields["cells"]) <= changed, (fields, sorted(changed))
        assert all(state.grid[0][r * 11 + c] == code for r, c in fields["cells"])
        # anything else that changed is a solo ambush revealed right after (monsters)
        assert all(state.grid[0][r * 11 + c] == ref.MONSTER for r, c in changed - set(fields["cells"]))


# ---- whole games: the engine's season scoring -------------------------------------------------

def check_season_scoring(n_games: int, seed: int) -> int:
    """Play random solo games; at every season end rebuild the scored map (the map before the
    last decision plus the decoded cells) and compare the recorded season with the reference.
    Returns the number of seasons checked."""
    rng = np.random.default_rng(seed)
    checked = 0
    for g in range(n_games):
        game = GAMES["AB"[g % 2]]
        ruins = game.tb.ruins
        state = game.new_game(int(rng.integers(0, 2**31)))
        while not game.is_over(state):
            season = state.season
            action = int(rng.choice(np.flatnonzero(game.legal_mask(state))))
            fields = game.decode_action(action, state)
            scored = state.grid[0].copy()
            for r, c in fields["cells"]:
                scored[r * 11 + c] = TERRAIN_NAMES.index(fields["terrain"])
            game.step(state, action)
            if state.season == season and not game.is_over(state):
                continue
            x, y = DATA.season_edicts[season]
            record = state.record[0, season]
            card_x, card_y = int(state.edicts[x]), int(state.edicts[y])
            expected = ref.season_score(scored, ruins, card_x, card_y, int(record[K.R_COINS]))
            got = {"card_a": int(record[K.R_EDICT_X]), "card_b": int(record[K.R_EDICT_Y]),
                   "coins": int(record[K.R_COINS]), "monsters": -int(record[K.R_MONSTERS]),
                   "total": int(record[K.R_TOTAL])}
            assert got == expected, f"game {g}, season {season}: engine {got}, reference {expected}"
            checked += 1
        assert game.scores(state)[0].total == ref.final_score(state.record[0, :, K.R_TOTAL])
    return checked


def test_engine_season_scores_match_reference():
    assert check_season_scoring(6, seed=8) == 24


@pytest.mark.slow
def test_engine_season_scores_match_reference_many_games():
    assert check_season_scoring(100, seed=9) == 400


# ---- multiplayer ambush decisions ------------------------------------------------------------

def compare_ambush_masks(n: int, seed: int) -> int:
    """The neighbour's ambush mask (any rotation or flip, no ruins constraint even when one is
    pending; one monster cell when the shape fits nowhere) vs the reference; returns how many
    cases needed the 1x1."""
    rng = np.random.default_rng(seed)
    game = CartographersGame(players=2)
    ruins = np.array(DATA.maps["A"].ruins, bool)
    single = 0
    for i in range(n):
        grid, _ = random_map(rng, fill=rng.uniform(0.3, 1.0))
        j = int(rng.integers(4))
        state = game.new_game(0)
        state.grid[0] = grid
        state.meta[K.M_PHASE] = K.PHASE_AMBUSH
        state.meta[K.M_CARD] = N_EXPLORE_CARDS + j
        state.meta[K.M_ACTOR] = 1
        state.meta[K.M_TARGET] = 0
        state.meta[K.M_RUINS] = int(rng.random() < 0.5)
        got, cells_1x1 = set(), set()
        for a in np.flatnonzero(game.legal_mask(state)):
            fields = game.decode_action(int(a), state)
            assert fields["kind"] in ("ambush", "ambush_1x1"), f"case {i}: {fields}"
            (got if fields["kind"] == "ambush" else cells_1x1).add(frozenset(fields["cells"]))
        expected = ref.legal_placements(grid, ruins, DATA.card_shapes[N_EXPLORE_CARDS + j][0], False)
        where = f"case {i}: {DATA.card_names[N_EXPLORE_CARDS + j]}\n{grid.reshape(11, 11)}"
        assert got == expected, where
        if expected:
            assert not cells_1x1, where
        else:
            single += 1
            assert cells_1x1 == {frozenset({divmod(int(c), 11)}) for c in np.flatnonzero(grid == 0)}, where
    return single


def test_ambush_mask_matches_reference_fast():
    assert compare_ambush_masks(FAST, seed=10) > 0


@pytest.mark.slow
def test_ambush_mask_matches_reference_2000_cases():
    assert compare_ambush_masks(SLOW, seed=11) > 20

"""Pictures of a Cartographers position: ANSI text and an RGB array."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.cartographers import kernels as K
from envs.cartographers.data import COLS, EDICT_LETTERS, ROWS

if TYPE_CHECKING:
    from envs.cartographers.game import CartographersGame, CartographersState

#: letter and ANSI colour per terrain code (empty, forest, village, farm, water, monster, mountain, wasteland)
LETTERS = ".FVAWXMZ"
ANSI = ("", "32", "31", "33", "34", "35", "90", "37")
RGB = np.array([(245, 240, 225), (46, 125, 50), (198, 40, 40), (251, 192, 45), (30, 136, 229),
                (123, 31, 162), (97, 97, 97), (141, 110, 99)], dtype=np.uint8)


def _map_lines(grid: np.ndarray, ruins: np.ndarray, color: bool) -> list[str]:
    lines = ["    " + " ".join(str(c % 10) for c in range(COLS))]
    for r in range(ROWS):
        row = []
        for c in range(COLS):
            t = int(grid[r * COLS + c])
            ch = "r" if t == 0 and ruins[r * COLS + c] else LETTERS[t]
            if t != 0 and ruins[r * COLS + c]:
                ch = ch.lower()
            row.append(f"\x1b[{ANSI[t]}m{ch}\x1b[0m" if color and ANSI[t] else ch)
        lines.append(f"{r:3d} " + " ".join(row))
    return lines


LEGEND = ("legend: . empty  r empty ruins  F forest  V village  A farm  W water  X monster  M mountain  "
          "Z wasteland  (lowercase: drawn on ruins)")


def render_ansi(game: CartographersGame, state: CartographersState, player: int | None = None,
                color: bool = False) -> str:
    """Text map(s) with the season, the current card and each seat's coins and score.
    Legend: . empty, r empty ruins, F forest, V village, A farm, W water, X monster, M mountain,
    Z wasteland; a lowercase letter is drawn on a ruins cell."""
    seats = range(game.players) if player is None else [player]
    meta = state.meta
    season = int(meta[K.M_SEASON])
    head = [f"season {game.data.season_names[season] if season < 4 else 'over'}"
            + (f" time {int(meta[K.M_TIME])}/{int(game.tb.seasons[season, 0])}" if season < 4 else ""),
            "edicts " + "  ".join(f"{EDICT_LETTERS[e]}: {n}" for e, n in enumerate(game.edict_names(state)))]
    if not game.is_over(state):
        card = int(meta[K.M_CARD])
        head.append(f"card {game.card_name(card)}" + ("  (ruins: cover an empty ruins cell)"
                                                      if meta[K.M_RUINS] else "")
                    + f"  seat {int(meta[K.M_ACTOR])} to act")
    sheets = game.scores(state)
    out = head
    for p in seats:
        out.append(f"player_{p}: coins {int(state.coins[p])}  score {sheets[p].total}")
        out.extend(_map_lines(state.grid[p], game.tb.ruins, color))
    out.append(LEGEND)
    return "\n".join(out)


def render_rgb(game: CartographersGame, state: CartographersState, player: int | None = None,
               cell_px: int = 16) -> np.ndarray:
    """RGB picture (uint8 H x W x 3) of one map (``player``, default the acting or first seat);
    ruins cells get a dark dot, grid lines are drawn in grey."""
    if player is None:
        player = max(game.current_player(state), 0)
    grid = state.grid[player]
    img = RGB[grid.reshape(ROWS, COLS)]
    img = np.repeat(np.repeat(img, cell_px, axis=0), cell_px, axis=1).copy()
    q = cell_px // 3
    for cell in np.flatnonzero(game.tb.ruins):
        r, c = divmod(int(cell), COLS)
        img[r * cell_px + q: (r + 1) * cell_px - q, c * cell_px + q: (c + 1) * cell_px - q] = (40, 40, 40)
    img[::cell_px, :, :] = 160
    img[:, ::cell_px, :] = 160
    return img

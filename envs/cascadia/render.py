"""Pictures of a Cascadia position: ANSI text and an RGB image."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from envs.cascadia import kernels as K
from envs.cascadia.data import CELL_COORDS, HABITAT_CODES, WILDLIFE, WILDLIFE_CODES

if TYPE_CHECKING:
    from envs.cascadia.game import CascadiaGame, CascadiaState

HABITAT_RGB = np.array([[150, 150, 160], [34, 110, 50], [220, 200, 90], [110, 180, 160], [60, 120, 220]],
                       dtype=np.uint8)
WILDLIFE_RGB = np.array([[90, 55, 30], [200, 130, 60], [240, 110, 120], [240, 240, 240], [235, 95, 20]],
                        dtype=np.uint8)


# ---- text ----------------------------------------------------------------------------------------


def _hex_text(game: CascadiaGame, state: CascadiaState, p: int, c: int) -> str:
    kind = int(state.tiles[p, c])
    a, b = (int(v) for v in game.data.kind_habitats[kind])
    token = int(state.tokens[p, c])
    habs = HABITAT_CODES[a] + ("*" if game.kind_info[kind, 1] >= 0 else HABITAT_CODES[b])
    return habs + (WILDLIFE_CODES[token].upper() if token >= 0 else ".")


def area_text(game: CascadiaGame, state: CascadiaState, p: int) -> str:
    """One player's area: each hex as habitats + token (keystone '*', token uppercase, '.' none)."""
    occupied = [int(c) for c in state.cells[p, :state.pinfo[p, K.P_NCELLS]]]
    coords = {c: (int(CELL_COORDS[c, 0]), int(CELL_COORDS[c, 1])) for c in occupied}
    rows = sorted({r for _, r in coords.values()})
    xmin = min(2 * q + r for q, r in coords.values())
    lines = []
    for r in rows:
        line = ""
        for c, (q, rr) in sorted(coords.items(), key=lambda kv: kv[1][0]):
            if rr != r:
                continue
            col = (2 * q + r - xmin) * 2
            line = line.ljust(col) + _hex_text(game, state, p, c)
        lines.append(line.rstrip())
    return "\n".join(lines)


def market_text(game: CascadiaGame, state: CascadiaState) -> str:
    parts = []
    for i in range(4):
        t, w = int(state.market[0, i]), int(state.market[1, i])
        tile = game.data.tile_codes[t] if t >= 0 else "--"
        parts.append(f"[{i}] {tile} + {WILDLIFE[w] if w >= 0 else '--'}")
    bag = " ".join(f"{WILDLIFE_CODES[w]}{int(state.bag[w])}" for w in range(5))
    left = int(state.ctl[K.C_STACK_LEN] - state.ctl[K.C_STACK_POS])
    supply = int(state.ctl[K.C_SUPPLY])
    return "market: " + "  ".join(parts) + f"\nbag: {bag}   stack: {left}   nature supply: {supply}"


def render_text(game: CascadiaGame, state: CascadiaState, player: int | None = None) -> str:
    """Areas (one seat or all), the market and the turn state as plain text."""
    seats = range(game.players) if player is None else [player]
    if game.is_over(state):
        head = f"Cascadia, game over after {int(state.ctl[K.C_TURN])} turns"
    else:
        head = (f"Cascadia, round {game.progress_marker(state)}, phase {game.phase(state)}, "
                f"player_{int(state.ctl[K.C_CUR])} to act")
    blocks = [head]
    for p in seats:
        blocks.append(f"player_{p} (nature tokens {int(state.pinfo[p, K.P_NATURE])}, "
                      f"turns {int(state.pinfo[p, K.P_TURNS])}):\n" + area_text(game, state, p))
    blocks.append(market_text(game, state))
    blocks.append("legend: habitats M F P W R (second letter * = keystone), animal B E S H F placed, . none")
    return "\n\n".join(blocks)


# ---- image ---------------------------------------------------------------------------------------


def _area_image(game: CascadiaGame, state: CascadiaState, p: int, size: int = 14) -> np.ndarray:
    occupied = [int(c) for c in state.cells[p, :state.pinfo[p, K.P_NCELLS]]]
    s3 = math.sqrt(3)
    centres = {c: (size * s3 * (CELL_COORDS[c, 0] + CELL_COORDS[c, 1] / 2), size * 1.5 * CELL_COORDS[c, 1])
               for c in occupied}
    xs = [x for x, _ in centres.values()]
    ys = [y for _, y in centres.values()]
    x0, y0 = min(xs) - size * 1.2, min(ys) - size * 1.2
    width = int(max(xs) - x0 + size * 1.2) + 1
    height = int(max(ys) - y0 + size * 1.2) + 1
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    half = size
    yy, xx = np.mgrid[-half:half + 1, -half:half + 1].astype(np.float64)
    inside = (np.abs(xx) <= s3 / 2 * size - 0.5) & (np.abs(yy) <= size - np.abs(xx) / s3 - 0.5)
    sector = (np.round((np.degrees(np.arctan2(yy, xx)) + 60) / 60).astype(int)) % 6
    dot = xx ** 2 + yy ** 2 <= (0.42 * size) ** 2
    for c, (cx, cy) in centres.items():
        px, py = int(round(cx - x0)), int(round(cy - y0))
        ys_, xs_ = slice(py - half, py + half + 1), slice(px - half, px + half + 1)
        patch = img[ys_, xs_]
        colours = HABITAT_RGB[state.edges[p, c, sector].astype(int)]
        patch[inside] = colours[inside]
        token = int(state.tokens[p, c])
        if token >= 0:
            patch[dot] = WILDLIFE_RGB[token]
    return img


def render_image(game: CascadiaGame, state: CascadiaState, player: int | None = None) -> np.ndarray:
    """Areas side by side (habitat colour per edge sector, a disc per placed animal)."""
    seats = range(game.players) if player is None else [player]
    images = [_area_image(game, state, p) for p in seats]
    height = max(im.shape[0] for im in images)
    padded = [np.pad(im, ((0, height - im.shape[0]), (4, 4), (0, 0)), constant_values=255) for im in images]
    return np.ascontiguousarray(np.concatenate(padded, axis=1))

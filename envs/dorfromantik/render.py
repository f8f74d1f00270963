"""Pictures of a Dorfromantik position: ANSI text and an RGB image (pointy-top hexes, numpy only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.dorfromantik.data import TERRAIN_LETTERS, TERRAIN_NAMES

if TYPE_CHECKING:
    from envs.dorfromantik.game import DorfromantikGame, DorfState

#: RGB of meadow, forest, field, village, rail, river
TERRAIN_COLOURS = np.array([[150, 200, 110], [30, 100, 45], [235, 200, 60], [200, 70, 60],
                            [110, 80, 60], [60, 130, 220]], np.uint8)
BACKGROUND = np.array([245, 242, 232], np.uint8)


def _tile_letter(edges: np.ndarray) -> str:
    """One letter per tile: rail or river if present, else its most common area terrain, else meadow."""
    for line in (4, 5):
        if line in edges:
            return TERRAIN_LETTERS[line]
    counts = np.bincount(edges, minlength=6)[1:4]
    return TERRAIN_LETTERS[1 + int(np.argmax(counts))] if counts.max() else "M"


def render_text(game: DorfromantikGame, state: DorfState) -> str:
    """The landscape as offset hex rows (3 characters a tile) followed by the status lines.

    A tile shows its main terrain letter (W forest, G field, V village, T rail, S river, M meadow) and
    a mark: ``?`` open task (with tiles missing), ``+`` completed task, ``x`` failed task, ``f`` flag.
    """
    tiles = game.placed_tiles(state)
    task_at = {(t["q"], t["r"]): t for t in game.tasks(state)}
    lines: list[str] = []
    if tiles:
        qs = [4 * q + 2 * r for q, r, _, _ in tiles]
        rs = [r for _, r, _, _ in tiles]
        x0 = min(qs)
        rows: dict[int, list[str]] = {}
        for (q, r, tile, rot), x in zip(tiles, qs, strict=True):
            edges = game._rot_edges[tile, rot]
            mark = " "
            task = task_at.get((q, r))
            if task:
                mark = {"open": str(min(9, max(0, task["target"] - task["size"]))), "completed": "+",
                        "failed": "x"}[task["status"]]
            elif game._flag[tile]:
                mark = "f"
            row = rows.setdefault(r, [" "] * (max(qs) - x0 + 4))
            row[x - x0:x - x0 + 3] = ["[", _tile_letter(edges), mark]
        for r in range(min(rs), max(rs) + 1):
            lines.append("".join(rows.get(r, [])).rstrip())
    drawn = game.drawn_tile(state)
    counts = game.stack_counts(state)
    if drawn:
        what = f"task {drawn['task']} {drawn['target']}" if drawn["task"] else "landscape"
        edges = "".join(TERRAIN_LETTERS[TERRAIN_NAMES.index(e)] for e in drawn["edges"])
        lines.append(f"drawn: {drawn['id']} {edges} ({what})")
    else:
        lines.append("game over")
    for t in game.open_tasks(state):
        lines.append(f"open task {t['type']} {t['target']} at ({t['q']}, {t['r']}): "
                     f"{t['size']} tiles, {t['open_edges']} open edges")
    b = game.breakdown(state)
    lines.append(f"stacks: landscape {counts['landscape']}, task {counts['task']}; "
                 f"set aside {counts['set_aside']}")
    lines.append(f"score {b['total']}: tasks {b['tasks']} + flags {b['flags']} + longest rail "
                 f"{b['longest_rail']} + longest river {b['longest_river']}")
    return "\n".join(lines)


def render_image(game: DorfromantikGame, state: DorfState, hex_size: int = 12) -> np.ndarray:
    """An RGB picture (uint8 H x W x 3) of the landscape: each edge sector painted in its terrain,
    a darker rim round every tile, task tiles with a white (open), black (done) or grey (failed) dot."""
    tiles = game.placed_tiles(state)
    if not tiles:
        return np.full((4 * hex_size, 4 * hex_size, 3), BACKGROUND, np.uint8)
    s = float(hex_size)
    sq3 = np.sqrt(3.0)
    xs = [s * sq3 * (q + r / 2) for q, r, _, _ in tiles]
    ys = [s * 1.5 * r for _, r, _, _ in tiles]
    x0, y0 = min(xs) - 2 * s, min(ys) - 2 * s
    width, height = int(max(xs) - x0 + 2 * s) + 1, int(max(ys) - y0 + 2 * s) + 1
    py, px = np.mgrid[0:height, 0:width].astype(np.float64)
    fx, fy = px + x0, py + y0
    fq = (sq3 / 3 * fx - fy / 3) / s
    fr = (2 / 3 * fy) / s
    # cube rounding to the nearest hex
    cx, cz = fq, fr
    cy = -cx - cz
    rx, ry, rz = np.round(cx), np.round(cy), np.round(cz)
    dx, dy, dz = np.abs(rx - cx), np.abs(ry - cy), np.abs(rz - cz)
    fix_x = (dx > dy) & (dx > dz)
    fix_z = ~fix_x & (dz >= dy)
    rx = np.where(fix_x, -ry - rz, rx)
    rz = np.where(fix_z, -rx - ry, rz)
    hq, hr = rx.astype(np.int64), rz.astype(np.int64)
    ox = fx - s * sq3 * (hq + hr / 2)
    oy = fy - s * 1.5 * hr
    direction = np.round(np.degrees(np.arctan2(-oy, ox)) / 60.0).astype(np.int64) % 6
    inner = s * sq3 / 2
    rim = np.maximum(np.abs(ox), np.abs(ox) * 0.5 + np.abs(oy) * sq3 / 2) / inner > 0.86
    image = np.empty((height, width, 3), np.uint8)
    image[:] = BACKGROUND
    lookup = {(q, r): (tile, rot) for q, r, tile, rot in tiles}
    task_at = {(t["q"], t["r"]): t["status"] for t in game.tasks(state)}
    for (q, r), (tile, rot) in lookup.items():
        sel = (hq == q) & (hr == r)
        colours = TERRAIN_COLOURS[game._rot_edges[tile, rot]]
        image[sel] = colours[direction[sel]]
        image[sel & rim] = (colours[direction[sel & rim]] * 0.6).astype(np.uint8)
        status = task_at.get((q, r))
        if status:
            dot = sel & (ox * ox + oy * oy < (0.3 * s) ** 2)
            image[dot] = {"open": (255, 255, 255), "completed": (0, 0, 0), "failed": (128, 128, 128)}[status]
    return image

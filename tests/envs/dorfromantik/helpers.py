"""Shared helpers for the Dorfromantik tests: tile lookup and rotation by wanted edges."""

from __future__ import annotations

from envs.dorfromantik.data import TERRAIN_LETTERS
from envs.dorfromantik.game import DorfromantikGame, DorfState


def rotation_with(game: DorfromantikGame, tile_id: str, wanted: dict[int, str]) -> int:
    """The first rotation of ``tile_id`` showing terrain letter wanted[d] toward each direction d."""
    tile = game.data.tile_ids.index(tile_id)
    for rot in range(6):
        if all(TERRAIN_LETTERS[game._rot_edges[tile, rot, d]] == letter for d, letter in wanted.items()):
            return rot
    raise AssertionError(f"{tile_id} has no rotation with {wanted}")


def put(game: DorfromantikGame, state: DorfState, tile_id: str, q: int, r: int,
        wanted: dict[int, str], marker: int = 0) -> None:
    """Force ``tile_id`` into hand unless it is the drawn tile, then place it legally at (q, r)."""
    drawn = game.drawn_tile(state)
    if drawn is None or drawn["id"] != tile_id:
        game.set_hand(state, tile_id, marker)
    game.place_at(state, q, r, rotation_with(game, tile_id, wanted))

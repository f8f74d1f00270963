"""Polyomino orientations: the distinct counts of the classic shapes and normalisation."""

import pytest

from envs.core.polyomino import all_orientations, footprint, normalize


@pytest.mark.parametrize("cells, expected", [
    ([(0, 0)], 1),                                   # monomino
    ([(0, 0), (1, 0)], 2),                           # domino
    ([(0, 0), (1, 1)], 2),                           # diagonal pair
    ([(0, 0), (1, 0), (1, 1)], 4),                   # L-tromino
    ([(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)], 1),   # plus
    ([(0, 0), (0, 1), (0, 2), (1, 2)], 8),           # L-tetromino
    ([(0, 0), (1, 0), (1, 1), (2, 1)], 4),           # S-tetromino
    ([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)], 8),   # P-pentomino
    ([(0, 0), (1, 0), (1, 1), (1, 2), (2, 0)], 4),   # T-pentomino
])
def test_distinct_orientation_counts(cells, expected):
    orientations = all_orientations(cells)
    assert len(orientations) == expected
    assert len(set(orientations)) == expected
    assert orientations[0] == normalize(cells)


def test_normalize_rejects_duplicates_and_empty():
    with pytest.raises(ValueError):
        normalize([(0, 0), (0, 0)])
    with pytest.raises(ValueError):
        normalize([])


def test_footprint_rejects_off_grid_and_maps_cells():
    shape = normalize([(0, 0), (0, 1)])
    assert footprint(shape, 10, 10, 11, 11) is None
    assert list(footprint(shape, 2, 3, 11, 11)) == [25, 26]

"""Chance streams: stable, independent per purpose, uniform enough, same in numba and Python."""

import numpy as np
import pytest

from envs.core import rng


def test_derive_seed_is_stable_and_purpose_specific():
    a = rng.derive_seed(7, "deck")
    assert a == rng.derive_seed(7, "deck")
    assert a != rng.derive_seed(7, "setup")
    assert a != rng.derive_seed(8, "deck")


def test_derive_seed_rejects_negative_seed():
    with pytest.raises(ValueError, match="seed"):
        rng.derive_seed(-1, "deck")


def test_randint_stays_in_range_and_covers_it():
    stream = rng.new_stream(1, "t")
    draws = [rng.randint(stream, 6) for _ in range(6000)]
    counts = np.bincount(draws, minlength=6)
    assert counts.min() > 850 and counts.max() < 1150
    assert min(draws) == 0 and max(draws) == 5


def test_shuffle_prefix_is_a_permutation_of_the_prefix_only():
    arr = np.arange(10)
    rng.shuffle_prefix(arr, 6, rng.new_stream(3, "t"))
    assert sorted(arr[:6]) == list(range(6))
    assert list(arr[6:]) == [6, 7, 8, 9]


def test_same_stream_gives_same_sequence():
    s1, s2 = rng.new_stream(5, "x"), rng.new_stream(5, "x")
    assert [int(rng.next_u64(s1)) for _ in range(5)] == [int(rng.next_u64(s2)) for _ in range(5)]


def test_compiled_and_python_streams_agree():
    stream_a = rng.new_stream(11, "deck")
    stream_b = stream_a.copy()
    compiled = [rng.randint(stream_a, 13) for _ in range(50)]
    python = [rng.randint.py_func(stream_b, 13) for _ in range(50)]
    assert compiled == python


def test_random_true_index_only_picks_true_entries():
    mask = np.zeros(20, dtype=np.bool_)
    assert rng.random_true_index(mask, rng.new_stream(0, "m")) == -1
    mask[[3, 17]] = True
    picks = {rng.random_true_index(mask, rng.new_stream(s, "m")) for s in range(40)}
    assert picks == {3, 17}

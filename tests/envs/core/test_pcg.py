"""The numba copy of NumPy's Generator.integers draws exactly what NumPy draws."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from envs.core.pcg import derive_seed_crc, integers, next64, pcg_state, seed_pcg
from envs.core.rng import derive_seed as python_derive_seed
from envs.core.rng import numpy_generator


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**40 + 7])
def test_integers_match_numpy_draw_for_draw(seed):
    ours, theirs = numpy_generator(seed, "seat0"), numpy_generator(seed, "seat0")
    state = pcg_state(ours)
    sizes = np.random.default_rng(seed).integers(1, 2**31, 3000)
    sizes[::5] = 1  # no draw at all
    sizes[1::7] = 2**32 - 1  # the largest range below 2**32 (rejections happen)
    sizes[2::11] = 3
    got = [integers(state, int(n)) for n in sizes]
    assert got == [int(theirs.integers(int(n))) for n in sizes]


def test_state_row_continues_the_generator():
    g = numpy_generator(9, "seat1")
    g.integers(10)  # leaves a buffered 32-bit half behind
    state = pcg_state(g)
    assert state[4] == 1
    assert integers(state, 1000) == g.integers(1000)
    assert next64(state) == g.bit_generator.random_raw()


@pytest.mark.parametrize("seed", [0, 1, 7, 4095, 2**32 - 1, 2**32, 2**40 + 3, 10**15])
def test_seeding_in_numba_equals_numpy_generator(seed):
    for purpose in ("seat0", "seat1", "seat5", "greedy/rollout"):
        state = np.zeros(6, np.uint64)
        seed_pcg(seed, zlib.crc32(purpose.encode()), state)
        assert (state == pcg_state(numpy_generator(seed, purpose))).all(), purpose


def _seed_sequence_oracle(seed: int, purpose: str) -> int:
    """The stream seed as numpy's SeedSequence computes it (the definition derive_seed follows)."""
    entropy = [seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, zlib.crc32(purpose.encode())]
    words = np.random.SeedSequence(entropy).generate_state(2, np.uint32)
    return (int(words[0]) << 32) | int(words[1])


@pytest.mark.parametrize("seed", [0, 3, 2**32 - 1, 2**32 + 5, 10**15, 2**64 - 1])
def test_derive_seed_is_numpys_seed_sequence(seed):
    for purpose in ("chance", "dorfromantik/stacks", "seat2"):
        expected = _seed_sequence_oracle(seed, purpose)
        assert derive_seed_crc(np.uint64(seed), zlib.crc32(purpose.encode())) == expected, purpose
        assert int(python_derive_seed(seed, purpose)) == expected, purpose


def test_derive_seed_refuses_a_negative_seed():
    with pytest.raises(ValueError, match="seed must be >= 0"):
        python_derive_seed(-1, "chance")

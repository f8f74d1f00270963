"""Random streams that give the same numbers in numba kernels and in plain Python.

Every game state carries its own chance stream as a one-element ``uint64`` array (SplitMix64
state). The same njit helpers advance it whether they are called from a compiled game loop or
from the Python engine, so both produce identical games for the same seed and actions.

Streams per purpose (setup, deck, each seat's agent, ...) are derived from the game seed with
:func:`derive_seed`, which is stable on every machine and Python version.
"""

from __future__ import annotations

import zlib

import numpy as np
from numba import njit

from envs.core.pcg import derive_seed_crc

_MASK64 = (1 << 64) - 1


def derive_seed(seed: int, purpose: str) -> np.uint64:
    """A 64-bit stream seed for ``purpose`` derived from the game ``seed`` (stable everywhere)."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.uint64(derive_seed_crc(np.uint64(int(seed) & _MASK64), zlib.crc32(purpose.encode())))


def new_stream(seed: int, purpose: str) -> np.ndarray:
    """A fresh chance-stream array (``uint64[1]``) for ``purpose``."""
    return np.array([derive_seed(seed, purpose)], dtype=np.uint64)


def numpy_generator(seed: int, purpose: str) -> np.random.Generator:
    """A numpy Generator for ``purpose`` (agents, determinization), derived from the game seed."""
    return np.random.default_rng(int(derive_seed(seed, purpose)))


@njit(cache=True)
def next_u64(stream: np.ndarray) -> np.uint64:
    """Advance a SplitMix64 stream and return 64 random bits."""
    stream[0] = stream[0] + np.uint64(0x9E3779B97F4A7C15)
    z = stream[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def randint(stream: np.ndarray, n: int) -> int:
    """A uniform integer in ``[0, n)`` (``n`` >= 1), without modulo bias worth measuring."""
    # 64 random bits mapped by multiply-high keeps it unbiased to ~n / 2**64.
    r = next_u64(stream) >> np.uint64(32)
    return np.int64((r * np.uint64(n)) >> np.uint64(32))  # int64, so callers' index math stays integer


@njit(cache=True)
def shuffle_prefix(arr: np.ndarray, n: int, stream: np.ndarray) -> None:
    """Fisher-Yates shuffle of ``arr[:n]`` in place."""
    for i in range(n - 1, 0, -1):
        j = randint(stream, i + 1)
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp


@njit(cache=True)
def kth_true(mask: np.ndarray, k: int) -> int:
    """Index of the ``k``-th (from 0) true entry of ``mask``; -1 when there are fewer."""
    for i in range(mask.shape[0]):
        if mask[i]:
            if k == 0:
                return i
            k -= 1
    return -1


@njit(cache=True)
def random_true_index(mask: np.ndarray, stream: np.ndarray) -> int:
    """A uniformly chosen index where ``mask`` is true, or -1 when none is."""
    count = 0
    for i in range(mask.shape[0]):
        if mask[i]:
            count += 1
    if count == 0:
        return -1
    return kth_true(mask, randint(stream, count))

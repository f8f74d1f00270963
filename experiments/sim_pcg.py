"""NumPy's ``Generator.integers`` inside numba kernels, draw for draw.

Agents draw from ``numpy.random.default_rng(...)`` (PCG64). A compiled game loop that must make
the same choices copies each seat's bit-generator state into a ``uint64[6]`` row
(:func:`pcg_state`: state high/low, increment high/low, has_uint32, the buffered 32 bits) and
calls :func:`integers` (``rng.integers(n)``): PCG64 with the XSL-RR output, the 32-bit buffer
NumPy's ``next_uint32`` keeps, and Lemire's bounded draw as NumPy's ``random_bounded_uint64_fill``
does for ranges below 2**32 (no draw at all for ``n == 1``). Tested draw for draw against NumPy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MULT_HI = np.uint64(2549297995355413924)
MULT_LO = np.uint64(4865540595714422341)
MASK32 = np.uint64(0xFFFFFFFF)
S_HI, S_LO, I_HI, I_LO, HAS32, BUF32 = range(6)


def pcg_state(generator: np.random.Generator) -> np.ndarray:
    """The ``uint64[6]`` copy of a PCG64 Generator's state that :func:`integers` advances."""
    state = generator.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise ValueError(f"need a PCG64 generator, got {state['bit_generator']}")
    s, inc = state["state"]["state"], state["state"]["inc"]
    m64 = (1 << 64) - 1
    return np.array([s >> 64, s & m64, inc >> 64, inc & m64, state["has_uint32"], state["uinteger"]],
                    dtype=np.uint64)


@njit(cache=True)
def _mul64(a: np.uint64, b: np.uint64) -> tuple:
    """Full 128-bit product of two uint64 as (high, low)."""
    a_lo, a_hi = a & MASK32, a >> np.uint64(32)
    b_lo, b_hi = b & MASK32, b >> np.uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & MASK32) + lo_hi
    high = a_hi * b_hi + (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32))
    low = (cross << np.uint64(32)) | (lo_lo & MASK32)
    return high, low


@njit(cache=True)
def next64(st: np.ndarray) -> np.uint64:
    """Advance the PCG64 state (128-bit LCG) and return its XSL-RR output."""
    hi, lo = _mul64(st[S_LO], MULT_LO)
    hi = hi + st[S_HI] * MULT_LO + st[S_LO] * MULT_HI
    new_lo = lo + st[I_LO]
    carry = np.uint64(1) if new_lo < lo else np.uint64(0)
    new_hi = hi + st[I_HI] + carry
    st[S_HI] = new_hi
    st[S_LO] = new_lo
    x = new_hi ^ new_lo
    rot = new_hi >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True)
def next32(st: np.ndarray) -> np.uint64:
    """NumPy's buffered 32-bit draw: the high half of a 64-bit draw is kept for the next call."""
    if st[HAS32] != 0:
        st[HAS32] = 0
        return st[BUF32]
    x = next64(st)
    st[HAS32] = 1
    st[BUF32] = x >> np.uint64(32)
    return x & MASK32


@njit(cache=True)
def integers(st: np.ndarray, n: int) -> int:
    """``Generator.integers(n)`` for ``1 <= n < 2**32``: uniform in ``[0, n)``."""
    rng = np.uint64(n - 1)
    if rng == np.uint64(0):
        return 0
    excl = rng + np.uint64(1)
    m = next32(st) * excl
    leftover = m & MASK32
    if leftover < excl:
        threshold = (MASK32 - rng) % excl
        while leftover < threshold:
            m = next32(st) * excl
            leftover = m & MASK32
    return np.int64(m >> np.uint64(32))

"""NumPy's ``Generator.integers`` inside numba kernels, draw for draw.

Agents draw from ``numpy.random.default_rng(...)`` (PCG64). A compiled game loop that must make
the same choices copies each seat's bit-generator state into a ``uint64[6]`` row
(:func:`pcg_state`: state high/low, increment high/low, has_uint32, the buffered 32 bits) and
calls :func:`integers` (``rng.integers(n)``): PCG64 with the XSL-RR output, the 32-bit buffer
NumPy's ``next_uint32`` keeps, and Lemire's bounded draw as NumPy's ``random_bounded_uint64_fill``
does for ranges below 2**32 (no draw at all for ``n == 1``). Tested draw for draw against NumPy.
"""

from __future__ import annotations

import zlib

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


# ---- seeding: numpy_generator(seed, purpose) without leaving numba ------------------------------

INIT_A, MULT_A = np.uint64(0x43B0D7E5), np.uint64(0x931E8875)
INIT_B, MULT_B = np.uint64(0x8B51F9DD), np.uint64(0x58F38DED)
MIX_L, MIX_R = np.uint64(0xCA01F9DD), np.uint64(0x4973F715)
SHIFT16 = np.uint64(16)
# numba widens 32-bit products to 64 bits: the words are kept in uint64 and cut to 32 bits by hand


@njit(cache=True)
def _hash(value: np.uint64, h: np.uint64, mult: np.uint64) -> tuple:
    """SeedSequence's hashmix step: (mixed value, next hash constant), 32-bit arithmetic."""
    value = (value ^ h) & MASK32
    h = (h * mult) & MASK32
    value = (value * h) & MASK32
    return value ^ (value >> SHIFT16), h


@njit(cache=True)
def _pool(entropy: np.ndarray) -> np.ndarray:
    """NumPy SeedSequence's 4-word pool mixed from ``entropy`` (32-bit words, at most 4)."""
    pool = np.zeros(4, np.uint64)
    h = INIT_A
    for i in range(4):
        pool[i], h = _hash(entropy[i] if i < entropy.shape[0] else np.uint64(0), h, MULT_A)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                v, h = _hash(pool[src], h, MULT_A)
                r = (MIX_L * pool[dst] - MIX_R * v) & MASK32
                pool[dst] = r ^ (r >> SHIFT16)
    return pool


@njit(cache=True)
def _words(pool: np.ndarray, n: int) -> np.ndarray:
    """SeedSequence.generate_state(n, uint32) from a mixed pool (as uint64 holding 32 bits)."""
    out = np.empty(n, np.uint64)
    h = INIT_B
    for i in range(n):
        out[i], h = _hash(pool[i % 4], h, MULT_B)
    return out


@njit(cache=True)
def _u64(lo: np.uint64, hi: np.uint64) -> np.uint64:
    return lo | (hi << np.uint64(32))


@njit(cache=True)
def derive_seed_crc(seed: int, purpose_crc: int) -> np.uint64:
    """The stream seed of :func:`envs.core.rng.derive_seed`, callable from numba (``purpose_crc``:
    ``zlib.crc32(purpose)``): numpy's ``SeedSequence([seed low 32 bits, high 32 bits, crc])``, two words."""
    s = np.uint64(seed)
    entropy = np.empty(3, np.uint64)
    entropy[0] = s & MASK32
    entropy[1] = s >> np.uint64(32)
    entropy[2] = np.uint64(purpose_crc)
    w = _words(_pool(entropy), 2)
    return (w[0] << np.uint64(32)) | w[1]


@njit(cache=True)
def seed_pcg(seed: int, purpose_crc: int, out: np.ndarray) -> None:
    """Fill ``out`` (uint64[6]) with the state of ``numpy_generator(seed, purpose)`` where
    ``purpose_crc`` is ``zlib.crc32(purpose)``: derive_seed's SeedSequence, then default_rng's."""
    derived = derive_seed_crc(seed, purpose_crc)
    high = derived >> np.uint64(32)
    run = np.empty(2 if high != np.uint64(0) else 1, np.uint64)
    run[0] = derived & MASK32
    if high != np.uint64(0):
        run[1] = high
    v = _words(_pool(run), 8)
    init_hi, init_lo, seq_hi, seq_lo = _u64(v[0], v[1]), _u64(v[2], v[3]), _u64(v[4], v[5]), _u64(v[6], v[7])
    out[S_HI] = 0
    out[S_LO] = 0
    out[I_HI] = (seq_hi << np.uint64(1)) | (seq_lo >> np.uint64(63))
    out[I_LO] = (seq_lo << np.uint64(1)) | np.uint64(1)
    out[HAS32] = 0
    out[BUF32] = 0
    next64(out)
    lo = out[S_LO] + init_lo
    out[S_HI] = out[S_HI] + init_hi + (np.uint64(1) if lo < init_lo else np.uint64(0))
    out[S_LO] = lo
    next64(out)


def seat_crcs(players: int) -> np.ndarray:
    """``zlib.crc32`` of each seat's generator purpose (``numpy_generator(seed, "seat<i>")``)."""
    return np.array([zlib.crc32(f"seat{i}".encode()) for i in range(players)], np.int64)

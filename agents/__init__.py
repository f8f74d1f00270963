"""Search, greedy, random and learning agents of meeplelab."""

from envs.core.numba_cache import configure_numba_cache

configure_numba_cache()  # before any compiled function is defined (see envs/core/numba_cache.py)

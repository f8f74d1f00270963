"""Search, greedy, random and learning agents of meeplelab."""

from envs.core.numba_cache import configure_numba_cache

configure_numba_cache()  # before any compiled function is defined (see envs/core/numba_cache.py)

from agents.plugin import register  # noqa: E402  (after the cache is configured)

register()  # opponent specs and greedy rollouts for the envs (envs.core.policies)

"""Rules engines and Gymnasium environments of meeplelab.

Importing ``envs`` registers the environment ids with Gymnasium:
``meeplelab/Cartographers-v0``, ``meeplelab/Cascadia-v0``, ``meeplelab/Dorfromantik-v0``. Each takes
``action_space="plain"`` (the default) or ``"candidates"`` (:mod:`envs.core.candidate_env`).
"""

import gymnasium as gym

from envs.core.numba_cache import configure_numba_cache

configure_numba_cache()  # before any compiled function is defined (see envs/core/numba_cache.py)

_ENVS = {
    "meeplelab/Cartographers-v0": "envs.cartographers.env:CartographersEnv",
    "meeplelab/Cascadia-v0": "envs.cascadia.env:CascadiaEnv",
    "meeplelab/Dorfromantik-v0": "envs.dorfromantik.env:DorfromantikEnv",
}

for _env_id, _entry in _ENVS.items():
    if _env_id not in gym.registry:
        # the entry point builds the class, or wraps it when action_space="candidates"
        gym.register(id=_env_id, entry_point="envs.core.candidate_env:make_env", kwargs={"env_class": _entry})

"""Rules engines and Gymnasium environments of meeplelab.

Importing ``envs`` registers the environment ids with Gymnasium:
``meeplelab/Cartographers-v0``, ``meeplelab/Cascadia-v0``, ``meeplelab/Dorfromantik-v0``. Each takes
``action_space="plain"`` (the default) or ``"candidates"`` (:mod:`envs.core.candidate_env`). Every id also
has a vector entry point: ``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``
returns the game's batched numba vector env (:func:`envs.core.vector_env.make_vector_env`, next-step
autoreset).
"""

import importlib
from functools import partial

import gymnasium as gym

from envs.core.numba_cache import configure_numba_cache

configure_numba_cache()  # before any compiled function is defined (see envs/core/numba_cache.py)


def _make_vector_env(vector_class: str, **kwargs):
    """The vector entry point; its module (and the compiled code behind it) loads on first use."""
    return importlib.import_module("envs.core.vector_env").make_vector_env(vector_class, **kwargs)


_ENVS = {
    "meeplelab/Cartographers-v0": "envs.cartographers.env:CartographersEnv",
    "meeplelab/Cascadia-v0": "envs.cascadia.env:CascadiaEnv",
    "meeplelab/Dorfromantik-v0": "envs.dorfromantik.env:DorfromantikEnv",
}
_VECTOR_ENVS = {
    "meeplelab/Cartographers-v0": "envs.cartographers.vector_env:CartographersVectorEnv",
    "meeplelab/Cascadia-v0": "envs.cascadia.vector_env:CascadiaVectorEnv",
    "meeplelab/Dorfromantik-v0": "envs.dorfromantik.vector_env:DorfromantikVectorEnv",
}

for _env_id, _entry in _ENVS.items():
    if _env_id not in gym.registry:
        # the entry point builds the class, or wraps it when action_space="candidates"
        _vector = _VECTOR_ENVS.get(_env_id)
        gym.register(id=_env_id, entry_point="envs.core.candidate_env:make_env", kwargs={"env_class": _entry},
                     vector_entry_point=None if _vector is None else partial(_make_vector_env, _vector))

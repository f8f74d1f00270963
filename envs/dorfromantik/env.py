"""Gymnasium and RLlib environments of Dorfromantik (``meeplelab/Dorfromantik-v0``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from envs.core.errors import ConfigError
from envs.core.gym_env import GameEnv, merge_env_config
from envs.core.lazy import lazy_attributes
from envs.core.rewards import check_reward_mode
from envs.dorfromantik.game import DorfromantikGame

_ENV_KEYS = ("seat", "opponent", "illegal_action", "illegal_penalty", "team")


def bounded_observation_space(game: DorfromantikGame) -> spaces.Dict:
    """Observation space with the real bounds: every feature is >= 0 and scores are scaled by 1/50."""
    return spaces.Dict({
        "observations": spaces.Box(0.0, 10.0, shape=game.observation_shape(), dtype=np.float32),
        "action_mask": spaces.Box(0.0, 1.0, shape=(game.num_actions,), dtype=np.float32),
    })


def _check_cooperative_reward(reward: Any) -> str:
    """Dorfromantik has one shared score, so only ``reward="score"`` means anything."""
    if check_reward_mode(reward) != "score":
        raise ConfigError("dorfromantik is cooperative (one shared score): reward must be 'score', "
                          f"got {reward!r}")
    return reward


def _split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    env = {k: options.pop(k) for k in _ENV_KEYS if k in options}
    return env, options


class DorfromantikEnv(GameEnv):
    """Dorfromantik: The Board Game, first campaign game, as a single-agent Gymnasium env.

    ## Description
    1-6 players lay hexagonal tiles into one shared landscape and share one score: completed task
    markers, flags in closed areas, the longest rail and the longest river. By default the agent is
    *the team*: it decides every turn, whichever seat is current (``team=True``). With ``team=False``
    the agent plays ``seat`` and the other seats are played by ``opponent`` (teammates, since the
    score is shared). Rules: ``seeds/dorfromantik-rules.md``.

    ## Action Space
    ``Discrete((2W+1)^2 * 6)`` with ``W = window_radius`` (default 15: 5,766 actions). Action
    ``((r - cr + W) * (2W+1) + (q - cq + W)) * 6 + rot`` places the drawn tile at axial (q, r) turned
    ``rot`` x 60 degrees clockwise. The window *follows the board*: (cq, cr) is the midpoint (floor)
    of the placed tiles' bounding box, (0, 0) before the first tile, so an action's position moves
    whenever the board grows at its edge. Every legal position lies inside the window (tested over
    whole games; ``window_radius=36`` makes it certain). The action mask marks the legal actions; a
    tile with no legal position at all is set aside by the engine (decision 5) and needs no action.

    ## Observation Space
    ``Dict(observations=Box(34 * (2W+1)^2 + 74,), action_mask=Box(0, 1, (n,)))``: 34 board planes
    over the window (occupancy, the terrain of each of a tile's six edges one-hot, legal positions,
    open task tiles with the tiles they still miss, flags), then the drawn tile (edges, task type,
    target), the three open tasks (type, target, current size, open edges), the stack counts and
    the score categories. See ``DorfromantikGame.observation``.

    ## Rewards
    The change of the shared score over the step (it never decreases); the episode's return is the
    final score.

    ## Episode End
    Terminated when a landscape tile must be drawn and the landscape stack is empty (after any
    chained task draws). Never truncated: a game has at most 70 placements.

    ## Information
    ``info["action_mask"]``; ``info["score"]``: total, tasks, flags, longest_rail, longest_river, the
    task points per type, the flag points per colour, completed/failed/open task counts, tiles placed;
    ``info["player"]``.

    ## Arguments
    ``players`` (1-6, default 1), ``render_mode`` (None, "ansi", "rgb_array"), game options
    (``window_radius``), ``team`` (default True), ``seat``, ``opponent`` (agent spec for the other
    seats when ``team=False``), ``illegal_action`` ("raise" or "penalize"; use "penalize" for
    ``check_env``), ``illegal_penalty``, ``reward`` (only "score": the game is cooperative). RLlib may
    pass one ``env_config`` mapping instead.

    ## Version History
    * v0: first campaign game (no boxes opened), 48 landscape + 25 task tiles.
    """

    def __init__(self, players: Any = 1, render_mode: str | None = None, **game_options: Any):
        options = merge_env_config(players, game_options, "players")
        render_mode = options.pop("render_mode", render_mode)
        _check_cooperative_reward(options.pop("reward", "score"))
        env_options, game_opts = _split(options)
        self.team = bool(env_options.pop("team", True))
        game = DorfromantikGame(**game_opts)
        if self.team:
            env_options["opponent"] = env_options.get("opponent", "random")
        super().__init__(game, render_mode=render_mode, **env_options)
        self.observation_space = bounded_observation_space(game)
        if self.team:
            self._opponents = {}

    def _play_opponents(self) -> None:
        if not self.team:
            super()._play_opponents()

    def _legal_now(self) -> np.ndarray:
        if self.team:
            return np.asarray(self.game.legal_mask(self.state), dtype=bool)
        return super()._legal_now()


def _build_multiagent_class() -> type:
    """Defined on first use so that importing the single-agent env does not import Ray."""
    from envs.core.multiagent_env import GameMultiAgentEnv

    class DorfromantikMultiAgentEnv(GameMultiAgentEnv):
        """Dorfromantik as an RLlib multi-agent env: agents ``player_0..``, one per seat, in turn order.

        Every seat receives the *shared* reward: the change of the common score since that seat last
        acted (``shared_reward=True``, the scores of all seats being equal). Spaces, codec, episode end
        and infos are those of :class:`DorfromantikEnv`. Arguments: ``players`` (default 2),
        ``render_mode``, ``illegal_action``, ``illegal_penalty``, ``reward`` ("score" only),
        ``shared_reward`` (accepted and ignored: always shared), ``action_space`` and
        ``max_candidates`` (:mod:`envs.core.multiagent_env`) and game options.
        """

        def __init__(self, players: Any = 2, render_mode: str | None = None, **game_options: Any):
            options = merge_env_config(players, game_options, "players")
            render_mode = options.pop("render_mode", render_mode)
            env_options = {k: options.pop(k) for k in ("illegal_action", "illegal_penalty", "action_space",
                                                        "max_candidates") if k in options}
            _check_cooperative_reward(options.pop("reward", "score"))
            options.pop("shared_reward", None)  # every seat's score is the shared one either way
            super().__init__(DorfromantikGame(**options), shared_reward=True, render_mode=render_mode,
                             **env_options)
            if self.view is None:  # the plain observation, with the env's bounds
                space = bounded_observation_space(self.game)
                self.observation_spaces = {a: space for a in self.possible_agents}

    DorfromantikMultiAgentEnv.__qualname__ = "DorfromantikMultiAgentEnv"  # picklable by reference
    return DorfromantikMultiAgentEnv


__getattr__ = lazy_attributes(globals(), {"DorfromantikMultiAgentEnv": _build_multiagent_class})

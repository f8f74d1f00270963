"""A Gymnasium environment over any :class:`envs.core.game.Game`.

One seat (``seat``) is the learner; every other seat is played by an opponent agent built with
:func:`agents.base.make_agent`. Each game's ``env.py`` subclasses :class:`GameEnv` and only
builds the game and writes the docstring.

Observation: ``Dict({"observations": Box(game.observation_shape(), float32),
"action_mask": Box(0, 1, (num_actions,), float32)})``. The mask is float32 because RLlib's
masking modules add ``log(mask)`` to the logits; ``info["action_mask"]`` holds the same values.

Illegal actions. With ``illegal_action="raise"`` (the default) an illegal action raises
:class:`~envs.core.errors.IllegalActionError` naming the action and the reason, so a broken
masking policy fails loudly. ``gymnasium.utils.env_checker.check_env`` (1.2.2) steps the env with
``env.action_space.sample()``, which knows nothing of the mask: it samples once after a reset and
once *before* ``reset(seed=123)`` for the action it then steps, so no mask-aware action space could
make that action legal. Run check_env (and any tool that sends unmasked actions) with
``illegal_action="penalize"``: the state is left unchanged, the step returns reward
``illegal_penalty`` and ``info["illegal_action"]`` names the action; the episode goes on. Real
training keeps "raise". To sample legal actions use ``action_space.sample(mask=...)`` with
``info["action_mask"].astype(np.int8)``, or :meth:`GameEnv.action_masks`.

Rewards (``reward``, see :mod:`envs.core.rewards`): "score" (own score change, the default),
"margin" (own change minus the others' mean change) or "win" (a rank reward at the end only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, State, action_index
from envs.core.policies import build_agent
from envs.core.rewards import check_reward_mode, seat_value, terminal_rewards
from envs.core.rng import numpy_generator

ILLEGAL_ACTION_MODES = ("raise", "penalize")
RENDER_MODES = ("ansi", "rgb_array")
#: game seeds drawn by ``reset(seed=None)`` lie in [0, MAX_GAME_SEED)
MAX_GAME_SEED = 2**62


def observation_space_for(game: Game) -> spaces.Dict:
    """The observation space every meeplelab env uses for ``game``."""
    low, high = game.observation_bounds()
    return spaces.Dict({
        "observations": spaces.Box(low, high, shape=tuple(game.observation_shape()), dtype=np.float32),
        "action_mask": spaces.Box(0.0, 1.0, shape=(game.num_actions,), dtype=np.float32),
    })


def check_illegal_action_mode(mode: str) -> str:
    """Validate an ``illegal_action`` option."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ConfigError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {mode!r}")
    return mode


def check_render_mode(mode: str | None) -> str | None:
    """Validate a ``render_mode`` option."""
    if mode is not None and mode not in RENDER_MODES:
        raise ConfigError(f"render_mode must be one of {RENDER_MODES} or None, got {mode!r}")
    return mode


def merge_env_config(first: Any, options: dict[str, Any], first_name: str) -> dict[str, Any]:
    """Options of an env constructor that RLlib may call with one ``env_config`` mapping.

    ``first`` is the constructor's first positional argument: a mapping (RLlib's ``env_config``)
    is merged under the keyword options; anything else is the value of ``first_name``.
    """
    if isinstance(first, Mapping):
        merged = dict(first)
        merged.update(options)
        return merged
    merged = dict(options)
    if first is not None:
        merged[first_name] = first
    return merged


#: constructor options of a game env that belong to the env, not to the game
ENV_OPTIONS = ("seat", "opponent", "render_mode", "illegal_action", "illegal_penalty", "reward")


def split_env_options(players: Any, options: dict[str, Any],
                      defaults: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(game options, env keyword arguments) of a game env constructor called either with
    keywords or with one RLlib ``env_config`` mapping as ``players``; ``defaults`` fill what
    neither gives (players, opponent, render_mode...)."""
    merged = merge_env_config(players, options, "players")
    for key, value in defaults.items():
        merged.setdefault(key, value)
    env_kwargs = {k: merged.pop(k) for k in ENV_OPTIONS if k in merged}
    return merged, env_kwargs



def choose_game_seed(seed: int | None, options: dict[str, Any] | None, rng: np.random.Generator) -> int:
    """The game seed of a ``reset``: ``options["game_seed"]``, else ``seed``, else one drawn from
    ``rng`` (the env's generator); ConfigError for a negative one."""
    options = options or {}
    if "game_seed" in options:
        game_seed = int(options["game_seed"])
    elif seed is not None:
        game_seed = int(seed)
    else:
        game_seed = int(rng.integers(0, MAX_GAME_SEED))
    if game_seed < 0:
        raise ConfigError(f"game seed must be >= 0, got {game_seed}")
    return game_seed


def render_state(game: Game, state: Any, render_mode: str | None, seat: int | None) -> Any:
    """``state`` seen by ``seat`` (None: the whole table) as text ("ansi") or an RGB array
    ("rgb_array"); None, with a warning, without a render mode."""
    if render_mode is None:
        gym.logger.warn("render() called without a render_mode; pass render_mode to the env")
        return None
    if state is None:
        raise gym.error.ResetNeeded("call reset() before render()")
    if render_mode == "ansi":
        return game.render_ansi(state, seat)
    return np.asarray(game.render_rgb(state, seat), dtype=np.uint8)

class GameEnv(gym.Env):
    """Single-agent Gymnasium env: the learner plays ``seat``, opponents play the other seats.

    Args:
        game: the rules object (``envs.core.registry.make_game(...)``).
        seat: the learner's seat.
        opponent: agent spec for every other seat ("random", "greedy", "mcts:simulations=64", or
            a dict), built with :func:`agents.base.make_agent`, or an agent object (one instance
            shared by the seats); each seat's agent draws from its own stream
            ``numpy_generator(game_seed, f"seat{i}")``.
        render_mode: None, "ansi" or "rgb_array".
        illegal_action: "raise" (default) or "penalize" (see the module docstring).
        illegal_penalty: reward of a penalized illegal action.
        reward: "score" (default), "margin" or "win" (:mod:`envs.core.rewards`).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, game: Game, seat: int = 0, opponent: str | dict | Any = "random",
                 render_mode: str | None = None, illegal_action: str = "raise",
                 illegal_penalty: float = -1.0, reward: str = "score"):
        super().__init__()
        if not isinstance(game, Game):
            raise ConfigError(f"GameEnv needs an envs.core.game.Game, got {type(game).__name__}")
        if not 0 <= int(seat) < game.num_players():
            raise ConfigError(f"seat must be in 0..{game.num_players() - 1}, got {seat}")
        self.game = game
        self.seat = int(seat)
        self.opponent_spec = opponent
        self.render_mode = check_render_mode(render_mode)
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.illegal_penalty = float(illegal_penalty)
        self.reward_mode = check_reward_mode(reward)
        self.observation_space = observation_space_for(game)
        self.action_space = spaces.Discrete(game.num_actions)
        self.state: State | None = None
        self.game_seed: int | None = None
        self._opponents: dict[int, Any] = {}
        self._opponent_rngs: dict[int, np.random.Generator] = {}
        self._unpaid = 0.0
        if game.num_players() > 1:  # build once now, so a bad spec fails at construction
            self._opponents = {i: self._build_opponent(opponent)
                               for i in range(game.num_players()) if i != self.seat}

    # ---- Gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new game. ``seed`` is the game seed; None draws one from the env's np_random.

        ``options={"game_seed": s}`` starts game ``s`` without reseeding the env.
        """
        super().reset(seed=seed)
        self.game_seed = game_seed = choose_game_seed(seed, options, self.np_random)
        self.state = self.game.new_game(game_seed)
        self._opponent_rngs = {i: numpy_generator(game_seed, f"seat{i}") for i in self._opponents}
        at_start = self._learner_value()
        self._play_opponents()
        # what the opening moves before the learner's first turn changed is paid with its first step
        self._unpaid = self._learner_value() - at_start
        return self._observe()

    def step(self, action):
        """Play the learner's ``action``, then the opponents until the learner must act again.

        Reward (``reward="score"``): the change of the learner seat's total score over this step
        and the opponents' replies; "margin" subtracts the others' mean change over the same
        interval; "win" pays the rank reward when the game ends and 0 before. The first step also
        pays what the seats before the learner changed at the start, so an episode's rewards add up
        to the final score (or margin). Terminated when the game ends; never truncated.
        """
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.game.is_over(self.state):
            raise IllegalActionError(-1, f"the game is over; call reset() (got action {action!r})")
        try:
            action = action_index(action, self.game.num_actions)
            self.game.check_legal(self.state, action)
        except IllegalActionError as exc:
            if self.illegal_action == "raise":
                raise
            obs, info = self._observe()
            info["illegal_action"] = str(exc)
            return obs, self.illegal_penalty, False, False, info
        reward, terminated = self.apply_move(lambda state: self.game.step(state, action))
        obs, info = self._observe()
        return obs, reward, terminated, False, info

    def apply_move(self, move) -> tuple[float, bool]:
        """Apply the learner's ``move(state)`` (a legal action, or a whole turn), then the opponents'
        moves up to the learner's next decision: (reward, terminated)."""
        before = self._learner_value()
        move(self.state)
        self._play_opponents()
        terminated = bool(self.game.is_over(self.state))
        reward = self._learner_value() - before + self._unpaid
        self._unpaid = 0.0
        if terminated and self.reward_mode == "win":
            reward += float(terminal_rewards(self.game, self.state)[self.seat])
        return float(reward), terminated

    def render(self):
        """The position as text ("ansi") or an RGB array ("rgb_array"); None without a mode."""
        return render_state(self.game, self.state, self.render_mode, self.seat)

    # ---- helpers ------------------------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """The legal actions now as a bool array (the MaskablePPO convention)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return self._legal_now()

    def _legal_now(self) -> np.ndarray:
        if self.game.is_over(self.state) or self.game.current_player(self.state) != self.seat:
            return np.zeros(self.game.num_actions, dtype=bool)
        return np.asarray(self.game.legal_mask(self.state), dtype=bool)

    def _build_opponent(self, opponent: Any) -> Any:
        if isinstance(opponent, (str, dict)):
            return build_agent(opponent, self.game)
        if callable(getattr(opponent, "act", None)):
            return opponent  # an agent object, e.g. a frozen policy for self-play
        raise ConfigError(f"opponent must be an agent spec (str or dict) or an agent, got {opponent!r}")

    def _play_opponents(self) -> None:
        while not self.game.is_over(self.state):
            player = self.game.current_player(self.state)
            if player == self.seat:
                return
            mask = self.game.legal_mask(self.state)
            action = self._opponents[player].act(self.state, mask, self._opponent_rngs[player])
            self.game.step(self.state, int(action))

    def _learner_value(self) -> float:
        """The learner's reward value now (its total, or its margin; 0 for "win")."""
        if self.reward_mode == "win":
            return 0.0
        return seat_value(self.reward_mode, np.asarray(self.game.returns(self.state)), self.seat)

    def solo_reward(self, score_change: float, terminated: bool) -> float:
        """The reward of a solo step whose own score changed by ``score_change``, for fused step
        paths that track the score themselves (solo: "margin" is "score")."""
        if self.reward_mode != "win":
            return float(score_change)
        return float(terminal_rewards(self.game, self.state)[0]) if terminated else 0.0

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Observation and info of the current state; the mask is computed once for both."""
        info = self.step_info()
        obs = np.asarray(self.game.observation(self.state, self.seat), dtype=np.float32)
        return {"observations": obs, "action_mask": info["action_mask"].copy()}, info

    def step_info(self) -> dict[str, Any]:
        """The info of the current state (the legal mask, the learner's score sheet, its seat), without
        the observation: what a wrapper that observes otherwise needs."""
        return {"action_mask": self._legal_now().astype(np.float32),
                "score": self.game.scores(self.state)[self.seat].as_dict(), "player": self.seat}

"""Gymnasium and RLlib environments of Cartographers (``meeplelab/Cartographers-v0``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.cartographers import kernels as K
from envs.core.gym_env import GameEnv, split_env_options
from envs.core.lazy import lazy_attributes
from envs.core.registry import make_game


class CartographersEnv(GameEnv):
    """Cartographers, one map per seat; the learner draws on its own map for four seasons.

    ## Description

    Every explore card offers a shape and a terrain; the player draws it on its 11 x 11 map so that
    the four scoring cards under edicts A-D (two scored per season) pay as much as possible, while
    monsters from ambush cards cost a point per empty cell they touch at every season's end. The
    rules are the base game of seed 000 with the project's rulings (shared/reference/
    rules-decisions.md); solo by default (ambushes placed by the solo rule, decision 9). With
    ``players > 1`` the other seats are played by ``opponent`` agents, and on an ambush the
    learner also draws the monster on its neighbour's map.

    ## Action Space

    ``Discrete(11374)``, one integer per (kind, terrain, shape, orientation, cell):

    - place, ``((t * 2 + k) * 8 + o) * 121 + a`` (0..9679): terrain option ``t`` (0..4) and
      shape option ``k`` (0..1) of the card, orientation ``o`` (0..7, the distinct orientations
      first), top-left of the bounding box at cell ``a = row * 11 + col``;
    - fallback, ``9680 + t * 121 + c``: a 1x1 of forest, village, farm, water or monster
      (``t`` 0..4) at cell ``c``, only when no offered option fits;
    - ambush, ``10285 + o * 121 + a`` (multiplayer): the monster shape in orientation ``o`` on
      the neighbour's map;
    - ambush 1x1, ``11253 + c`` (multiplayer): one monster cell when the shape fits nowhere.

    Only a few hundred actions are legal at a time: use the ``action_mask``.
    ``game.decode_action(a, state)`` and ``game.encode_action(...)`` convert.

    ## Observation Space

    ``Dict(observations=Box(0, 2, (2152,), float32), action_mask=Box(0, 1, (11374,), float32))``.
    ``observations``: own map one-hot over the 8 terrain codes (8 x 121), printed ruins (121), the
    map being drawn on during an ambush (8 x 121, else zeros), the current card one-hot (17),
    season one-hot (4), season time and threshold (/8), active edicts (4), coins (/14), ruins
    pending, phase (explore/ambush) and the scoring card of each edict one-hot (4 x 16).
    ``action_mask``: 1.0 where the action is legal now (equal to ``info["action_mask"]``).

    ## Rewards

    The change of the learner's total score over the step and the opponents' replies: 0 inside a
    season, the season's score (two edicts + coins - monster penalty) when a season ends. An
    episode's rewards add up to the final score.

    ## Episode End

    Terminated after the winter scoring. Never truncated (a game has a bounded number of cards).

    ## Information

    ``info["action_mask"]`` (float32 mask), ``info["score"]`` (the learner's score sheet: total,
    per season the two edicts, coins, monsters and total; coins, monsters lost; solo: threshold,
    evaluation points and title), ``info["player"]`` (the learner's seat).

    ## Arguments

    ``gymnasium.make("meeplelab/Cartographers-v0", players=1, opponent="random",
    render_mode=None, seat=0, illegal_action="raise", illegal_penalty=-1.0, reward="score",
    **game_options)``; ``reward``: "score", "margin" or "win" (:mod:`envs.core.rewards`);
    ``game_options``: ``side`` ("A"/"B"), ``edict_order`` ("random"/"fixed"), ``cards`` (4 cards
    for edicts A-D), ``coin_cap`` (14 or None), ``ambushes`` (True/False). ``render_mode``: "ansi"
    or "rgb_array". ``illegal_action="penalize"`` returns ``illegal_penalty`` and keeps the state
    instead of raising (for checkers that send unmasked actions). RLlib may pass one
    ``env_config`` dict as the first argument.

    ## Version History

    * v0: initial version (base game, solo and 2-6 players, sides A and B).
    """

    def __init__(self, players: int | dict = 1, opponent: str | dict = "random",
                 render_mode: str | None = None, **game_options: Any):
        options, env_kwargs = split_env_options(
            players, game_options, {"players": 1, "opponent": opponent, "render_mode": render_mode})
        game = make_game("cartographers", **options)
        super().__init__(game, **env_kwargs)
        self._mask = np.zeros(game.num_actions, dtype=bool)
        self._obs = np.zeros(game.observation_shape(), dtype=np.float32)
        self._buf = np.empty((4096, 2), dtype=np.int32)

    def step(self, action):
        """As :meth:`GameEnv.step`; a solo game takes a fused kernel path (check, apply, season
        end, next mask and observation in one compiled call) that gives the same results. An
        illegal action falls back to the generic path, which raises or penalizes with the reason."""
        if self.game.players != 1 or self.state is None or self.game.is_over(self.state) \
                or not isinstance(action, int | np.integer) or isinstance(action, bool) \
                or not 0 <= int(action) < self.game.num_actions:
            return super().step(action)
        record = self.state.record
        before = int(record[0, :, K.R_TOTAL].sum())
        code = K.env_step(self.state.arrays(), self.game.tb, int(action), self.seat, self._buf, self._mask,
                          self._obs)
        if code != K.OK:
            return super().step(action)
        terminated = bool(self.game.is_over(self.state))
        reward = self.solo_reward(int(record[0, :, K.R_TOTAL].sum()) - before, terminated)
        mask = self._mask.astype(np.float32)
        info = {"action_mask": mask.copy(), "score": self._score_dict(), "player": self.seat}
        return {"observations": self._obs.copy(), "action_mask": mask}, reward, terminated, False, info

    def step_info(self) -> dict[str, Any]:
        """As :meth:`GameEnv.step_info`, with the cached score breakdown."""
        return {"action_mask": self._legal_now().astype(np.float32), "score": self._score_dict(),
                "player": self.seat}

    def _score_dict(self) -> dict:
        """The learner's score breakdown; rebuilt only when the season, the phase or its coins
        change (the season record is written only at a season's end)."""
        meta = self.state.meta
        key = (int(meta[K.M_SEASON]), int(meta[K.M_PHASE]), int(self.state.coins[self.seat]), self.game_seed)
        if getattr(self, "_score_cache_key", None) != key:
            self._score_cache_key = key
            self._score_cache = self.game.scores(self.state)[self.seat].as_dict()
        return dict(self._score_cache)


MULTIAGENT_DOC = """Cartographers for RLlib multi-agent training: agents ``player_0..``, turn-based.

The seats decide one after another on the shared explore card (each on its own map); on an
ambush each seat draws the monster on its neighbour's map. Only the acting agent observes;
its reward is its own score change since its previous observation. Spaces, observation and
codec are those of :class:`CartographersEnv`.

Arguments (keywords, or one RLlib ``env_config`` dict): ``players`` (default 2),
``shared_reward``, ``reward`` ("score"/"margin"/"win"), ``illegal_action`` ("raise"/"penalize"),
``illegal_penalty``, ``render_mode`` and the game options of :class:`CartographersEnv`.
"""


def _build_multiagent_class() -> type:
    """Defined on first use so that importing the single-agent env does not import Ray."""
    from envs.core.multiagent_env import seat_env_class

    return seat_env_class("cartographers", __name__, "CartographersMultiAgentEnv", MULTIAGENT_DOC)


__getattr__ = lazy_attributes(globals(), {"CartographersMultiAgentEnv": _build_multiagent_class})

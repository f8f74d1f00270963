"""Compiled playouts of a linear Cascadia candidate model (:class:`agents.learned.cascadia.LinearPolicy`
in numba): the playouts of the whole-turn search with ``rollout=learned`` (:mod:`agents.search.turn`),
where the game after a candidate turn is played on by the model in every seat instead of greedy, and
the labels of ``label.model_turns`` (:func:`agents.learned.cascadia.label_games`), where the model
plays the next few turns and greedy the rest.

A market decision lists the candidate turns exactly as
:func:`agents.learned.cascadia.candidate_turns_and_features` does (the listing presets' turn weights
for this turn, duplicates left out), values them by ``features @ theta[phase]`` and plays the first
turn within 1e-6 of the best; any other decision (a turn without candidates, or a redraw the list
never offers) gets the fallback greedy move, as the Python policy does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.greedy.cascadia import greedy_on_board, own_turns_after, play_greedy, turn_weights
from agents.learned import cascadia_kernels as CK
from agents.learned.cascadia_features import turn_features
from agents.learned.cascadia_listing import list_turns
from agents.search.turn import add_final_scores, apply_turn, copy_state, determinize_into
from envs.cascadia import kernels as K


class CompiledModel(NamedTuple):
    """What compiled play needs of a linear model (float64 arrays; numba compiles the record like a
    tuple): ``theta`` [phases, features], ``listing`` the listing presets' greedy weights [presets,
    weights], ``fallback`` the greedy weights of decisions without candidates, and ``finish`` the
    greedy weights that end a playout after its model turns (:func:`paired_model_playouts`); ``width``
    > 0: the model values only the listing's ``width`` best planned turns (:func:`model_turn`)."""

    theta: np.ndarray
    listing: np.ndarray
    fallback: np.ndarray
    finish: np.ndarray
    width: int = 0


@njit(cache=True)
def listing_weights(listing, ctl):
    """The listing presets' turn weights for the turn of ``ctl`` (rows equal to an earlier one left out)."""
    out = np.empty_like(listing)
    m = 0
    for i in range(listing.shape[0]):
        tw = turn_weights(listing[i], ctl)
        dup = False
        for j in range(m):
            if np.all(out[j] == tw):
                dup = True
        if not dup:
            out[m] = tw
            m += 1
    return out[:m]


@njit(cache=True)
def phase_of(ctl) -> int:
    """The model's phase: 0 early (10 or more own turns after this one), 1 middle, 2 the last turn."""
    after = own_turns_after(ctl)
    return 2 if after == 0 else 1 if after < 10 else 0


@njit(cache=True)
def model_turn(b, tb, theta, listing, width=0):
    """The turn (int64[3], -1 padded) the linear model ``theta`` (float64[phases, features]) plays at
    the market decision of ``b``, or an empty array when there is no candidate turn. ``width`` > 0:
    only the ``width`` turns the listing plans best are described and valued (in listing order), so a
    turn costs about the listing's plan plus ``width`` feature rows."""
    turns, planned, _ = list_turns(b, tb, listing_weights(listing, b.ctl))
    n = turns.shape[0]
    if n == 0:
        return np.empty(0, np.int64)
    if 0 < width < n:
        turns = turns[np.sort(np.argsort(-planned, kind="mergesort")[:width])]
        n = width
    feats = np.empty((n, CK.NUM_FEATURES), np.float32)
    turn_features(b, turns, tb, feats)
    row = theta[phase_of(b.ctl)]
    values = np.empty(n)
    for i in range(n):
        v = 0.0
        for j in range(CK.NUM_FEATURES):
            v += np.float64(feats[i, j]) * row[j]
        values[i] = v
    best = values.max()
    for i in range(n):
        if values[i] >= best - 1e-6:
            return turns[i].copy()
    return turns[0].copy()


@njit(cache=True)
def play_model(b, tb, model, turns=-1) -> None:
    """Play on ``b`` with the linear ``model`` (a :class:`CompiledModel`) in every seat: to the end of
    the game, or with ``turns`` >= 0 for that many turns (market decisions) at most."""
    nbr, kind_edges, kind_info = tb.nbr, tb.kind_edges, tb.kind_info
    theta, listing, fallback = model.theta, model.listing, model.fallback
    played = 0
    while b.ctl[K.C_PHASE] != K.PHASE_OVER and (turns < 0 or played < turns):
        if b.ctl[K.C_PHASE] == K.PHASE_MARKET:
            played += 1
            turn = model_turn(b, tb, theta, listing, model.width)
            if turn.shape[0]:
                apply_turn(b, turn, nbr, kind_edges, kind_info)
                continue
        K.apply_on_board(greedy_on_board(b, tb, fallback), b, nbr, kind_edges, kind_info)
    # a turn that the last counted market decision began is finished by the fallback
    while b.ctl[K.C_PHASE] != K.PHASE_OVER and b.ctl[K.C_PHASE] != K.PHASE_MARKET:
        K.apply_on_board(greedy_on_board(b, tb, fallback), b, nbr, kind_edges, kind_info)


@njit(cache=True)
def paired_model_playouts(st, det, work, cands, n_cands, futures, stream, tb, model, sums, column,
                          turns) -> None:
    """As :func:`agents.search.turn.paired_playouts`, with the game after each candidate turn played
    by the linear ``model`` (a :class:`CompiledModel`) in every seat instead of greedy: to the end, or
    with ``turns`` >= 0 for that many turns, then by greedy ``model.finish`` to the end."""
    out = np.zeros((st.ctl[K.C_PLAYERS], K.NUM_CAT), np.int32)
    no_stream = np.zeros(1, np.uint64)
    for _ in range(futures):
        determinize_into(st, det, stream)
        for k in range(n_cands):
            copy_state(det, work)
            apply_turn(work, cands[k], tb.nbr, tb.kind_edges, tb.kind_info)
            play_model(work, tb, model, turns)
            if turns >= 0:
                play_greedy(work, tb, model.finish, 0.0, no_stream)
            add_final_scores(work, tb, out, sums, k, column)

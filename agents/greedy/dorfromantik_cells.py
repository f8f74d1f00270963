"""The Dorfromantik greedy valuation by frontier cell: the fast path of
:func:`agents.greedy.dorfromantik_kernels.greedy_values`.

:func:`agents.greedy.dorfromantik_kernels.evaluate_placement` values one placement on its own and
looks up the groups around the cell (union-find roots) again for every term and every rotation.
Most of what it reads does not depend on the rotation: the terrain each neighbour shows the cell and
that edge's group, each open task's and flag's group with its size and open edges, and how many of a
group's open edges face the cell. :func:`cell_values` reads those once per cell and then values the
six rotations from them, adding the terms in the same order with the same operations, so every value
is bit for bit the one ``evaluate_placement`` gives (tested on thousands of positions) and greedy games,
ties included, are unchanged. The greedy playouts of the Dorfromantik search spend most of their time
here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from envs.dorfromantik.kernels import (
    DIR_OFFSETS,
    M_DRAWN,
    M_FRONT,
    M_MARKER,
    M_MAX_RAIL,
    M_MAX_RIVER,
    M_TASKS,
    RAIL,
    RIVER,
    uf_root,
)

#: the kernel valued once per frontier cell allocates nothing and is compiled without numba's reference
#: counting, as the engines' step kernels are (``envs.cascadia.kernels.step_jit``): a call with array
#: arguments then costs no atomic counter updates
step_jit = njit(cache=True, _nrt=False)
#: its small steps, inlined into it (only ever called from ``step_jit`` kernels, or with numbers only)
inline_jit = njit(cache=True, _nrt=False, inline="always")

#: rows of the per-step group table (:func:`open_groups`): root, terrain, target (tasks), size, open edges
G_ROOT, G_TERR, G_TARGET, G_SIZE, G_OPEN = range(5)


@inline_jit
def open_task_term(value: float, points: float, fail: float, progress: float, tight: float, size: int,
                   new_size: int, new_open: int, target: int) -> float:
    """``value`` plus an open task's term: its target when the placement completes it exactly, minus
    ``fail`` x target when it overshoots or closes short, else ``progress`` per tile gained and minus
    ``tight`` when one open edge is left (the additions in the reference's order, so bit for bit).
    The weights come as numbers: an array argument would cost reference counting on every call."""
    if new_size == target:
        value += points * target
    elif new_size > target or new_open == 0:
        value -= fail * target
    else:
        value += progress * (new_size - size)
        if new_open == 1:
            value -= tight
    return value


@inline_jit
def own_task_term(value: float, points: float, fail: float, new_task: float, new_size: int, new_open: int,
                  target: int) -> float:
    """``value`` plus the drawn task tile's own term: as :func:`open_task_term` for completion and
    failure, else ``new_task`` x (open edges kept, at most 4, minus half the tiles still missing)."""
    if new_size == target:
        value += points * target
    elif new_size > target or new_open == 0:
        value -= fail * target
    else:
        value += new_task * (min(new_open, 4) - (target - new_size) * 0.5)
    return value


@njit(cache=True)
def open_groups(board, flag, flagged, n_flagged: int, tasks_out, flags_out) -> tuple[int, int]:
    """Fill ``tasks_out`` with the open tasks (in task order) and ``flags_out`` with the flagged areas
    still open (in ``flagged`` order), one row each (columns ``G_*``); return both counts. These are
    the groups every placement of the step is valued against."""
    _, _, placed, uf, tasks, _, meta = board
    n_tasks = 0
    for k in range(meta[M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        root = uf_root(uf, tasks[k, 0])
        tasks_out[n_tasks, G_ROOT] = root
        tasks_out[n_tasks, G_TERR] = tasks[k, 1]
        tasks_out[n_tasks, G_TARGET] = tasks[k, 2]
        tasks_out[n_tasks, G_SIZE] = uf[1, root]
        tasks_out[n_tasks, G_OPEN] = uf[2, root]
        n_tasks += 1
    n_flags = 0
    for i in range(n_flagged):
        p = flagged[i]
        f = np.int64(flag[placed[p, 1]])
        root = uf_root(uf, p * 5 + f - 1)
        if uf[2, root] == 0:  # already closed: no placement changes it
            continue
        flags_out[n_flags, G_ROOT] = root
        flags_out[n_flags, G_TERR] = f
        flags_out[n_flags, G_SIZE] = uf[1, root]
        flags_out[n_flags, G_OPEN] = uf[2, root]
        n_flags += 1
    return n_tasks, n_flags


@inline_jit
def _neighbours(cells, uf, rot_edges, cell: int, nb_edge, nb_root) -> None:
    """For each direction: the terrain of the neighbour's edge facing ``cell`` (-1: no neighbour) and
    that edge's group root (-1 for meadow or no neighbour)."""
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt < 0:
            nb_edge[d] = -1
            nb_root[d] = -1
            continue
        b = np.int64(rot_edges[nt, cells[n, 1], (d + 3) % 6])
        nb_edge[d] = b
        nb_root[d] = uf_root(uf, cells[n, 2] * 5 + b - 1) if b > 0 else -1


@inline_jit
def _faced(nb_edge, nb_root, terr: int, root: int) -> int:
    """How many open ``terr`` edges of group ``root`` face the cell (any placement closes them)."""
    c = 0
    for d in range(6):
        if nb_edge[d] == terr and nb_root[d] == root:
            c += 1
    return c


@inline_jit
def joins(edges, nb_edge, nb_root, terr: int, root: int) -> bool:
    """Whether the tile's ``terr`` piece (edges ``edges``) meets group ``root`` through a ``terr`` edge."""
    for d in range(6):
        if edges[d] == terr and nb_edge[d] == terr and nb_root[d] == root:
            return True
    return False


@inline_jit
def _group_after(uf, edges, nb_edge, nb_root, terr: int, out) -> None:
    """:func:`envs.dorfromantik.kernels.group_after` from the cell's neighbour table: size and open
    edges of the tile's ``terr`` group once placed."""
    size = 1
    open_edges = 0
    joined = 0  # bit d: the group across direction d was joined (its root first met there)
    for d in range(6):
        if nb_edge[d] < 0:
            if edges[d] == terr:
                open_edges += 1
            continue
        if edges[d] != terr or nb_edge[d] != terr:
            continue
        if _met(nb_root, joined, nb_root[d]):
            open_edges -= 1
            continue
        size += uf[1, nb_root[d]]
        open_edges += uf[2, nb_root[d]] - 1
        joined |= 1 << d
    if joined:  # a joined group may also face the cell with an edge that meets another terrain
        for d in range(6):
            if nb_edge[d] < 0 or edges[d] == terr or nb_edge[d] != terr:
                continue
            if _met(nb_root, joined, nb_root[d]):
                open_edges -= 1
    out[0] = size
    out[1] = open_edges


@inline_jit
def _met(nb_root, joined: int, root: int) -> bool:
    """Whether ``root`` is the root of one of the directions in the bit set ``joined``."""
    for d in range(6):
        if joined >> d & 1 and nb_root[d] == root:
            return True
    return False


@inline_jit
def ensure_after(uf, edges, nb_edge, nb_root, terr: int, after, known) -> None:
    """``after[terr]`` = the tile's ``terr`` group once placed (:func:`_group_after`), computed at most once
    per rotation (``known`` is cleared for each)."""
    if not known[terr]:
        _group_after(uf, edges, nb_edge, nb_root, terr, after[terr])
        known[terr] = True


@njit(cache=True)
def new_scratch(max_tasks: int, max_flags: int):
    """The working arrays of :func:`cell_values`, allocated once per step: the neighbours' edge
    terrains and roots, open edges of each task and flag group facing the cell, the tile's groups
    after placing (per terrain, ``known`` when computed for the current rotation) and the terrains the
    tile shows."""
    return (np.empty(6, np.int64), np.empty(6, np.int64), np.empty(max_tasks, np.int64),
            np.empty(max_flags, np.int64), np.empty((6, 2), np.int64), np.zeros(6, np.bool_),
            np.zeros(6, np.bool_))


@njit(cache=True)
def step_groups(board, flag, flagged, n_flagged: int):
    """What every cell of one step is valued against: ``(open tasks, open flags)`` tables and their
    counts (:func:`open_groups`) and the cells' working arrays (:func:`new_scratch`)."""
    task_rows = np.empty((max(board.meta[M_TASKS], 1), 5), np.int64)
    flag_rows = np.empty((max(n_flagged, 1), 5), np.int64)
    counts = open_groups(board, flag, flagged, n_flagged, task_rows, flag_rows)
    return (task_rows, flag_rows), counts, new_scratch(task_rows.shape[0], flag_rows.shape[0])


@step_jit
def cell_values(board, rot_edges, task_type, flag, weights, groups, counts, cell: int, legal, values,
                scratch) -> None:
    """``values[rot]`` = the greedy value of the drawn tile at ``cell`` with ``rot`` for every
    ``legal[rot]`` (the others untouched). ``groups`` = (open tasks, open flags) and ``counts`` their
    numbers, from :func:`open_groups`; ``scratch`` from :func:`new_scratch`. Terms and their order
    are ``evaluate_placement``'s."""
    cells, _, _, uf, _, _, meta = board
    task_rows, flag_rows = groups
    n_tasks, n_flags = counts
    nb_edge, nb_root, task_faced, flag_faced, after, known, has = scratch
    tile = meta[M_DRAWN]
    _neighbours(cells, uf, rot_edges, cell, nb_edge, nb_root)
    has[:] = False  # the tile shows terrain t on some edge (the same in every rotation)
    for d in range(6):
        has[rot_edges[tile, 0, d]] = True
    for k in range(n_tasks):
        task_faced[k] = _faced(nb_edge, nb_root, task_rows[k, G_TERR], task_rows[k, G_ROOT])
    for i in range(n_flags):
        flag_faced[i] = _faced(nb_edge, nb_root, flag_rows[i, G_TERR], flag_rows[i, G_ROOT])
    own = np.int64(task_type[tile])
    own_flag = np.int64(flag[tile])
    for rot in range(6):
        if not legal[rot]:
            continue
        edges = rot_edges[tile, rot]
        known[:] = False
        value = 0.0
        for d in range(6):  # contacts
            if nb_edge[d] < 0:
                continue
            a = edges[d]
            b = nb_edge[d]
            if a == b and 1 <= a <= 3:
                value += weights[3]
            elif (1 <= a <= 3) or (1 <= b <= 3):
                value -= weights[4]
        for k in range(n_tasks):  # open tasks on the board
            terr = task_rows[k, G_TERR]
            target = task_rows[k, G_TARGET]
            root = task_rows[k, G_ROOT]
            size = task_rows[k, G_SIZE]
            if has[terr] and joins(edges, nb_edge, nb_root, terr, root):
                ensure_after(uf, edges, nb_edge, nb_root, terr, after, known)
                new_size = after[terr, 0]
                new_open = after[terr, 1]
            else:
                new_size = size
                new_open = task_rows[k, G_OPEN] - task_faced[k]
            value = open_task_term(value, weights[0], weights[1], weights[2], weights[5], size, new_size,
                                   new_open, target)
        if own > 0:  # the drawn tile's own task
            ensure_after(uf, edges, nb_edge, nb_root, own, after, known)
            value = own_task_term(value, weights[0], weights[1], weights[7], after[own, 0], after[own, 1],
                                  meta[M_MARKER])
        for i in range(n_flags):  # flags on the board whose area this placement closes
            f = flag_rows[i, G_TERR]
            if joins(edges, nb_edge, nb_root, f, flag_rows[i, G_ROOT]):
                ensure_after(uf, edges, nb_edge, nb_root, f, after, known)
                if after[f, 1] == 0:
                    value += weights[0] * after[f, 0]
            elif flag_rows[i, G_OPEN] - flag_faced[i] == 0:
                value += weights[0] * flag_rows[i, G_SIZE]
        if own_flag > 0:
            ensure_after(uf, edges, nb_edge, nb_root, own_flag, after, known)
            if after[own_flag, 1] == 0:
                value += weights[0] * after[own_flag, 0]
        for line in (RAIL, RIVER):  # longest rail and river
            if not has[line]:
                continue
            ensure_after(uf, edges, nb_edge, nb_root, line, after, known)
            best = meta[M_MAX_RAIL] if line == RAIL else meta[M_MAX_RIVER]
            if after[line, 0] > best:
                value += weights[0] * (after[line, 0] - best)
            value += weights[6] * (after[line, 0] - 1)
        values[rot] = value


@njit(cache=True)
def frontier_values(board, rot_edges, task_type, flag, weights, flagged, n_flagged: int, mask,
                    values) -> None:
    """``values[slot, rot]`` = the greedy value of every ``mask``-legal placement, -inf elsewhere
    (``flagged[:n_flagged]``: the placed flag tiles, from ``flagged_placements``)."""
    frontier, meta = board.frontier, board.meta
    groups, counts, scratch = step_groups(board, flag, flagged, n_flagged)
    for i in range(meta[M_FRONT]):
        any_legal = False
        for rot in range(6):
            values[i, rot] = -np.inf
            any_legal = any_legal or mask[i, rot]
        if any_legal:
            cell_values(board, rot_edges, task_type, flag, weights, groups, counts, frontier[i], mask[i],
                        values[i], scratch)

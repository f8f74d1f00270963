"""The columns of Dorfromantik's candidate view (:data:`agents.learned.dorfromantik.FEATURES` names them):
the greedy valuation's terms first, then descriptors of the position after the placement. The ``C_*``
constants are column indices; shared by :mod:`agents.learned.dorfromantik_kernels` (placement by
placement) and :mod:`agents.learned.dorfromantik_after` (by frontier cell)."""

from __future__ import annotations

from agents.greedy import dorfromantik_kernels as GK

#: greedy terms (one per ``GK.WEIGHT_NAMES`` entry) come first
N_GREEDY = len(GK.WEIGHT_NAMES)
C_LAND_LEFT = N_GREEDY
C_FRAC_LEFT = N_GREEDY + 1
C_TASKS_LEFT = N_GREEDY + 2
C_TASK_TILE = N_GREEDY + 3
C_NEIGHBOURS = N_GREEDY + 4
C_AREA_FREE = N_GREEDY + 5
C_LINE_FREE = N_GREEDY + 6
C_MEADOW_FREE = N_GREEDY + 7
C_FRONTIER = N_GREEDY + 8
C_NEW_FRONTIER = N_GREEDY + 9
C_GROUP_OPEN = N_GREEDY + 10
C_LARGEST_AREA = N_GREEDY + 11
C_AREAS_CLOSED = N_GREEDY + 12
C_FLAG_OPEN = N_GREEDY + 13
C_RAIL_LEN = N_GREEDY + 14
C_RIVER_LEN = N_GREEDY + 15
C_OPEN_TASKS = N_GREEDY + 16
C_MISSING = N_GREEDY + 17
C_TASK_OPEN_EDGES = N_GREEDY + 18
C_TIGHT_TASKS = N_GREEDY + 19
C_COMPLETED = N_GREEDY + 20
C_FAILED = N_GREEDY + 21
C_PROGRESS_X_LEFT = N_GREEDY + 22
C_MATCH_X_LEFT = N_GREEDY + 23
C_MISMATCH_X_LEFT = N_GREEDY + 24
C_MISSING_X_LEFT = N_GREEDY + 25
C_AREA_FREE_X_LEFT = N_GREEDY + 26
C_NEW_TASK_X_LEFT = N_GREEDY + 27
N_COLUMNS = N_GREEDY + 28
#: a phase starts when at most this many landscape tiles are left in the stack (middle, late)
PHASE_LAND_LEFT = (29, 14)

# indices of the greedy terms used by the interactions (GK.WEIGHT_NAMES order)
PROGRESS = GK.WEIGHT_NAMES.index("progress")
MATCH = GK.WEIGHT_NAMES.index("match")
MISMATCH = GK.WEIGHT_NAMES.index("mismatch")
NEW_TASK = GK.WEIGHT_NAMES.index("new_task")

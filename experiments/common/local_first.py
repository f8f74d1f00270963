"""Play here first, start Ray only when it pays: the rule ``simulate`` and ``eval`` share.

Starting a local Ray costs seconds before the first game (``ray.init`` about 3 s on an idle
2-core machine, then each worker imports the project and loads the compiled kernels from the numba
cache, about 2 s more; measured in docs/benchmarks.md), while most jobs people run to look at
something take a second or two of play. So a local command with several workers plays its first
units (chunks or games) in this process, times them, and starts Ray for the rest only when the
projected time of the rest in parallel, start-up included, beats playing on here. Results never
depend on where a unit was played: every game depends only on its seed and lineup.

A cluster (``--address``) is always used as asked: whoever names one wants the work there. Without
Ray installed (the ``sim`` extra) a local run simply plays everything here.
"""

from __future__ import annotations

import math
import os

from envs.core.install import has_module

#: the fixed cost of a local Ray before its first result arrives, seconds (measured, rounded up)
RAY_START_SECONDS = 6.0


def ray_pays_off(seconds_per_unit: float, units_left: int, workers: int,
                 start_seconds: float = RAY_START_SECONDS, warm_up_seconds: float = 0.0) -> bool:
    """Whether ``units_left`` units at ``seconds_per_unit`` each finish sooner on ``workers``
    Ray workers (after ``start_seconds`` of start-up, and ``warm_up_seconds`` that each worker
    spends loading before its first unit) than one after another here."""
    if workers < 2 or units_left < 2:
        return False
    here = seconds_per_unit * units_left
    on_ray = start_seconds + warm_up_seconds + seconds_per_unit * math.ceil(units_left / workers)
    return on_ray < here


class HereFirst:
    """Times the units played here and says when the rest should move to Ray.

    The first unit carries one-off loading (compiled kernels from the cache, agent set-up) that
    a Ray worker would pay again, so the steady cost per unit is measured on the units after it,
    and no move is proposed before two units were timed."""

    def __init__(self, workers: int):
        self.workers = workers
        self.count = 0
        self.first = 0.0
        self.rest = 0.0

    def add(self, seconds: float) -> None:
        """Record one unit played here."""
        if self.count == 0:
            self.first = seconds
        else:
            self.rest += seconds
        self.count += 1

    @property
    def seconds_per_unit(self) -> float:
        """The steady cost of one unit (the first unit's cost while only one was timed)."""
        return self.rest / (self.count - 1) if self.count > 1 else self.first

    def move_to_ray(self, units_left: int) -> bool:
        """Whether Ray (installed) would finish ``units_left`` more units sooner than this process."""
        if self.count < 2:
            return False
        steady = self.seconds_per_unit
        return ray_pays_off(steady, units_left, self.workers, warm_up_seconds=max(0.0, self.first - steady)) \
            and has_module("ray")


def local_workers(workers: int | None) -> int:
    """The number of parallel workers a local run would get: ``workers``, or every CPU."""
    return workers if workers is not None else (os.cpu_count() or 1)

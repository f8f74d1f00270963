"""The play-here-first rule: Ray starts only when the rest of a job would finish sooner there."""

from __future__ import annotations

import json
import subprocess
import sys

from experiments.common.local_first import RAY_START_SECONDS, HereFirst, ray_pays_off
from tests.paths import REPO_ROOT


def test_short_jobs_stay_here_and_long_ones_go_to_ray():
    assert not ray_pays_off(0.3, 1, workers=2)  # one chunk left: nothing to share
    assert not ray_pays_off(0.3, 100, workers=1)  # one worker: Ray only adds its start-up
    assert not ray_pays_off(0.3, 10, workers=2)  # 3 s here against 6 + 1.5 s there
    assert ray_pays_off(2.0, 10, workers=2)  # 20 s here against 6 + 10 s there
    assert ray_pays_off(1.0, 8, workers=8, start_seconds=RAY_START_SECONDS)  # 8 s against 7 s


def test_the_break_even_point_counts_the_start_up_and_whole_rounds():
    # 2 workers, 1 s per unit: n units cost n here and 6 + ceil(n / 2) there
    assert [n for n in range(2, 20) if ray_pays_off(1.0, n, workers=2)][0] == 14
    assert not ray_pays_off(1.0, 13, workers=2)  # 13 here against 6 + 7 = 13 there: a tie stays here


def test_the_first_unit_loading_is_not_taken_for_the_steady_cost():
    timer = HereFirst(workers=2)
    timer.add(0.4)  # kernels loaded from the cache, then one quick game
    assert not timer.move_to_ray(39)  # one timed unit says nothing yet
    timer.add(0.05)
    assert timer.seconds_per_unit == 0.05
    assert not timer.move_to_ray(39)  # 2 s here, against 6 s of start-up there
    slow = HereFirst(workers=2)
    slow.add(3.0)
    slow.add(2.0)
    assert slow.seconds_per_unit == 2.0 and slow.move_to_ray(10)  # 20 s here, 6 + 1 + 10 there
    assert not slow.move_to_ray(7)  # 14 s here, 6 + 1 + 8 there


LOCAL_RUN = """
import json, sys
from experiments.sim.simulate import SimulationSpec, run_simulation
spec = SimulationSpec(game="cartographers", agents=["random"], games=40, seed=0, chunk=10, options={})
result = run_simulation(spec, sys.argv[1], progress=False)
print(json.dumps({"new": result.chunks_new, "ray_imported": "ray" in sys.modules}))
"""


def test_a_short_local_simulation_never_imports_ray(tmp_path):
    done = subprocess.run([sys.executable, "-c", LOCAL_RUN, str(tmp_path / "out")], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"new": 4, "ray_imported": False}
    assert "simulate: playing in this process" in done.stderr

"""Learning agents: the layout-built network, its policy files and the ``ppo:`` agent.

Nothing here imports Ray except :mod:`agents.ppo.rl_module` (the RLlib wrapper used by
training), so a trained network plays anywhere with torch alone.
"""

from envs.core.install import require

require("torch", extra="rl")  # one line naming the extra instead of a ModuleNotFoundError deep inside

# meeplelab: every target that needs the environment depends on `setup` first.
PY      ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.stamp-installed
export PYTHONUNBUFFERED := 1
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# the strongest MCTS setting that keeps the demo near a minute (greedy prior and rollouts, paired futures)
comma := ,
DEMO_MODEL := models/cartographers_solo_patterns/model.json
DEMO_MCTS := mcts:simulations=8,prior=greedy,rollout=greedy,widening=1/0.4,paired=true

.PHONY: setup demo test test-all test-install playthroughs bench lint clean clean-cache browser train-demo tensorboard

setup: $(STAMP)

# torch first, from the pinned CPU build on disk, so nothing pulls a CUDA build; then the project
# (editable) with every extra: dev (tests, lint), rl (torch, RLlib, TensorBoard), sim (Ray).
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,rl,sim]'
	$(BIN)/python -c "import torch, sys; sys.exit('CUDA torch installed' if torch.version.cuda else 0)"
	@touch $(STAMP)

# the best committed learned model (a pattern model, as make train-demo fits) joins the demo when present
DEMO_LEARNED := $(if $(wildcard $(DEMO_MODEL)),$(comma)learned:models/cartographers_solo_patterns$(comma)label=learned,)

demo: setup
	$(BIN)/meeplelab solo-eval --agents random,greedy,$(DEMO_MCTS)$(DEMO_LEARNED) --games 60 --seed 0 --out runs/demo --show-map

# the learned candidate model of solo Cartographers (linear weights and a pattern table) fitted to
# search labels from greedy's weights (about 11 minutes on 2 cores), then a paired evaluation on 200
# seeds of the held-out test suite against the best greedy preset; the model lands in
# runs/train-demo/model.json (learned:runs/train-demo)
train-demo: setup
	rm -rf runs/train-demo
	$(BIN)/meeplelab train cartographers --algo distill --config configs/distill/cartographers_solo_demo.yaml \
		--out runs/train-demo
	$(BIN)/meeplelab solo-eval --agents random,greedy:preset=progress,learned:runs/train-demo,label=learned \
		--seed 1000000 --games 200 --out runs/train-demo/eval-test

tensorboard: setup
	$(BIN)/tensorboard --logdir runs --host 127.0.0.1

# the fast suite runs on every core (pytest-xdist; at most 4 workers, each compiling the numba kernels
# its tests meet, about 1 GB of memory each): 1.5x faster on 2 cores. TEST_JOBS=0 runs it in one process.
TEST_JOBS ?= auto
test: setup
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --maxprocesses 4

test-all: setup browser
	$(BIN)/python -m pytest -m "slow or not slow"

# the wheel installed (not editable) in a fresh venv, run from outside the checkout (tests/packaging)
test-install: setup
	$(BIN)/python -m pytest -q -m slow tests/packaging

# rewrite the readable playthroughs of tests/playthroughs after an intended change to a game or agent
playthroughs: setup
	$(BIN)/python -m tests.playthroughs.generate

# headless Chromium from Debian's packages (never a downloaded browser build), for the replay
# viewer's browser tests (tests/experiments/replay/test_viewer.py)
browser:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium; }

bench: setup
	$(BIN)/meeplelab bench all

lint: setup
	$(BIN)/ruff check envs agents experiments tests

clean: clean-cache
	rm -rf $(VENV) .ray_home runs .pytest_cache

# numba's compiled code, one folder per version of the sources (envs/core/numba_cache.py)
clean-cache:
	rm -rf .numba_cache

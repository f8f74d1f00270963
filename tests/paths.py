"""Where the tests find the repository's files, whatever the working directory."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
GOLDEN = REPO_ROOT / "tests" / "golden"
CONFIGS = REPO_ROOT / "configs"

"""Errors every game and tool raises, so callers can catch one family."""


class MeeplelabError(Exception):
    """Base class of every error this project raises on purpose."""


class IllegalActionError(MeeplelabError, ValueError):
    """An action that the rules forbid in the current state.

    The message names the action (decoded) and the reason.
    """

    def __init__(self, action: int, reason: str, description: str | None = None):
        self.action = int(action)
        self.reason = reason
        what = f"action {self.action}" + (f" ({description})" if description else "")
        super().__init__(f"illegal {what}: {reason}")


class ConfigError(MeeplelabError, ValueError):
    """A bad option, unknown name, malformed data file or config."""


class DataFileError(ConfigError):
    """A component data file (seeds/*.yaml) that is missing or malformed."""


class MissingExtraError(MeeplelabError, ImportError):
    """A command needs an optional dependency that is not installed (PyTorch, Ray...); the message
    names the extra that brings it, e.g. ``pip install 'meeplelab[sim]'`` (envs/core/install.py)."""


class DiskFullError(MeeplelabError, OSError):
    """No space left (or the quota is spent) while writing results; the message names the file and
    says that what was written before is intact (experiments/common/writes.py)."""

"""Module attributes built on first use (PEP 562), so that importing a module stays cheap: the
RLlib multi-agent env classes, which import Ray, are defined only when someone asks for them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def lazy_attributes(module_globals: dict[str, Any], builders: dict[str, Callable[[], Any]]):
    """A module ``__getattr__`` that builds each name of ``builders`` on first use and keeps it."""

    def __getattr__(name: str) -> Any:
        if name in builders:
            value = module_globals[name] = builders[name]()
            return value
        raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {name!r}")

    return __getattr__

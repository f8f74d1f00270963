"""torch on one CPU thread while an agent decides.

A decision is a forward pass over one position (or a few): more threads gain nothing at that size,
and on a busy machine (Ray workers, a training run) several threads per process run one forward
pass many times slower. The process's thread count is restored afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def one_torch_thread(device: str = "cpu") -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)`` (CPU only), then restore the count."""
    threads = torch.get_num_threads()
    if device != "cpu" or threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)

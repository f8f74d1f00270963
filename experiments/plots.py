"""PNG plots for evaluation reports (matplotlib, Agg backend: no display needed).

Each function takes plain data, writes one PNG and returns its path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _bins(samples: Sequence[np.ndarray], max_bins: int = 40) -> np.ndarray:
    low = min(float(np.min(s)) for s in samples)
    high = max(float(np.max(s)) for s in samples)
    if high - low < 1e-9:
        return np.array([low - 0.5, high + 0.5])
    width = max(1.0, np.ceil((high - low) / max_bins))
    return np.arange(np.floor(low), high + width + 1e-9, width) - 0.5 * (width == 1.0)


def score_histograms(scores_by_agent: Mapping[str, Sequence[float]], path: Path,
                     title: str = "Final scores", xlabel: str = "score") -> Path:
    """One histogram panel per agent on a shared x axis, with the mean marked."""
    names = list(scores_by_agent)
    samples = [np.asarray(scores_by_agent[n], dtype=float) for n in names]
    bins = _bins(samples)
    fig, axes = plt.subplots(len(names), 1, figsize=(7, 1.9 * len(names) + 0.8), sharex=True,
                             squeeze=False)
    for ax, name, sample in zip(axes[:, 0], names, samples, strict=True):
        ax.hist(sample, bins=bins, color="#4C72B0", alpha=0.85)
        ax.axvline(sample.mean(), color="#C44E52", lw=1.5, label=f"mean {sample.mean():.1f}")
        ax.set_ylabel("games")
        ax.set_title(f"{name} (n={sample.size})", fontsize=9, loc="left")
        ax.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def paired_difference_plot(differences: Mapping[str, Sequence[float]],
                           intervals: Mapping[str, tuple[float, float]], path: Path,
                           title: str = "Paired differences (same seeds)") -> Path:
    """Per pair "A - B": every seed's difference as a jittered dot, the mean and its 95% CI."""
    names = list(differences)
    fig, ax = plt.subplots(figsize=(7, 0.7 * len(names) + 1.6))
    rng = np.random.default_rng(0)  # fixed jitter: the same data draw the same picture
    for y, name in enumerate(names):
        diff = np.asarray(differences[name], dtype=float)
        ax.scatter(diff, y + rng.uniform(-0.18, 0.18, diff.size), s=6, alpha=0.35, color="#4C72B0")
        low, high = intervals[name]
        ax.errorbar([diff.mean()], [y], xerr=[[diff.mean() - low], [high - diff.mean()]], fmt="D",
                    color="#C44E52", capsize=5, ms=6, label="mean, 95% CI" if y == 0 else None)
    ax.axvline(0.0, color="black", lw=1)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("score difference per seed")
    ax.set_title(title)
    if names:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return _save(fig, path)


def evaluation_points_plot(evaluations_by_agent: Mapping[str, Sequence[float]], path: Path,
                           title_thresholds: Sequence[tuple[float, str]] = (),
                           title: str = "Solo evaluation points (score - thresholds)") -> Path:
    """Box plot of evaluation points per agent with the title bands drawn behind."""
    names = list(evaluations_by_agent)
    samples = [np.asarray(evaluations_by_agent[n], dtype=float) for n in names]
    fig, ax = plt.subplots(figsize=(7.5, 0.8 * len(names) + 3.6))
    ax.boxplot(samples[::-1], vert=False, showmeans=True, widths=0.5)  # first agent on top
    ax.set_yticks(range(1, len(names) + 1), names[::-1])
    low_x, high_x = ax.get_xlim()
    for low, label in title_thresholds:
        if low_x <= low <= high_x:
            ax.axvline(low, color="grey", lw=0.6, ls=":")
            ax.text(low, 1.01, label, rotation=60, fontsize=6.5, va="bottom", ha="left", color="dimgrey",
                    transform=ax.get_xaxis_transform())
    ax.axvline(0.0, color="#C44E52", lw=1.2)
    ax.set_xlabel("evaluation points (>= 0 means the solo target was met)")
    ax.set_title(title, pad=88)
    ax.set_ylim(0.4, len(names) + 0.6)
    fig.tight_layout()
    return _save(fig, path)


def _save(fig: plt.Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

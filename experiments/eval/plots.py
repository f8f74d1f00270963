"""PNG plots for evaluation reports (matplotlib, Agg backend: no display needed).

Each ``*_figure`` function takes plain data and returns a figure; the public functions write it as
a PNG and return the path. Figures use matplotlib's constrained layout, so titles, tick labels and
legends are fitted inside the figure; agent labels longer than :data:`WRAP` characters are wrapped.
Paired differences are drawn as given ("A - B", the later agent minus the baseline, as in the
tables).
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from experiments.common.writes import write_atomic  # noqa: E402

WRAP = 28
BLUE, RED, GREEN, ORANGE = "#4C72B0", "#C44E52", "#2CA02C", "#FF7F0E"


def wrap_label(label: str, width: int = WRAP) -> str:
    """``label`` broken into lines of at most ``width`` characters (long specs stay legible)."""
    return "\n".join(textwrap.wrap(label, width, break_long_words=True, break_on_hyphens=False)) or label


def _bins(samples: Sequence[np.ndarray], max_bins: int = 40) -> np.ndarray:
    low = min(float(np.min(s)) for s in samples)
    high = max(float(np.max(s)) for s in samples)
    if high - low < 1e-9:
        return np.array([low - 0.5, high + 0.5])
    width = max(1.0, np.ceil((high - low) / max_bins))
    return np.arange(np.floor(low), high + width + 1e-9, width) - 0.5 * (width == 1.0)


def score_histograms_figure(scores_by_agent: Mapping[str, Sequence[float]], title: str = "Final scores",
                            xlabel: str = "score") -> plt.Figure:
    """One histogram panel per agent on a shared x axis, with the mean marked."""
    names = list(scores_by_agent)
    samples = [np.asarray(scores_by_agent[n], dtype=float) for n in names]
    bins = _bins(samples)
    fig, axes = plt.subplots(len(names), 1, figsize=(7, 1.9 * len(names) + 0.9), sharex=True,
                             squeeze=False, layout="constrained")
    for ax, name, sample in zip(axes[:, 0], names, samples, strict=True):
        ax.hist(sample, bins=bins, color=BLUE, alpha=0.85)
        ax.axvline(sample.mean(), color=RED, lw=1.5, label=f"mean {sample.mean():.1f}")
        ax.set_ylabel("games")
        ax.set_title(f"{wrap_label(name, 60)} (n={sample.size})", fontsize=9, loc="left")
        ax.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title)
    return fig


def paired_difference_figure(differences: Mapping[str, Sequence[float]],
                             intervals: Mapping[str, tuple[float, float]],
                             title: str = "Paired differences (same seeds)",
                             xlabel: str = "score difference per seed") -> plt.Figure:
    """Per pair "A - B" (top to bottom in the given order): every seed's difference as a jittered
    dot, the mean with its 95% CI, and the mean written beside it."""
    names = list(differences)
    fig, ax = plt.subplots(figsize=(7.5, 0.8 * len(names) + 2.0), layout="constrained")
    rng = np.random.default_rng(0)  # fixed jitter: the same data draw the same picture
    for row, name in enumerate(names):
        y = len(names) - 1 - row  # first pair on top, as in the tables
        diff = np.asarray(differences[name], dtype=float)
        mean = float(diff.mean())
        low, high = intervals[name]
        ax.scatter(diff, y + rng.uniform(-0.18, 0.18, diff.size), s=6, alpha=0.35, color=BLUE)
        ax.errorbar([mean], [y], xerr=[[mean - low], [high - mean]], fmt="D", color=RED, capsize=5, ms=6)
        ax.annotate(f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]", (mean, y), xytext=(0, 9),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8, color=RED,
                    bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    ax.axvline(0.0, color="black", lw=1)
    ax.set_yticks(range(len(names)), [wrap_label(n) for n in names[::-1]])
    ax.set_ylim(-0.6, len(names) - 0.3)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    handles = [Line2D([], [], color=BLUE, marker="o", ls="", alpha=0.5, label="one seed"),
               Line2D([], [], color=RED, marker="D", label="mean, 95% CI")]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return fig


def evaluation_points_figure(evaluations_by_agent: Mapping[str, Sequence[float]],
                             title_thresholds: Sequence[tuple[float, str]] = (),
                             title: str = "Solo evaluation points (score - thresholds)") -> plt.Figure:
    """Box plot of evaluation points per agent (first agent on top); the solo titles' thresholds
    as dotted lines, named vertically along the top edge."""
    names = list(evaluations_by_agent)
    samples = [np.asarray(evaluations_by_agent[n], dtype=float) for n in names]
    fig, ax = plt.subplots(figsize=(8, 0.8 * len(names) + 4.0), layout="constrained")
    ax.boxplot(samples[::-1], orientation="horizontal", showmeans=True, widths=0.5,
               meanprops={"marker": "^", "markerfacecolor": GREEN, "markeredgecolor": GREEN},
               medianprops={"color": ORANGE})
    ax.set_yticks(range(1, len(names) + 1), [wrap_label(n) for n in names[::-1]])
    low_x, high_x = ax.get_xlim()
    top = ax.secondary_xaxis("top")
    shown = [(low, label) for low, label in title_thresholds if low_x <= low <= high_x]
    for low, _ in shown:
        ax.axvline(low, color="grey", lw=0.6, ls=":")
    top.set_xticks([low for low, _ in shown], [label for _, label in shown], rotation=90, fontsize=7.5,
                   color="dimgrey")
    top.tick_params(length=2, pad=1)
    ax.axvline(0.0, color=RED, lw=1.2)
    ax.set_xlabel("evaluation points (>= 0: the solo target was met)")
    ax.set_title(title)
    ax.set_ylim(0.4, len(names) + 0.6)
    handles = [Line2D([], [], color=GREEN, marker="^", ls="", label="mean"),
               Line2D([], [], color=ORANGE, label="median"),
               Line2D([], [], color=RED, label="target (0)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    return fig


def score_histograms(scores_by_agent: Mapping[str, Sequence[float]], path: Path,
                     title: str = "Final scores", xlabel: str = "score") -> Path:
    """:func:`score_histograms_figure` written to ``path``."""
    return _save(score_histograms_figure(scores_by_agent, title, xlabel), path)


def paired_difference_plot(differences: Mapping[str, Sequence[float]],
                           intervals: Mapping[str, tuple[float, float]], path: Path,
                           title: str = "Paired differences (same seeds)",
                           xlabel: str = "score difference per seed") -> Path:
    """:func:`paired_difference_figure` written to ``path``."""
    return _save(paired_difference_figure(differences, intervals, title, xlabel), path)


def evaluation_points_plot(evaluations_by_agent: Mapping[str, Sequence[float]], path: Path,
                           title_thresholds: Sequence[tuple[float, str]] = (),
                           title: str = "Solo evaluation points (score - thresholds)") -> Path:
    """:func:`evaluation_points_figure` written to ``path``."""
    return _save(evaluation_points_figure(evaluations_by_agent, title_thresholds, title), path)


def _save(fig: plt.Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return write_atomic(path, buffer.getvalue())

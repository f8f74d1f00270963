"""Report figures a person can read: every text inside the figure, even with long agent labels
and many agents; solo title names that do not overlap; pairs in the order of the tables."""

from __future__ import annotations

import matplotlib.text
import numpy as np
import pytest

from experiments.eval import plots

LONG = "mcts:simulations=96,prior=greedy,rollout=greedy,widening=1/0.4,paired=true,c=0.7,max_depth=30"
NAMES = ["random", "greedy", "mcts(8, greedy)", LONG, "a-label-with-no-spaces-at-all-" * 3]
TITLES = [(-30.0, "Oblivious Inkdrinker"), (-20.0, "Dimwitted Doodler"), (-10.0, "Inept Assistant"),
          (-5.0, "Amateur Assessor"), (0.0, "Apprentice Surveyor"), (10.0, "Journeyman Topographer"),
          (20.0, "Master Mapsmith"), (30.0, "Legendary Cartographer")]


def _samples(n_agents: int, spread: float = 60.0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else f" #{i}"): rng.normal(-40 + 20 * i, spread, 60)
            for i in range(n_agents)}


def _drawn_texts(fig) -> list[matplotlib.text.Text]:
    fig.canvas.draw()
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


def _outside(fig) -> list[str]:
    """Texts drawn (partly) outside the figure. Tick labels are judged through the figure's tight
    box, which counts only the ticks in view (stale labels of hidden ticks are never drawn)."""
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    ticks = {id(t) for ax in fig.axes for t in (*ax.get_xticklabels(which="both"),
                                                 *ax.get_yticklabels(which="both"))}
    bad = []
    for text in _drawn_texts(fig):
        ext = text.get_window_extent(renderer)
        if id(text) not in ticks and (ext.x0 < box.x0 - 1 or ext.y0 < box.y0 - 1 or ext.x1 > box.x1 + 1
                                      or ext.y1 > box.y1 + 1):
            bad.append(text.get_text())
    tight = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    if tight.x0 < box.x0 - 1 or tight.y0 < box.y0 - 1 or tight.x1 > box.x1 + 1 or tight.y1 > box.y1 + 1:
        bad.append(f"something drawn at {tight.bounds}, figure {box.bounds}")
    return bad


def _figures(n_agents: int):
    samples = _samples(n_agents)
    names = list(samples)
    diffs = {f"{b} - {a}": samples[b] - samples[a] for a, b in zip(names, names[1:], strict=False)}
    cis = {k: (float(v.mean() - 3), float(v.mean() + 3)) for k, v in diffs.items()}
    return [plots.score_histograms_figure(samples, title="final scores " * 4),
            plots.paired_difference_figure(diffs, cis, title="Paired differences in evaluation points"),
            plots.evaluation_points_figure(samples, TITLES)]


@pytest.mark.parametrize("n_agents", [1, 3, 6])
def test_every_text_lies_inside_the_figure(n_agents):
    for fig in _figures(n_agents):
        try:
            assert _outside(fig) == []
        finally:
            plots.plt.close(fig)


def test_solo_title_names_do_not_overlap_each_other():
    fig = plots.evaluation_points_figure(_samples(3, spread=25.0), TITLES)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        names = {label for _, label in TITLES}
        boxes = [t.get_window_extent(renderer) for t in _drawn_texts(fig) if t.get_text() in names]
        assert len(boxes) >= 6  # the thresholds inside the data range are named
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.overlaps(b)
    finally:
        plots.plt.close(fig)


def test_long_labels_are_wrapped_not_squeezing_the_axes():
    fig = plots.evaluation_points_figure({"greedy": np.arange(10.0), LONG: np.arange(10.0)}, TITLES)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        assert ax.get_position().width > 0.45  # the box plot keeps most of the width
        assert LONG not in [t.get_text() for t in ax.get_yticklabels()]  # shown wrapped
    finally:
        plots.plt.close(fig)


def test_paired_differences_read_top_down_in_the_order_given():
    diffs = {"greedy - random": np.full(5, 70.0), "mcts(8, greedy) - greedy": np.full(5, 5.0)}
    fig = plots.paired_difference_figure(diffs, {k: (v[0] - 1, v[0] + 1) for k, v in diffs.items()})
    try:
        fig.canvas.draw()
        labels = sorted(fig.axes[0].get_yticklabels(), key=lambda t: -t.get_position()[1])
        assert [t.get_text() for t in labels] == list(diffs)
    finally:
        plots.plt.close(fig)

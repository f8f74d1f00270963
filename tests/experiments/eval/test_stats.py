"""experiments.eval.stats against scipy and hand-checked values on known data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from experiments.eval import stats

DATA = np.array([12.0, 15.0, 9.0, 20.0, 17.0, 11.0, 14.0, 18.0, 13.0, 16.0])


def test_summary_matches_numpy_and_hand_values():
    s = stats.summarize(DATA)
    assert s.n == 10 and s.mean == pytest.approx(14.5)
    assert s.sd == pytest.approx(np.std(DATA, ddof=1))
    assert s.se == pytest.approx(s.sd / math.sqrt(10))
    assert (s.min, s.max) == (9.0, 20.0)
    assert s.p50 == pytest.approx(14.5)
    assert s.p10 == pytest.approx(np.percentile(DATA, 10)) and s.p90 == pytest.approx(np.percentile(DATA, 90))


def test_t_interval_matches_scipy():
    low, high = stats.t_interval(DATA)
    ref = sps.t.interval(0.95, df=9, loc=DATA.mean(), scale=sps.sem(DATA))
    assert (low, high) == pytest.approx(ref, rel=1e-12)
    # hand value: t_{0.975, 9} = 2.262157
    assert high - DATA.mean() == pytest.approx(2.262157 * np.std(DATA, ddof=1) / math.sqrt(10), rel=1e-6)


def test_bootstrap_interval_is_seeded_and_close_to_scipy_percentile():
    rng = np.random.default_rng(1)
    sample = rng.normal(50, 10, 400)
    ours = stats.bootstrap_interval(sample, resamples=4000, seed=3)
    assert ours == stats.bootstrap_interval(sample, resamples=4000, seed=3)
    assert ours != stats.bootstrap_interval(sample, resamples=4000, seed=4)
    ref = sps.bootstrap((sample,), np.mean, n_resamples=4000, method="percentile", random_state=7)
    se = sample.std(ddof=1) / 20
    assert ours[0] == pytest.approx(ref.confidence_interval.low, abs=0.15 * se)
    assert ours[1] == pytest.approx(ref.confidence_interval.high, abs=0.15 * se)


def test_paired_comparison_matches_scipy_ttest_rel_and_wilcoxon():
    rng = np.random.default_rng(2)
    a = rng.normal(10, 3, 60).round()
    b = a - rng.normal(0.8, 2, 60).round()
    cmp = stats.paired_comparison(a, b, "A", "B")
    t_ref = sps.ttest_rel(a, b)
    w_ref = sps.wilcoxon(a - b, zero_method="wilcox")
    assert cmp.mean_difference == pytest.approx(np.mean(a - b))
    assert cmp.t_statistic == pytest.approx(t_ref.statistic, rel=1e-10)
    assert cmp.t_pvalue == pytest.approx(t_ref.pvalue, rel=1e-8)
    assert cmp.wilcoxon_statistic == pytest.approx(w_ref.statistic)
    assert cmp.wilcoxon_pvalue == pytest.approx(w_ref.pvalue, rel=1e-10)
    assert cmp.ci95 == pytest.approx(stats.t_interval(a - b))


def test_paired_comparison_known_textbook_case():
    # differences 1..5: mean 3, sd sqrt(2.5), t = 3 / (sqrt(2.5)/sqrt(5)) = 4.2426, p = 0.01324 (df 4)
    cmp = stats.paired_comparison([2, 4, 6, 8, 10], [1, 2, 3, 4, 5])
    assert cmp.t_statistic == pytest.approx(4.242640687)
    assert cmp.t_pvalue == pytest.approx(0.013236, abs=1e-5)
    # all positive, n = 5: exact two-sided Wilcoxon p = 2 / 2**5 = 0.0625
    assert cmp.wilcoxon_pvalue == pytest.approx(0.0625)


def test_identical_agents_give_no_difference():
    cmp = stats.paired_comparison([3, 4, 5], [3, 4, 5])
    assert cmp.mean_difference == 0 and cmp.t_pvalue == 1.0 and cmp.wilcoxon_pvalue == 1.0


def test_paired_lengths_must_match():
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_comparison([1, 2, 3], [1, 2])


def test_wilson_interval_matches_scipy_and_hand_value():
    for k, n in [(0, 10), (3, 10), (55, 100), (100, 100)]:
        ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert stats.wilson_interval(k, n) == pytest.approx((ref.low, ref.high), abs=1e-9)
    # hand value: 5 of 10 -> 0.5 +- 0.2775 (z = 1.96)
    assert stats.wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-3)


def _synthetic_wins(theta: np.ndarray, games_per_pair: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = theta.size
    wins = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            w = rng.binomial(games_per_pair, p)
            wins[i, j], wins[j, i] = w, games_per_pair - w
    return wins


def test_bradley_terry_recovers_known_strengths():
    theta = np.array([-1.0, -0.3, 0.2, 1.1])
    fit = stats.bradley_terry(_synthetic_wins(theta, 4000, seed=5))
    assert fit.prior_games == 0.0
    assert fit.log_strengths == pytest.approx(theta - theta.mean(), abs=0.06)
    assert np.argsort(fit.elo).tolist() == [0, 1, 2, 3]


def test_bradley_terry_is_the_maximum_of_the_likelihood():
    wins = _synthetic_wins(np.array([0.0, 0.5, -0.7, 0.3, 1.0]), 30, seed=9)
    fit = stats.bradley_terry(wins)

    def negative_ll(free: np.ndarray) -> float:
        return -stats.bradley_terry_log_likelihood(np.concatenate([[0.0], free]), wins)

    ref = optimize.minimize(negative_ll, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    ref_theta = np.concatenate([[0.0], ref.x])
    assert fit.log_strengths == pytest.approx(ref_theta - ref_theta.mean(), abs=1e-4)
    assert stats.bradley_terry_log_likelihood(fit.log_strengths, wins) >= -ref.fun - 1e-8


def test_bradley_terry_two_players_closed_form_and_elo_scale():
    # 30 wins to 10: odds 3, so theta gap = ln 3 and Elo gap = 400 log10(3) = 190.85
    fit = stats.bradley_terry([[0, 30], [10, 0]])
    assert fit.log_strengths[0] - fit.log_strengths[1] == pytest.approx(math.log(3), abs=1e-8)
    assert fit.elo[0] - fit.elo[1] == pytest.approx(400 * math.log10(3), abs=1e-5)
    assert fit.elo.mean() == pytest.approx(1500.0)


def test_bradley_terry_without_finite_mle_is_regularised():
    wins = np.array([[0, 5], [0, 0]])  # player 1 never won: the plain MLE is infinite
    assert not stats.mle_exists(wins)
    fit = stats.bradley_terry(wins)
    assert fit.prior_games == 1.0 and np.all(np.isfinite(fit.elo)) and fit.elo[0] > fit.elo[1]


def test_pairwise_wins_from_multiplayer_scores():
    wins = stats.pairwise_wins_from_scores([[10, 8, 10], [5, 9, 1]], [["a", "b", "c"], ["c", "a", "b"]],
                                           ["a", "b", "c"])
    # game 1: a>b, a=c (half each), c>b; game 2: c<a, c>b, a>b
    expected = np.array([[0, 2, 1.5], [0, 0, 0], [0.5, 2, 0]])
    assert wins == pytest.approx(expected)


def test_bradley_terry_bootstrap_brackets_the_fit_and_is_seeded():
    theta = np.array([-0.5, 0.0, 0.6])
    groups = [_synthetic_wins(theta, 2, seed=s) for s in range(150)]
    fit = stats.bradley_terry(np.sum(groups, axis=0))
    low, high = stats.bradley_terry_bootstrap(groups, resamples=200, seed=1)
    assert np.all(low < fit.elo) and np.all(fit.elo < high)
    assert np.all(high - low < 200)
    again = stats.bradley_terry_bootstrap(groups, resamples=200, seed=1)
    assert np.array_equal(low, again[0]) and np.array_equal(high, again[1])

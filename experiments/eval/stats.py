"""Statistics for agent evaluation: pure functions over numpy arrays, no I/O.

- :func:`summarize`: mean, SD, SE, 95% t and bootstrap confidence intervals, percentiles.
- :func:`t_interval`, :func:`bootstrap_interval` (seeded, so reports are reproducible).
- :func:`paired_comparison`: mean paired difference with its t interval, paired t-test and
  Wilcoxon signed-rank test (common random numbers make every evaluation paired).
- :func:`wilson_interval`: confidence interval of a win rate.
- :func:`bradley_terry`: strengths fitted by maximum likelihood from pairwise results
  (Hunter's MM iterations), and :func:`elo_from_strengths` to put them on the Elo scale.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

ELO_BASE = 1500.0
ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of natural-log strength


@dataclass(frozen=True)
class Summary:
    """Descriptive statistics of one sample."""

    n: int
    mean: float
    sd: float
    se: float
    ci95_t: tuple[float, float]
    ci95_bootstrap: tuple[float, float]
    p10: float
    p50: float
    p90: float
    min: float
    max: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PairedComparison:
    """Agent ``a`` minus agent ``b`` on the same seeds."""

    a: str
    b: str
    n: int
    mean_difference: float
    sd_difference: float
    ci95: tuple[float, float]
    t_statistic: float
    t_pvalue: float
    wilcoxon_statistic: float
    wilcoxon_pvalue: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BradleyTerryFit:
    """Fitted strengths (natural-log scale, mean 0) and their Elo equivalents."""

    names: list[str]
    log_strengths: np.ndarray
    elo: np.ndarray
    iterations: int
    #: pseudo-games added per pair to make the fit finite (0 when the plain MLE exists)
    prior_games: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "log_strengths": [float(x) for x in self.log_strengths],
            "elo": [float(x) for x in self.elo],
            "iterations": self.iterations,
            "prior_games": self.prior_games,
        }


def _as_sample(values: Any) -> np.ndarray:
    sample = np.asarray(values, dtype=np.float64).ravel()
    if sample.size == 0:
        raise ValueError("empty sample")
    if not np.all(np.isfinite(sample)):
        raise ValueError("sample contains NaN or infinite values")
    return sample


def t_interval(values: Any, level: float = 0.95) -> tuple[float, float]:
    """Student-t confidence interval of the mean (degenerate to the value itself when n = 1)."""
    sample = _as_sample(values)
    mean = float(sample.mean())
    if sample.size < 2:
        return (mean, mean)
    se = float(sample.std(ddof=1)) / math.sqrt(sample.size)
    half = float(_scipy_stats().t.ppf(0.5 + level / 2.0, df=sample.size - 1)) * se
    return (mean - half, mean + half)


def bootstrap_interval(values: Any, level: float = 0.95, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean, reproducible from ``seed``."""
    sample = _as_sample(values)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    batch = max(1, 2_000_000 // sample.size)  # bound the memory of one index batch
    for start in range(0, resamples, batch):
        stop = min(resamples, start + batch)
        idx = rng.integers(0, sample.size, size=(stop - start, sample.size))
        means[start:stop] = sample[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(low), float(high))


def summarize(values: Any, bootstrap_seed: int = 0, resamples: int = 2000) -> Summary:
    """Everything a report needs about one agent's scores."""
    sample = _as_sample(values)
    sd = float(sample.std(ddof=1)) if sample.size > 1 else 0.0
    p10, p50, p90 = np.percentile(sample, [10, 50, 90])
    return Summary(
        n=int(sample.size),
        mean=float(sample.mean()),
        sd=sd,
        se=sd / math.sqrt(sample.size),
        ci95_t=t_interval(sample),
        ci95_bootstrap=bootstrap_interval(sample, resamples=resamples, seed=bootstrap_seed),
        p10=float(p10),
        p50=float(p50),
        p90=float(p90),
        min=float(sample.min()),
        max=float(sample.max()),
    )


def paired_t_test(differences: Any) -> tuple[float, float]:
    """Two-sided one-sample t-test of ``mean(differences) == 0``: (t statistic, p-value)."""
    diff = _as_sample(differences)
    if diff.size < 2:
        return (math.nan, math.nan)
    sd = float(diff.std(ddof=1))
    mean = float(diff.mean())
    if sd == 0.0:
        return (0.0, 1.0) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0)
    t_stat = mean / (sd / math.sqrt(diff.size))
    return (t_stat, float(2.0 * _scipy_stats().t.sf(abs(t_stat), df=diff.size - 1)))


def wilcoxon_test(differences: Any) -> tuple[float, float]:
    """Wilcoxon signed-rank test (zeros dropped, two-sided): (statistic, p-value).

    All-zero differences give (0, 1): no evidence of any difference.
    """
    diff = _as_sample(differences)
    if not np.any(diff != 0.0):
        return (0.0, 1.0)
    result = _scipy_stats().wilcoxon(diff, zero_method="wilcox", alternative="two-sided")
    return (float(result.statistic), float(result.pvalue))


def paired_comparison(a_values: Any, b_values: Any, a: str = "a", b: str = "b") -> PairedComparison:
    """Compare two agents that played the same seeds (element i of both is seed i)."""
    av, bv = _as_sample(a_values), _as_sample(b_values)
    if av.shape != bv.shape:
        raise ValueError(f"paired samples differ in length: {av.size} vs {bv.size}")
    diff = av - bv
    t_stat, t_p = paired_t_test(diff)
    w_stat, w_p = wilcoxon_test(diff)
    return PairedComparison(
        a=a, b=b, n=int(diff.size),
        mean_difference=float(diff.mean()),
        sd_difference=float(diff.std(ddof=1)) if diff.size > 1 else 0.0,
        ci95=t_interval(diff),
        t_statistic=float(t_stat), t_pvalue=float(t_p),
        wilcoxon_statistic=w_stat, wilcoxon_pvalue=w_p,
    )


def wilson_interval(successes: float, trials: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (``successes`` may be fractional: shared wins)."""
    if trials <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes {successes} outside 0..{trials}")
    z = float(_scipy_stats().norm.ppf(0.5 + level / 2.0))
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bradley_terry_log_likelihood(log_strengths: np.ndarray, wins: np.ndarray) -> float:
    """Log-likelihood of ``wins[i, j]`` (times i beat j) under P(i beats j) = s_i / (s_i + s_j)."""
    theta = np.asarray(log_strengths, dtype=np.float64)
    diff = theta[:, None] - theta[None, :]
    # log P(i beats j) = -log(1 + exp(theta_j - theta_i)), computed stably
    log_p = -np.logaddexp(0.0, -diff)
    np.fill_diagonal(log_p, 0.0)
    return float(np.sum(wins * log_p))


def mle_exists(wins: np.ndarray) -> bool:
    """The plain Bradley-Terry MLE is finite iff the "i beat j" graph is strongly connected."""
    from scipy.sparse.csgraph import connected_components

    n_components, _ = connected_components(np.asarray(wins) > 0, directed=True, connection="strong")
    return n_components == 1


def bradley_terry(wins: Any, names: list[str] | None = None, prior_games: float | None = None,
                  tol: float = 1e-10, max_iter: int = 100_000) -> BradleyTerryFit:
    """Fit Bradley-Terry strengths to ``wins[i, j]`` (i beat j; a tie counts half to each).

    Maximum likelihood by Hunter's (2004) MM iterations: s_i <- W_i / sum_j n_ij / (s_i + s_j).
    When the plain MLE does not exist (someone never won, or a group never beat another), a
    symmetric prior of ``prior_games`` pseudo-games per pair (split evenly) keeps it finite;
    ``None`` means: 0 when the MLE exists, else 1.
    """
    w = np.array(wins, dtype=np.float64)
    k = w.shape[0]
    if w.ndim != 2 or w.shape != (k, k) or k < 2:
        raise ValueError("wins must be a square matrix with at least two players")
    if np.any(w < 0):
        raise ValueError("wins must be non-negative")
    np.fill_diagonal(w, 0.0)
    if prior_games is None:
        prior_games = 0.0 if mle_exists(w) else 1.0
    if prior_games > 0:
        w = w + prior_games / 2.0
        np.fill_diagonal(w, 0.0)
    games = w + w.T
    total_wins = w.sum(axis=1)
    strengths = np.ones(k)
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (reported afterwards)
        denom = (games / (strengths[:, None] + strengths[None, :])).sum(axis=1)
        new = total_wins / denom
        new = new / math.exp(np.mean(np.log(new)))
        converged = np.max(np.abs(np.log(new) - np.log(strengths))) < tol
        strengths = new
        if converged:
            break
    theta = np.log(strengths)
    theta = theta - theta.mean()
    return BradleyTerryFit(
        names=list(names) if names is not None else [str(i) for i in range(k)],
        log_strengths=theta, elo=elo_from_strengths(theta), iterations=iterations,
        prior_games=float(prior_games),
    )


def bradley_terry_bootstrap(wins_by_group: Any, resamples: int = 300, seed: int = 0, level: float = 0.95,
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CI of the Elo ratings: ``wins_by_group[g]`` is the wins matrix of one
    independent group of games (one seed, all its lineups); groups are resampled with
    replacement and refitted (regularised like :func:`bradley_terry` when a resample needs it)."""
    groups = np.asarray(wins_by_group, dtype=np.float64)
    rng = np.random.default_rng(seed)
    elos = np.empty((resamples, groups.shape[1]))
    for r in range(resamples):
        sample = groups[rng.integers(0, groups.shape[0], groups.shape[0])].sum(axis=0)
        elos[r] = bradley_terry(sample, tol=1e-8).elo
    alpha = (1.0 - level) / 2.0
    return np.quantile(elos, alpha, axis=0), np.quantile(elos, 1.0 - alpha, axis=0)


def elo_from_strengths(log_strengths: Any, base: float = ELO_BASE) -> np.ndarray:
    """Elo ratings (mean ``base``) equivalent to Bradley-Terry log-strengths: a 400-point gap is
    10:1 odds."""
    theta = np.asarray(log_strengths, dtype=np.float64)
    return base + ELO_SCALE * (theta - theta.mean())


def pairwise_wins_from_scores(score_rows: list[list[float]], agents_rows: list[list[str]],
                              names: list[str]) -> np.ndarray:
    """``wins[i, j]`` from multiplayer games: in each game every pair of seats held by different
    agents is one comparison, won by the higher total (a tie is half a win each)."""
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for totals, agents in zip(score_rows, agents_rows, strict=True):
        for s in range(len(totals)):
            for t in range(s + 1, len(totals)):
                i, j = index[agents[s]], index[agents[t]]
                if i == j:
                    continue
                if totals[s] > totals[t]:
                    wins[i, j] += 1.0
                elif totals[s] < totals[t]:
                    wins[j, i] += 1.0
                else:
                    wins[i, j] += 0.5
                    wins[j, i] += 0.5
    return wins


@dataclass(frozen=True)
class Moments:
    """Count, mean, sum of squared deviations, min and max of a sample: enough for a mean, SD and
    t interval, and mergeable (Chan et al.), so large runs summarize chunk by chunk in flat memory."""

    n: int
    mean: float
    m2: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Any) -> Moments:
        sample = _as_sample(values)
        mean = float(sample.mean())
        return cls(int(sample.size), mean, float(((sample - mean) ** 2).sum()), float(sample.min()),
                   float(sample.max()))

    def merge(self, other: Moments) -> Moments:
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * other.n / n
        m2 = self.m2 + other.m2 + delta * delta * self.n * other.n / n
        return Moments(n, mean, m2, min(self.min, other.min), max(self.max, other.max))

    @property
    def sd(self) -> float:
        return math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else 0.0

    @property
    def se(self) -> float:
        return self.sd / math.sqrt(self.n)

    def ci95_t(self, level: float = 0.95) -> tuple[float, float]:
        """Student-t interval of the mean, as :func:`t_interval` gives on the whole sample."""
        if self.n < 2:
            return (self.mean, self.mean)
        half = float(_scipy_stats().t.ppf(0.5 + level / 2.0, df=self.n - 1)) * self.se
        return (self.mean - half, self.mean + half)


def _scipy_stats() -> Any:
    """``scipy.stats``, imported on first use (it takes about a second, which every command that
    only writes files would otherwise pay at start)."""
    from scipy import stats

    return stats

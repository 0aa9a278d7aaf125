"""The evaluator's statistics: the Wilson interval, Bradley-Terry ratings, a standard error from exact totals."""

from __future__ import annotations

import math

import numpy as np

Z95 = 1.959963984540054
ELO_PER_NAT = 400.0 / np.log(10.0)


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% by default)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def bradley_terry(wins: np.ndarray, prior: float = 1.0, iters: int = 10000) -> tuple[np.ndarray, np.ndarray]:
    """Bradley–Terry ratings on the Elo scale (mean 0) and their standard errors, from wins[i, j].

    Fitted by Hunter's MM algorithm; `prior` virtual games, split evenly, are added to every pair that
    played (so a clean sweep stays finite). Errors come from the Fisher information (pseudo-inverse).
    """
    wins = np.asarray(wins, dtype=np.float64)
    played = (wins + wins.T) > 0
    w = wins + np.where(played, prior / 2.0, 0.0)
    n = w + w.T
    strength = np.ones(len(w))
    for _ in range(iters):
        denom = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = np.where(denom > 0, w.sum(axis=1) / np.maximum(denom, 1e-300), strength)
        new = np.exp(np.log(np.maximum(new, 1e-300)) - np.log(np.maximum(new, 1e-300)).mean())
        if np.max(np.abs(new - strength)) < 1e-13:
            strength = new
            break
        strength = new
    beta = np.log(strength)
    q = strength[:, None] / (strength[:, None] + strength[None, :])
    info = -n * q * q.T
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(axis=1))
    cov = np.linalg.pinv(info)
    return ELO_PER_NAT * (beta - beta.mean()), ELO_PER_NAT * np.sqrt(np.maximum(np.diag(cov), 0.0))


def points_standard_error(total: int, squares: int, n: int) -> float:
    """Standard error of the mean of n integers from their exact sum and sum of squares (sample variance)."""
    if n < 2:
        return 0.0
    return math.sqrt(max(n * squares - total * total, 0) / (n * (n - 1)) / n)

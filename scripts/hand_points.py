"""Measure the points of hands `expert` wins against itself: the quantile table `win_chance.HAND_POINTS`.

Run: `python scripts/hand_points.py [--matches 1000] [--seed 7]`; prints the 100 quantiles to paste into
hollywood_gin_env/rules/win_chance.py.
"""

from __future__ import annotations

import argparse

import numpy as np

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.evaluation.duplicate import HAND_COLUMNS, play_hands


def hand_points(matches: int, seed: int) -> np.ndarray:
    """The points of every scored hand of `matches` duplicate matches of expert against itself."""
    agents = (load_agent("expert", seed=1), load_agent("expert", seed=2))
    _, hands = play_hands(agents, matches, seed, 0, matches)
    winner, points = HAND_COLUMNS.index("winner"), HAND_COLUMNS.index("points")
    return np.abs(hands[hands[:, winner] >= 0, points])


def main() -> None:
    """Print the quantile table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    points = hand_points(args.matches, args.seed)
    quantiles = np.percentile(points, np.arange(100) + 0.5, method="inverted_cdf").astype(int)
    print(f"{len(points)} hands, mean {points.mean():.2f}; quantiles:")
    print(", ".join(str(q) for q in quantiles))


if __name__ == "__main__":
    main()

"""Benchmark agents against each other: `python evaluate.py --agents expert greedy random --matches 2000 --seed 0`.

A thin wrapper over `hollywood_gin_env.evaluate.main` (see README.md, "Benchmarking").
"""

from hollywood_gin_env.evaluate import main

if __name__ == "__main__":
    raise SystemExit(main())

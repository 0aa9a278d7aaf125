"""Benchmark agents against each other: `python evaluate.py --agents expert greedy random --matches 2000 --seed 0`.

A thin wrapper over `hollywood_gin_env.evaluate.main` (see README.md, "Benchmarking").
"""

import sys

if __name__ == "__main__":
    try:
        from hollywood_gin_env.evaluate import main

        code = main()
    except KeyboardInterrupt:  # Ctrl-C while importing; main() handles it during the run
        print("interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)

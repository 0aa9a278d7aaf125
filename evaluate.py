"""`python evaluate.py`: the evaluator, `hollywood_gin_env.evaluation.evaluate` (the same program as `hollywood-gin
evaluate`).

Benchmark agents against each other: `python evaluate.py --agents bot expert greedy random --matches 2000 --seed 0`
(see README.md, "Benchmarking").
"""

import sys

if __name__ == "__main__":
    try:
        from hollywood_gin_env.evaluation.evaluate import main

        code = main(prog="python evaluate.py")
    except KeyboardInterrupt:  # Ctrl-C while importing; main() handles it during the run
        print("interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)

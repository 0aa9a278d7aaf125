#!/usr/bin/env bash
# The kernel-thread check on a GPU machine (16 cores, one CUDA GPU), about 7 minutes, with the project installed
# (`python -m pip install -e ".[test]"`):
#   1. the machine (CPUs this process may use, the GPU, the versions) -> $OUT/machine.txt
#   2. a smoke run that compiles the numba kernels (cached on disk for the runs after it) -> $OUT/smoke.json
#   3. the default recipe's training loop on --device "$DEVICE", 12 s per count of env threads 1 2 4 8 16, torch on
#      2 threads: the whole loop's and the rollout's decisions/s and the split of the time per count
#      -> $OUT/train_threads.json (one JSON object, the keys of benchmarks/train.py --json) and .txt (readable)
#   4. the same loop at 16 env threads eager, then with train.compile (CUDA graphs over fixed-shape batches)
#      -> $OUT/train_compile.txt (the compiled loop's decisions/s and its gain over eager, in the same run)
#   5. the thread tests (bit-identical envs, heuristics, evaluations and training runs for 1 and 2 threads; errors
#      and Ctrl-C), the recipe fingerprint's tests and the compiled forward pass's tests (the CUDA-graph one
#      included) -> $OUT/test_threads.txt
# Run from anywhere: bash benchmarks/gpu_check.sh; outputs go to $OUT (default: benchmarks/gpu-check-out).
# A dry run of every step on a machine without a GPU: DEVICE=cpu SECONDS_EACH=3 ENV_THREADS="1 2" COMPILE_THREADS=2
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/benchmarks/gpu-check-out}
PY=${PYTHON:-python3}
COUNTS=${ENV_THREADS:-"1 2 4 8 16"}
SECONDS_EACH=${SECONDS_EACH:-12}
COMPILE_THREADS=${COMPILE_THREADS:-16}
DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=2 PYTHONUNBUFFERED=1

{
    date -u
    echo "nproc: $(nproc)"
    $PY -c 'import os; print("sched_getaffinity:", len(os.sched_getaffinity(0)))'
    nvidia-smi -L 2>&1 || echo "no nvidia-smi"
    $PY -c 'import sys, numpy, numba, torch; print(sys.version.split()[0], "numpy", numpy.__version__,
        "numba", numba.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())'
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

exec 3>&1  # the script's own stdout, for the steps' reports (each step's stdout goes to its output file)
step() {  # step NAME SECONDS COMMAND...: run with a time limit, say how it ended
    local name=$1 limit=$2
    shift 2
    local began=$SECONDS
    timeout "$limit" "$@"
    local status=$?
    echo "== $name: exit $status after $((SECONDS - began)) s" | tee -a "$OUT/steps.txt" >&3  # not into its output
}

step smoke 150 $PY benchmarks/train.py --smoke --json --no-reference --device "$DEVICE" --env-threads 2 \
    > "$OUT/smoke.json" 2> "$OUT/smoke.err"
# shellcheck disable=SC2086  # COUNTS is a list of numbers
step train_threads 210 $PY benchmarks/train.py --json --no-reference --device "$DEVICE" --threads 2 \
    --seconds "$SECONDS_EACH" --env-threads $COUNTS > "$OUT/train_threads.json" 2> "$OUT/train_threads.err"
step train_compile 150 $PY benchmarks/train.py --no-reference --device "$DEVICE" --threads 2 \
    --seconds "$SECONDS_EACH" --env-threads "$COMPILE_THREADS" --compile \
    > "$OUT/train_compile.txt" 2> "$OUT/train_compile.err"
cat "$OUT/train_compile.txt"
for name in train_threads; do
    $PY - "$OUT/$name.json" > "$OUT/$name.txt" 2>&1 <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().strip().splitlines()
figures = json.loads(lines[-1]) if lines else {}
counts = sorted(int(k.rsplit("_", 1)[1]) for k in figures if k.startswith("ppo_steps_per_s_threads_"))
print("env threads | decisions/s (whole loop) | rollout alone | rollout share (forward) | update share | update rows/s")
for n in counts:
    f = {k: figures[f"{k}_threads_{n}"] for k in ("ppo_steps_per_s", "rollout_steps_per_s", "rollout_share",
                                                  "forward_share", "update_share", "update_rows_per_s")}
    print(f"{n} | {f['ppo_steps_per_s']:,.0f} | {f['rollout_steps_per_s']:,.0f} | {f['rollout_share']:.0%} "
          f"({f['forward_share']:.0%}) | {f['update_share']:.0%} | {f['update_rows_per_s']:,.0f}")
EOF
    cat "$OUT/$name.txt"
done
if $PY -c "import pytest" 2>/dev/null; then
    step test_threads 150 $PY -m pytest -q -p no:cacheprovider -m "not slow" tests/test_threads.py \
        tests/test_recipe_fingerprint.py tests/test_compiled_forward.py > "$OUT/test_threads.txt" 2>&1
    tail -3 "$OUT/test_threads.txt"
else
    echo "pytest is not installed: the thread tests did not run" | tee "$OUT/test_threads.txt"
fi

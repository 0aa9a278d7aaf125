"""The evaluator's numbers are bounded before anything runs: torch threads (as training bounds them), matches per pair
(as training bounds its evaluations), and the expert heuristic's weights (finite numbers only). Each refusal names the
value and what is allowed."""

from __future__ import annotations

import pytest

from hollywood_gin_env.agents import ExpertAgent
from hollywood_gin_env.agents.torch_threads import MAX_TORCH_THREADS
from hollywood_gin_env.evaluation import evaluate
from hollywood_gin_env.evaluation.duplicate import MAX_MATCHES, Schedule, duplicate_deals


def usage_error(argv: list[str], capsys) -> str:
    """The error line `evaluate` exits with (status 2) for argv."""
    with pytest.raises(SystemExit) as exited:
        evaluate.main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("threads", ["0", "257", "100000"])
def test_evaluate_refuses_torch_threads_outside_1_to_256_before_setting_them(threads, capsys, monkeypatch):
    """`--threads 100000` is refused with the allowed range before torch is asked for any thread."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch, "set_num_threads", lambda n: pytest.fail(f"torch.set_num_threads({n}) was called"))
    error = usage_error(["--agents", "bot", "expert", "--threads", threads, "--no-progress"], capsys)
    assert f"threads={threads} is not allowed: use an integer from 1 to {MAX_TORCH_THREADS}" in error, error


@pytest.mark.parametrize("matches", [str(2**63), str(MAX_MATCHES + 2), "0", "3"])
def test_evaluate_refuses_a_match_count_outside_2_to_100000(matches, capsys):
    """`--matches 2**63` (or any count over 100,000 a pair, or odd, or 0) is refused naming the allowed range."""
    error = usage_error(["--agents", "expert", "greedy", "--matches", matches, "--no-progress"], capsys)
    assert f"matches={matches} is not allowed: use an even number from 2 to {MAX_MATCHES:,}" in error, error


def test_the_library_bounds_match_counts_and_threads_too():
    """`duplicate_deals` (which every evaluation calls first) and `Schedule` refuse the same values."""
    with pytest.raises(ValueError, match="matches=9223372036854775808 is not allowed"):
        duplicate_deals(2**63, 0, 0, 2)
    with pytest.raises(ValueError, match="threads=100000 is not allowed"):
        Schedule(torch_threads=100_000)
    assert Schedule(torch_threads=MAX_TORCH_THREADS).torch_threads == MAX_TORCH_THREADS


@pytest.mark.parametrize(
    "weights, named",
    [
        ([float("nan")] * 9, r"weights\[0\]=nan is not allowed: every weight must be a finite number"),
        ([1.0] * 8 + [float("-inf")], r"weights\[8\]=-inf is not allowed"),
        ([1.0] * 8, r"weights must be 9 finite numbers, got shape \(8,\)"),
        (["a"] * 9, "weights must be 9 finite numbers"),
    ],
)
def test_the_expert_refuses_weights_that_are_not_nine_finite_numbers(weights, named):
    """NaN, infinite, missing or non-numeric weights are refused, naming the first bad one."""
    with pytest.raises(ValueError, match=named):
        ExpertAgent(weights=weights)


def test_evaluate_bounds_chunk_matches_by_name(monkeypatch, capsys):
    import hollywood_gin_env.evaluation.evaluate as evaluate

    monkeypatch.setattr(evaluate, "round_robin", lambda *a, **k: pytest.fail("played despite the bad option"))
    with pytest.raises(SystemExit):
        evaluate.main(["--agents", "greedy", "random", "--matches", "2", "--chunk-matches", str(10**9)])
    assert f"--chunk-matches={10**9} is over the limit of {evaluate.MAX_CHUNK_MATCHES:,}" in capsys.readouterr().err

"""A cold numba cache is announced in one line on stderr before the long compile (a warm cache and pure-Python mode
print nothing), and evaluate.py --help shows every option's default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hollywood_gin_env.engine.compile_notice import MESSAGE
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.evaluation.evaluate import main

ROOT = Path(__file__).resolve().parents[1]
# Two engines, no step: the notice must come from constructing the engine, before anything compiles.
TWO_ENGINES = "from hollywood_gin_env.engine.batched import Engine; Engine(1); Engine(2); print('built')"


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("NUMBA_DISABLE_JIT", "NUMBA_CACHE_DIR")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={**clean, **env},
        timeout=120,
    )


def test_cold_cache_prints_one_line_before_compiling(tmp_path):
    """An empty numba cache (a fresh checkout): the notice appears once on stderr, stdout stays clean."""
    out = _run(TWO_ENGINES, NUMBA_CACHE_DIR=str(tmp_path))
    assert out.stderr.count(MESSAGE) == 1
    assert "~30 s (cached for later runs once done)" in MESSAGE and "compiling the engine's kernels" in MESSAGE
    assert out.stdout == "built\n"


def test_the_notice_gets_a_line_of_its_own_under_a_progress_bar(tmp_path):
    """With a progress bar already drawn on stderr (evaluate's), the notice is written on a line of its own above
    it, not appended to the bar's line."""
    code = (
        "import sys; from tqdm import tqdm; bar = tqdm(total=2, file=sys.stderr, desc='matches'); "
        "from hollywood_gin_env.engine.batched import Engine; Engine(1); bar.close(); print('built')"
    )
    out = _run(code, NUMBA_CACHE_DIR=str(tmp_path))
    pieces = out.stderr.replace("\r", "\n").split("\n")
    assert pieces.count(MESSAGE) == 1, repr(out.stderr)
    assert not any(MESSAGE in piece and piece != MESSAGE for piece in pieces), repr(out.stderr)


def test_warm_cache_prints_nothing():
    """Once the kernels are compiled (and so written to the disk cache), a new process says nothing."""
    game = Game(seed=0)
    game.step(game.legal_actions()[0])  # the entry kernels compile here if the cache was cold, or load from it
    game.observation(0)
    out = _run(TWO_ENGINES)
    assert MESSAGE not in out.stderr and out.stdout == "built\n"


def test_pure_python_mode_prints_nothing(tmp_path):
    """NUMBA_DISABLE_JIT=1 compiles nothing, so it announces nothing even with an empty cache."""
    out = _run(TWO_ENGINES, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DISABLE_JIT="1")
    assert MESSAGE not in out.stderr


@pytest.mark.nojit
def test_evaluate_help_shows_the_defaults(capsys):
    """`evaluate --help` says what every option defaults to, the rules included."""
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for fragment in (
        "default: ['expert', 'greedy', 'random']",
        "default: 2000",
        "default: 0",
        "default: no JSON",
        "default: shown",
        "default: the rules the agents were trained under",
    ):
        assert fragment in text

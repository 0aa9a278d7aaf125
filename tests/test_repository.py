"""The repository tracks no run output: `runs/` (where train.py writes by default) is ignored, no file in it tracked."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def git(*args):
    """Run git in the repository root; skip the test when this is no git checkout (an sdist, an unpacked archive)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed, so the tracked files cannot be listed")
    if not (ROOT / ".git").exists():
        pytest.skip(f"{ROOT} is not a git checkout (an sdist or archive), so there are no tracked files to check")
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def test_nothing_under_runs_is_tracked():
    """`git ls-files runs` is empty: a user's runs never mix with committed ones, and TensorBoard sees only theirs."""
    listed = git("ls-files", "--", "runs")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == [], f"tracked files under runs/: {listed.stdout.split()}"


def test_gitignore_ignores_new_files_under_runs():
    """A file a training run writes under runs/ is ignored, so it cannot be committed by accident with `git add .`."""
    checked = git("check-ignore", "--no-index", "-q", "runs/some-run/last.pt")
    assert checked.returncode == 0, "runs/some-run/last.pt is not ignored: .gitignore lost its runs/ rule"

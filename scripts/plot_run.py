"""Draw a run's learning curve from its TensorBoard log: match win rate against each eval opponent over wall time.

    python scripts/plot_run.py RUN_DIR [--out docs/learning_curve.png]

The shaded band is each evaluation's Wilson 95% interval. Needs matplotlib (the train set-up: `python -m pip install
".[train]"`).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np


def read_curves(run_dir: str) -> dict[str, dict[str, np.ndarray]]:
    """opponent -> {"minutes", "rate", "low", "high"} from the run's eval/ scalars and time/wall_s."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(run_dir, size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]
    if "time/wall_s" not in tags:
        raise ValueError(f"{run_dir} has no time/wall_s scalars: is it a train.py run directory?")
    wall = {e.step: e.value for e in events.Scalars("time/wall_s")}
    wall_steps = np.array(sorted(wall))
    curves = {}
    for tag in tags:
        if not tag.startswith("eval/match_win_rate_vs_"):
            continue
        name = tag.removeprefix("eval/match_win_rate_vs_")
        points = events.Scalars(tag)
        steps = np.array([e.step for e in points])
        nearest = wall_steps[np.clip(np.searchsorted(wall_steps, steps), 0, len(wall_steps) - 1)]
        curves[name] = {
            "minutes": np.array([wall[s] for s in nearest]) / 60.0,
            "rate": np.array([e.value for e in points]),
            "low": np.array([e.value for e in events.Scalars(f"eval/match_win_low_vs_{name}")]),
            "high": np.array([e.value for e in events.Scalars(f"eval/match_win_high_vs_{name}")]),
        }
    if not curves:
        raise ValueError(f"{run_dir} has no eval/match_win_rate_vs_* scalars yet")
    return curves


def plot(curves: dict[str, dict[str, np.ndarray]], out: str, title: str) -> None:
    """Write the PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4), dpi=120)
    for name, curve in sorted(curves.items()):
        axes.plot(curve["minutes"], curve["rate"], marker="o", markersize=3, label=f"vs {name}")
        axes.fill_between(curve["minutes"], curve["low"], curve["high"], alpha=0.2)
    axes.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    axes.set(xlabel="wall time (minutes, warm start included)", ylabel="match win rate", ylim=(0, 1), title=title)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(out)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    """Read RUN_DIR, write the picture."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir")
    parser.add_argument("--out", default=None, help="PNG path (default: RUN_DIR/learning_curve.png)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.run_dir):
        print(f"plot_run.py: error: {args.run_dir} is not a directory", file=sys.stderr)
        return 2
    try:
        curves = read_curves(args.run_dir)
    except ValueError as error:
        print(f"plot_run.py: error: {error}", file=sys.stderr)
        return 2
    out = args.out or os.path.join(args.run_dir, "learning_curve.png")
    plot(curves, out, f"learning curve: {os.path.basename(os.path.normpath(args.run_dir))}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Train a Hollywood Gin policy by self-play: the `hollywood-gin train` program (its command line, examples and
outputs: hollywood_gin_trainer.options).

The run itself is a `hollywood_gin_trainer.run.TrainingRun`; this module is the loop over it. Progress and notes go to
stderr, the closing summary to stdout.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # the engine is single-threaded; keep numba from spawning a pool

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from hollywood_gin_env.support.atomic import AtomicWriteError, atomic_write_text, check_write_target
from hollywood_gin_trainer.config import Config, load_config, to_toml
from hollywood_gin_trainer.options import PROG, parse_args
from hollywood_gin_trainer.run import TrainingRun, resolve_device
from hollywood_gin_trainer.rundir import RUN_FILES, RunLock, check_fresh, clean_stale_temps
from hollywood_gin_trainer.tblog import log_evaluation, log_hparams, log_scalars
from hollywood_gin_trainer.workers import WorkerError


def git_commit() -> str:
    """The commit the code runs at ("+dirty" with uncommitted changes), or "unknown" (an installed wheel's code)."""
    try:
        here = Path(__file__).resolve().parent
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        if Path(top).resolve() != here.parent:  # a wheel installed in a venv inside some other repository
            return "unknown"
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Interrupt:
    """Ctrl-C asks the loop to save last.pt and stop after the current update; a second Ctrl-C stops at once."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nCtrl-C: saving last.pt after this update (Ctrl-C again to stop at once)", file=sys.stderr)


def say(message: str) -> None:
    """A progress note (stderr, so that stdout holds only the closing summary)."""
    tqdm.write(message, file=sys.stderr)  # above any progress bar, never through it


def check_args(args: argparse.Namespace) -> None:
    """ValueError naming the option for arguments no run can use (before anything starts)."""
    if args.stop_after is not None and args.stop_after < (1 if args.resume else 0):
        least = "at least 1 with --resume" if args.resume else "at least 0 (0: stop after the warm start)"
        raise ValueError(f"--stop-after {args.stop_after}: give a number of updates of {least}")
    if args.ray_address:  # Ray's own connect would retry for minutes against an address nobody listens at
        from hollywood_gin_env.evaluation.duplicate import EvaluationError

        try:
            from hollywood_gin_env.evaluation.ray_tasks import check_reachable
        except ImportError:
            return  # no Ray: the run's workers say what to install
        try:
            check_reachable(args.ray_address)
        except EvaluationError as error:
            raise ValueError(f"--ray-address: {error}") from None


def plan_run(args: argparse.Namespace) -> tuple[Path, Config | None]:
    """The run directory, and the checked config of a new run (None when resuming: the config is in last.pt)."""
    if args.resume:
        flags = {
            "--config": args.config,
            "--set": args.set,
            "--seed": args.seed,
            "--run-dir": args.run_dir,
            "--overwrite": args.overwrite,
        }
        given = [flag for flag, value in flags.items() if value]
        if given:
            raise ValueError(
                f"--resume continues a run with its saved config and directory; drop {', '.join(given)}"
                " (to change a setting, start a new run)"
            )
        return Path(args.resume if os.path.isdir(args.resume) else os.path.dirname(args.resume) or "."), None
    seed_override = [f"train.seed={args.seed}"] if args.seed is not None else []
    config = load_config(args.config, args.set + seed_override)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = Path(args.config).stem if args.config else "default"
    return Path(args.run_dir or f"runs/{name}-seed{config.train.seed}-{stamp}"), config


def prepare_run_dir(run_dir: Path, new_run: bool, overwrite: bool) -> None:
    """Refuse a directory holding another run unless --overwrite (which clears that run's files and logs), and
    remove what interrupted writes left behind. Called holding the directory's lock."""
    for name in RUN_FILES:  # refused now, not when the first save comes after hours of training
        check_write_target(run_dir / name)
    if new_run:
        found = check_fresh(run_dir, overwrite=overwrite)
        logs = sorted(run_dir.glob("events.out.tfevents.*"))
        if found or logs:
            for path in [*(run_dir / name for name in found), *logs]:
                path.unlink()
            say(f"--overwrite: removed the previous run's {', '.join(found + [f'{len(logs)} TensorBoard logs'])}")
    removed = clean_stale_temps(run_dir)
    if removed:
        say(f"removed {len(removed)} temporary files left by interrupted writes in {run_dir}")


def log_warm_start(writer: SummaryWriter, epochs: int):
    """The warm start's per-epoch logger: TensorBoard scalars and one readable line."""

    def log(epoch: int, stats: dict[str, float]) -> None:
        for key, value in stats.items():
            writer.add_scalar(f"warmstart/{key}", value, epoch + 1)
        say(
            f"warm start epoch {epoch + 1}/{epochs}: policy loss {stats['policy_loss']:.3f}, value loss "
            f"{stats['value_loss']:.4f}, accuracy {stats['accuracy']:.1%}"
        )

    return log


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """The program (module docstring) as `prog` (how the user typed it); returns the exit status."""
    args = parse_args(argv, prog)
    interrupt = Interrupt()
    try:
        device = resolve_device(args.device)
        check_args(args)
        run_dir, config = plan_run(args)
        lock = RunLock(run_dir).acquire()  # one run at a time in a directory (created if needed)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"{args.prog}: error: {error}") from None
    try:
        prepare_run_dir(run_dir, new_run=config is not None, overwrite=args.overwrite)
        if config is None:
            run = TrainingRun.resume(args.resume, device, commit=git_commit(), ray_address=args.ray_address)
        else:
            run = TrainingRun.create(config, device, commit=git_commit(), ray_address=args.ray_address)
    except (ValueError, FileNotFoundError, WorkerError) as error:
        lock.release()
        raise SystemExit(f"{args.prog}: error: {error}") from None
    try:
        return train(args, run, run_dir, interrupt)
    except (AtomicWriteError, WorkerError) as error:  # a full disk (the previous checkpoint is intact, the message
        # says so) or a rollout worker lost while saving: last.pt stays as last written
        raise SystemExit(f"{args.prog}: error: {error}; resume with: {args.prog} --resume {run_dir}") from None
    finally:
        run.close()
        lock.release()


def train(args: argparse.Namespace, run: TrainingRun, run_dir: Path, interrupt: Interrupt) -> int:
    """The loop over a run's updates (module docstring); returns the exit status."""
    config, progress = run.config, run.progress
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "config.toml", to_toml(config))
    last = run_dir / "last.pt"
    # purge what a crashed run logged after its last checkpoint, so TensorBoard has no duplicate steps
    writer = SummaryWriter(str(run_dir), purge_step=progress.global_step + 1 if run.started else None)
    started = time.perf_counter()
    if run.started:
        say(f"resuming {run_dir} at update {progress.update}/{config.train.updates}")
    else:
        say(f"run directory: {run_dir}")
        run.start(log_warm_start(writer, config.warmstart.epochs), show_progress=not args.no_progress)
        writer.add_scalar("time/warmstart_s", time.perf_counter() - started, 0)
        progress.wall_seconds = time.perf_counter() - started
        run.save(last)
        if args.stop_after == 0:  # the warm start alone: saved and resumable, never reported as a finished run
            writer.close()
            say(f"stopped after the warm start; saved {last}\nresume with: {args.prog} --resume {run_dir}")
            return 0

    updates = config.train.updates
    stop_at = updates if args.stop_after is None else min(updates, progress.update + args.stop_after)
    bar = tqdm(total=updates, initial=progress.update, disable=args.no_progress, desc="updates", dynamic_ncols=True)
    session_start, session_wall = time.perf_counter(), progress.wall_seconds
    postfix: dict[str, str] = {}
    for update in range(progress.update + 1, stop_at + 1):
        lr, ent_coef = run.schedule(update)
        t0 = time.perf_counter()
        try:
            batch = run.collect()
        except WorkerError as error:  # last.pt stays as last saved
            raise SystemExit(f"{args.prog}: error: {error}; resume with: {args.prog} --resume {run_dir}") from None
        t1 = time.perf_counter()
        losses = run.learn(batch, ent_coef)
        t2 = time.perf_counter()

        progress.update = update
        progress.wall_seconds = session_wall + time.perf_counter() - session_start
        sps = len(batch) / (t2 - t0)
        times = {
            "rollout_s": t1 - t0,
            "forward_s": run.timings.forward_s,
            "update_s": t2 - t1,
            "wall_s": progress.wall_seconds,
        }
        log_scalars(
            writer, progress.global_step, update, lr, ent_coef, sps, times, losses, run.arena.hand_summary(), run.pool
        )
        run.snapshot(update)
        out_of_time = 0 < config.train.max_minutes * 60 <= progress.wall_seconds
        final = update == updates or out_of_time
        if (config.eval.every and update % config.eval.every == 0) or final:
            run.save(last)  # first: an evaluation that fails never costs the training before it
            results = run.evaluate()
            if log_evaluation(writer, progress, results, config.eval.opponents[0]):
                run.save_policy(run_dir / "best.pt")
            run.save(last)
            postfix.update({f"vs_{k}": f"{v['match_win_rate']:.0%}" for k, v in results.items()})
        postfix["decisions/s"] = f"{sps:,.0f}"
        bar.set_postfix(postfix, refresh=False)
        bar.update(1)
        if out_of_time:
            say(f"train.max_minutes = {config.train.max_minutes} reached at update {update}/{updates}: stopping")
            break
        if interrupt.requested or (update == stop_at and not final):
            run.save(last)
            bar.close()
            writer.close()
            say(f"stopped at update {update}/{updates}; saved {last}\nresume with: {args.prog} --resume {run_dir}")
            return 0
    bar.close()
    run.save_policy(run_dir / "policy.pt")
    log_hparams(writer, config, progress)
    writer.close()
    figures = progress.history[-1] if progress.history else {}
    wins = ", ".join(f"{key[7:]} {value:.1%}" for key, value in figures.items() if key.startswith("win_vs_"))
    print(
        f"done: {progress.update} updates, {progress.global_step:,} decisions, {progress.wall_seconds / 60:.1f} min;"
        f" final evaluation: {wins or 'none'}\npolicy: {run_dir / 'policy.pt'}  best: {run_dir / 'best.pt'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

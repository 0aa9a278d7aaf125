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
from collections.abc import Callable
from pathlib import Path

import torch
from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams
from tqdm import tqdm

from hollywood_gin_env.evaluation.duplicate import check_local_workers
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.atomic import AtomicWriteError, atomic_write_text, check_write_target
from hollywood_gin_env.support.messages import printable_message
from hollywood_gin_trainer import trainstate
from hollywood_gin_trainer.config import MAX_UPDATES, Config, load_config, to_toml
from hollywood_gin_trainer.opponents import check_agents
from hollywood_gin_trainer.options import PROG, parse_args
from hollywood_gin_trainer.ppo import log_evaluation, log_update
from hollywood_gin_trainer.run import TrainingRun, resolve_device
from hollywood_gin_trainer.rundir import (
    BEST,
    CONFIG,
    LAST,
    POLICY,
    RUN_FILES,
    RunLock,
    check_fresh,
    check_run_dir,
    clean_own_temps,
)
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
    """Ctrl-C asks the run to save its training state and stop at its next safe point, which `when` names (the loop
    sets it as it goes: after this update, after this step of the warm start); before the run is built (`when` None)
    there is nothing to save and it stops at once, as a second Ctrl-C does."""

    def __init__(self) -> None:
        self.requested = False
        self.when: str | None = None
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame) -> None:
        if self.requested or self.when is None:
            raise KeyboardInterrupt
        self.requested = True
        print(f"\nCtrl-C: saving {LAST} {self.when} (Ctrl-C again to stop at once)", file=sys.stderr)


def say(message: str) -> None:
    """A progress note (stderr, so that stdout holds only the closing summary; a path's control characters
    escaped)."""
    tqdm.write(printable_message(message), file=sys.stderr)  # above any progress bar, never through it


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


def plan_run(args: argparse.Namespace) -> tuple[Path, Config, Path | None]:
    """(run directory, checked config, the training-state file to resume or None), each checked before anything in
    the directory is touched: a resumed file must be a training state (its header read), a new run's config valid."""
    if args.resume:
        flags = {
            "--config": args.config,
            "--set": args.set,
            "--seed": args.seed,
            "--rules": args.rules,
            "--run-dir": args.run_dir,
            "--overwrite": args.overwrite,
        }
        given = [flag for flag, value in flags.items() if value]
        if given:
            raise ValueError(
                f"--resume continues a run with its saved config and directory; drop {', '.join(given)}"
                " (to change a setting, start a new run)"
            )
        path = Path(args.resume)
        last = path / LAST if path.is_dir() else path
        if path.is_dir() and not os.path.lexists(last):
            raise FileNotFoundError(f"--resume: no {LAST} in the run directory {path}")
        config, _ = trainstate.read_config(last)
        return last.parent, config, last
    seed_override = [f"train.seed={args.seed}"] if args.seed is not None else []
    rules = Rules.from_strings(args.rules) if args.rules else None
    config = load_config(args.config, args.set + seed_override, rules)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = Path(args.config).stem if args.config else "default"
    return Path(args.run_dir or f"runs/{name}-seed{config.train.seed}-{stamp}"), config, None


def prepare_run_dir(run_dir: Path, new_run: bool, overwrite: bool) -> None:
    """Refuse a directory holding another run unless --overwrite (which clears that run's files and logs), and
    remove what killed writes of the run's own files left. Called holding the directory's lock."""
    for name in RUN_FILES:  # refused now, not when the first save comes after hours of training
        check_write_target(run_dir / name)
    if new_run:
        found = check_fresh(run_dir, overwrite=overwrite)
        logs = sorted(run_dir.glob("events.out.tfevents.*"))
        if found or logs:
            for path in [*(run_dir / name for name in found), *logs]:
                path.unlink()
            say(f"--overwrite: removed the previous run's {', '.join(found + [f'{len(logs)} TensorBoard logs'])}")
    removed = clean_own_temps(run_dir)
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


def plan_train(args: argparse.Namespace) -> tuple[Path, Config, Path | None]:
    """`plan_run`, and for a new run every agent its config names built once, their rules checked against the
    config's (hollywood_gin_trainer/opponents.py's `check_agents`)."""
    run_dir, config, resume = plan_run(args)
    if resume is None:
        check_agents(config)
    return run_dir, config, resume


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """The program (module docstring) as `prog` (how the user typed it); returns the exit status."""
    return run(parse_args(argv, prog))


def run(args: argparse.Namespace) -> int:
    """The program on a parsed command line (options.py's `run_command` parses it before torch is imported)."""
    return run_program(args, plan_train)


def run_program(
    args: argparse.Namespace,
    plan: Callable[[argparse.Namespace], tuple[Path, Config, Path | None]],
    report: Callable[[TrainingRun, Path], None] | None = None,
) -> int:
    """A training program over parsed `args`: `plan(args)` gives (run directory, config, the file to resume or None),
    checked before anything is touched; then the run is built and its directory locked (`open_run`), and its loop
    runs (`train`); `report(run, run_dir)` after a run that reached its end. Returns the exit status; every error is
    one line (SystemExit)."""
    interrupt = Interrupt()
    try:
        device = resolve_device(args.device)
        check_args(args)
        run_dir, config, resume = plan(args)
        if config.train.workers > 1 and not args.ray_address:  # a local Ray: what this machine holds
            check_local_workers(config.train.workers, "train.workers")
        check_run_dir(run_dir, new_run=resume is None, overwrite=args.overwrite)
        run, lock = open_run(args, run_dir, config, resume, device)
    except (ValueError, FileNotFoundError, WorkerError) as error:
        raise SystemExit(fail(args, error)) from None
    except KeyboardInterrupt:  # Ctrl-C before the run started (Interrupt.when is None): nothing of it to save
        raise SystemExit(printable_message(f"{args.prog}: interrupted before the run started")) from None
    try:
        status = train(args, run, run_dir, interrupt)
        if report is not None and run.progress.finished:
            report(run, run_dir)
        return status
    except (AtomicWriteError, WorkerError) as error:  # a full disk (the previous checkpoint is intact, the message
        # says so) or a rollout worker lost: last.safetensors stays as last written
        raise SystemExit(fail(args, error, run_dir)) from None
    finally:
        run.close()
        lock.release()


def open_run(
    args: argparse.Namespace, run_dir: Path, config: Config, resume: Path | None, device: torch.device
) -> tuple[TrainingRun, RunLock]:
    """The run built, then its directory locked and prepared (`prepare_run_dir`). Everything that can refuse a run
    (its agents, warmstart.init's weights, its workers, a resumed file's whole state) is met while it is built, before
    the directory is touched: a refused run removes nothing and leaves no directory it made. A directory that exists
    is locked first, so one another run holds is refused before anything is built."""
    lock = RunLock(run_dir)
    existing = run_dir.is_dir()
    if existing:
        lock.acquire()
    try:
        torch.set_num_threads(config.train.torch_threads)  # what the config asks of this process
        options = {"commit": git_commit(), "ray_address": args.ray_address, "imports": tuple(args.imports)}
        if resume is None:
            run = TrainingRun.create(config, device, **options)
        else:
            run = TrainingRun.resume(resume, device, **options)
    except BaseException:
        lock.release()
        raise
    try:
        if not existing:
            lock.acquire()  # creates the directory
        prepare_run_dir(run_dir, new_run=resume is None, overwrite=args.overwrite)
    except BaseException:
        run.close()
        lock.release()
        raise
    return run, lock


def fail(args: argparse.Namespace, error: BaseException, run_dir: Path | None = None) -> str:
    """The one line an error ends the program with (control characters escaped), and how to resume if it can."""
    resume = f"; resume with: {args.prog} --resume {run_dir}" if run_dir is not None else ""
    return printable_message(f"{args.prog}: error: {error}{resume}")


def train(args: argparse.Namespace, run: TrainingRun, run_dir: Path, interrupt: Interrupt) -> int:
    """The loop over a run's updates (module docstring); returns the exit status."""
    config, progress = run.config, run.progress
    interrupt.when = "after this update"  # the warm start says its own
    atomic_write_text(run_dir / CONFIG, to_toml(config))
    # purge what a crashed run logged after its last save, so TensorBoard has no duplicate steps
    purge = progress.global_step + 1 if run.started else run.cloning.epoch + 1 if run.cloning else None
    writer = SummaryWriter(str(run_dir), purge_step=purge)
    if run.started:
        say(f"resuming {run_dir} at update {progress.update}/{config.train.updates}")
    elif not warm_start(args, run, run_dir, writer, interrupt):
        return 0
    interrupt.when = "after this update"
    if progress.evaluation_due:  # saved just before an evaluation that did not finish: it is played first
        evaluate(run, run_dir, writer)
    if not progress.finished and not train_updates(args, run, run_dir, writer, interrupt):
        return 0
    finish(run, run_dir, writer)
    return 0


def warm_start(
    args: argparse.Namespace, run: TrainingRun, run_dir: Path, writer: SummaryWriter, interrupt: Interrupt
) -> bool:
    """The run's start (`TrainingRun.start`: its warm start, resumed where a saved one stopped), saved before the
    warm start begins, after each cloning epoch and where Ctrl-C stops it, and once the run is started. True if the
    updates follow; False if it stopped (saved; the line says how to resume)."""
    config, progress, last = run.config, run.progress, run_dir / LAST
    cloning = run.cloning
    if cloning is not None and (cloning.epoch or cloning.batch):
        say(
            f"resuming {run_dir} in the warm start's cloning at epoch {cloning.epoch + 1}/{config.warmstart.epochs}: "
            f"its {config.warmstart.decisions:,} teacher decisions are collected again first (the same ones)"
        )
    else:
        say(f"run directory: {run_dir}")
    session_start, session_wall = time.perf_counter(), progress.wall_seconds

    def save() -> None:
        progress.wall_seconds = session_wall + time.perf_counter() - session_start
        run.save(last)

    log = log_warm_start(writer, config.warmstart.epochs)

    def on_epoch(epoch: int, stats: dict[str, float]) -> None:
        log(epoch, stats)
        if epoch + 1 < config.warmstart.epochs:  # the last epoch's weights are saved as the started run's
            save()

    if cloning is not None:
        save()  # resumable from the start: a warm start killed at any point continues from its last save
    interrupt.when = "after this step of the warm start, a round of the teacher's matches or a cloning minibatch"
    started = run.start(on_epoch, show_progress=not args.no_progress, stop=lambda: interrupt.requested)
    save()
    if not started:
        writer.close()
        say(f"stopped in the warm start; saved {last}\nresume with: {args.prog} --resume {run_dir}")
        return False
    writer.add_scalar("time/warmstart_s", progress.wall_seconds, 0)
    if args.stop_after == 0:  # the warm start alone: saved and resumable, never reported as a finished run
        writer.close()
        say(f"stopped after the warm start; saved {last}\nresume with: {args.prog} --resume {run_dir}")
        return False
    return True


def train_updates(args, run: TrainingRun, run_dir: Path, writer: SummaryWriter, interrupt: Interrupt) -> bool:
    """The updates left (or `--stop-after`'s); True if the run reached its end, False if it stopped to resume."""
    config, progress = run.config, run.progress
    updates = config.train.updates
    stop_at = updates if args.stop_after is None else min(updates, progress.update + args.stop_after)
    bar, budget = updates_bar(config, progress, args.no_progress)
    session_start, session_wall = time.perf_counter(), progress.wall_seconds
    postfix: dict[str, str] = {}
    for number in range(progress.update + 1, stop_at + 1):
        if interrupt.requested:  # asked before this update (in the warm start's last step, or the one before)
            return stop_here(args, run, run_dir, bar, writer)
        figures = run.update(number)
        progress.wall_seconds = session_wall + time.perf_counter() - session_start
        log_update(writer, progress.global_step, {**figures, "time/wall_s": progress.wall_seconds})
        run.snapshot(number)
        out_of_time = 0 < config.train.max_minutes * 60 <= progress.wall_seconds
        progress.finished = number == updates or out_of_time
        if (config.eval.every and number % config.eval.every == 0) or progress.finished:
            results = evaluate(run, run_dir, writer)
            postfix.update({f"vs_{k}": f"{v['match_win_rate']:.0%}" for k, v in results.items()})
        postfix["decisions/s"] = f"{figures['charts/SPS']:,.0f}"
        if budget:
            postfix["update"] = f"{number:,}"
        bar.set_postfix(postfix, refresh=False)
        bar.update(min(budget, progress.wall_seconds / 60) - bar.n if budget else 1)
        if out_of_time:
            of = "" if budget else f"/{updates}"
            say(f"train.max_minutes = {config.train.max_minutes} reached at update {number}{of}: stopping")
        if progress.finished:
            break
        if interrupt.requested or number == stop_at:
            return stop_here(args, run, run_dir, bar, writer)
    bar.close()
    return True


def updates_bar(config: Config, progress: trainstate.Progress, hidden: bool) -> tuple[tqdm, float]:
    """The updates' progress bar and the minutes it counts: updates done of train.updates (0 minutes), or where
    train.max_minutes alone bounds the run (train.updates at its most, MAX_UPDATES: exploit's --minutes) the
    minutes spent of that budget, warm start included."""
    budget = config.train.max_minutes if config.train.updates >= MAX_UPDATES else 0.0
    options = {"disable": hidden, "dynamic_ncols": True}
    if not budget:
        return tqdm(total=config.train.updates, initial=progress.update, desc="updates", **options), 0.0
    shape = "{desc}: {n:.1f}/{total:g} min |{bar}| [{elapsed}<{remaining}{postfix}]"
    spent = min(budget, progress.wall_seconds / 60)
    return tqdm(total=budget, initial=spent, desc="time budget", bar_format=shape, **options), budget


def stop_here(args, run: TrainingRun, run_dir: Path, bar: tqdm, writer: SummaryWriter) -> bool:
    """Save the training state, close the bar and the log, say how to resume; False (the run stopped)."""
    run.save(run_dir / LAST)
    bar.close()
    writer.close()
    say(
        f"stopped at update {run.progress.update}/{run.config.train.updates}; saved {run_dir / LAST}\n"
        f"resume with: {args.prog} --resume {run_dir}"
    )
    return False


def evaluate(run: TrainingRun, run_dir: Path, writer: SummaryWriter) -> dict:
    """The evaluation of the update just done: saved first (a failed or killed evaluation never costs the training
    before it, and a resumed run plays it), then logged, kept as best.safetensors if it is the best, saved again."""
    run.progress.evaluation_due = True
    run.save(run_dir / LAST)
    results = run.evaluate()
    log_evaluation(writer, run.progress.global_step, results)
    if run.record_evaluation(results):
        run.save_policy(run_dir / BEST)
    run.save(run_dir / LAST)
    return results


def finish(run: TrainingRun, run_dir: Path, writer: SummaryWriter) -> None:
    """The final policy, the hyperparameters with the last evaluation, and the closing summary (stdout)."""
    progress = run.progress
    run.save_policy(run_dir / POLICY)
    log_hparams(writer, run.config, progress)
    writer.close()
    figures = progress.history[-1] if progress.history else {}
    wins = ", ".join(f"{key[7:]} {value:.1%}" for key, value in figures.items() if key.startswith("win_vs_"))
    print(
        printable_message(
            f"done: {progress.update} updates, {progress.global_step:,} decisions, {progress.wall_seconds / 60:.1f} "
            f"min; final evaluation: {wins or 'none'}\npolicy: {run_dir / POLICY}  best: {run_dir / BEST}"
        )
    )


def log_hparams(writer: SummaryWriter, config: Config, progress: trainstate.Progress) -> None:
    """The run's hyperparameters (section.key, lists as text) with its final evaluation, in its own event file."""
    flat = {
        f"{section}.{key}": str(value) if isinstance(value, (list, dict)) else value
        for section, values in config.to_dict().items()
        for key, value in values.items()
    }
    final = progress.history[-1] if progress.history else {}
    metrics = {f"hparams/{k}": float(v) for k, v in final.items() if k.startswith(("win_", "low_"))}
    for summary in hparams(flat, metrics):
        writer.file_writer.add_summary(summary)
    for key, value in metrics.items():
        writer.add_scalar(key, value, progress.global_step)


if __name__ == "__main__":
    raise SystemExit(main())

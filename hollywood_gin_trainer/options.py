"""The command lines of `hollywood-gin train` (hollywood_gin_trainer.main) and `hollywood-gin exploit`
(hollywood_gin_trainer.exploit), importable without torch so that `--help` shows the options before the [train]
extra is installed.

Train a Hollywood Gin policy by self-play: a behaviour-cloning warm start, then PPO against an opponent pool.

    hollywood-gin train                                 # the recipe of the shipped bot (configs/default.toml)
    hollywood-gin train --config configs/quick.toml     # about 2 minutes on 2 cores
    hollywood-gin train --set train.lr=1e-4 --seed 3 --run-dir runs/try
    hollywood-gin train --resume runs/try               # continue from runs/try/last.safetensors

The same program is `python -m hollywood_gin_env train` and, in a checkout, `python train.py`. Logs go to TensorBoard
(`tensorboard --logdir runs`); the run directory gets config.toml, last.safetensors (the training state, a policy
that plays: through the warm start, before and after every evaluation and on Ctrl-C, which stops at the next update
or step of the warm start), best.safetensors (best lower 95% bound against the first eval opponent) and
policy.safetensors (the final policy).

Train a best response against a frozen TARGET agent: PPO through the same loop, the target its only opponent.

    hollywood-gin exploit bot --minutes 60             # the recipe's warm start, then an hour against the bot
    hollywood-gin exploit greedy --init bot --updates 200 --run-dir runs/br-greedy
    hollywood-gin exploit mine=checkpoint:runs/x/policy.safetensors --init checkpoint:runs/x/policy.safetensors
    hollywood-gin exploit --resume runs/br-greedy       # continue an exploit run

Every evaluation is duplicate-deal matches against the target (eval.matches, Wilson 95% intervals) on deals no
training match is dealt. The run plays the rules the target was trained under (a checkpoint records them) unless
--rules, or the config, names others. The run directory is train's, plus exploit.png: the win rate against the
target over wall time, its interval shaded; a table of every evaluation is printed at the end (docs/EVALUATION.md,
"Exploitability").
"""

from __future__ import annotations

import argparse
import importlib

from hollywood_gin_env.support.imports import add_import_option, import_modules
from hollywood_gin_env.support.messages import ArgumentParser

#: How the program is typed where no caller says (the console command; `python train.py` passes its own).
PROG = "hollywood-gin train"
#: What `--help` says before the options: the program and its examples (this module's docstring, from its second
#: paragraph up to the exploit program's).
DESCRIPTION = __doc__.split("\n\n", 1)[1].split("\nTrain a best response", 1)[0].rstrip() + "\n"
#: How `hollywood-gin exploit` is typed where no caller says.
EXPLOIT_PROG = "hollywood-gin exploit"
#: What `hollywood-gin exploit --help` says before the options (this module's docstring, from its exploit part).
EXPLOIT_DESCRIPTION = "Train a best response" + __doc__.split("\nTrain a best response", 1)[1]


#: The module that runs each program (its `run(args)`), imported once the command line is parsed: it imports torch.
PROGRAMS = {"train": "hollywood_gin_trainer.main", "exploit": "hollywood_gin_trainer.exploit"}


def run_command(name: str, argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run `hollywood-gin train` or `exploit` (`name`) as `prog`: its command line parsed first, so that `--help`
    and a bad option answer at once, without importing torch; then its program (PROGRAMS). The exit status."""
    exploit = name == "exploit"
    args = parse_exploit_args(argv, prog or EXPLOIT_PROG) if exploit else parse_args(argv, prog or PROG)
    return importlib.import_module(PROGRAMS[name]).run(args)


def parse_args(argv: list[str] | None = None, prog: str = PROG) -> argparse.Namespace:
    """The command line (DESCRIPTION); `prog` is the command as the user typed it, for usage and errors."""
    parser = ArgumentParser(prog=prog, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser)
    return finish_args(parser, argv, prog)


def parse_exploit_args(argv: list[str] | None = None, prog: str = EXPLOIT_PROG) -> argparse.Namespace:
    """The command line of `hollywood-gin exploit` (EXPLOIT_DESCRIPTION): TARGET, --init, --minutes, --updates and
    train's options."""
    parser = ArgumentParser(
        prog=prog, description=EXPLOIT_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "target",
        nargs="?",
        default=None,
        metavar="TARGET",
        help="the frozen agent to beat: bot, expert, greedy, random, checkpoint:PATH or NAME=SPEC (not with --resume)",
    )
    parser.add_argument(
        "--init",
        default="scratch",
        metavar="scratch|bot|checkpoint:PATH",
        help="where the best response starts: scratch (the config's warm start) or a policy's weights "
        "(default: scratch)",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="wall-clock budget, the warm start included and not cut short (train.max_minutes)",
    )
    parser.add_argument("--updates", type=int, default=None, help="PPO updates (train.updates)")
    add_run_options(parser)
    return finish_args(parser, argv, prog)


def finish_args(parser: argparse.ArgumentParser, argv: list[str] | None, prog: str) -> argparse.Namespace:
    """The parsed command line, with the command as typed (`prog`) kept for the errors and "resume with" lines; the
    `--import` modules imported (before the run is planned, so the agents and networks they define are known)."""
    args = parser.parse_args(argv)
    args.prog = prog
    try:
        import_modules(args.imports)
    except ValueError as error:
        parser.error(str(error))
    return args


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of every training program: the config, the run directory, the device, resuming, stopping."""
    parser.add_argument(
        "--config",
        default=None,
        help="TOML config (default: none, the shipped recipe, the values configs/default.toml documents)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a config field, e.g. --set train.lr=1e-4 (repeatable)",
    )
    parser.add_argument(
        "--rules",
        nargs="+",
        default=None,
        metavar="PRESET|KEY=VALUE",
        help="the rules to play, in place of the config's [rules]: a preset's name first (hollywood, eaai, openspiel, "
        "classic), then keys that change it, e.g. --rules eaai knock_limit=5 (docs/RULES.md)",
    )
    parser.add_argument("--seed", type=int, default=None, help="shorthand for --set train.seed=N")
    add_import_option(parser, "your agents', networks' or estimators' code; Ray rollout workers import it too")
    parser.add_argument("--run-dir", default=None, help="output folder (default: runs/<config>-seed<N>-<time>)")
    parser.add_argument("--device", default="cpu", help="torch device: cpu, cuda or cuda:N (default: cpu)")
    parser.add_argument(
        "--resume", default=None, metavar="RUN_DIR|PATH", help="continue a run from its last.safetensors"
    )
    parser.add_argument(
        "--stop-after",
        type=int,
        default=None,
        metavar="UPDATES",
        help="save the training state and stop after this many more updates (as Ctrl-C does; 0: after the warm start)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="start a new run in a directory that holds one, removing its files and logs",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="train.workers > 1: join this Ray cluster (default: start Ray here)",
    )

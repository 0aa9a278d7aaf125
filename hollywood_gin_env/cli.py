"""The `hollywood-gin` command: `hollywood-gin play|evaluate|train|exploit [OPTIONS]`, also `python -m
hollywood_gin_env ...`.

Each subcommand is its program's own command line, with its own `--help`: `play` (hollywood_gin_env.play.terminal),
`evaluate` (hollywood_gin_env.evaluation.evaluate), `train` (hollywood_gin_trainer.main) and `exploit`
(hollywood_gin_trainer.exploit, a best response against a frozen agent); the last two need the [train] extra, and
their `--help` works without it. In a checkout, `python play.py`, `python evaluate.py`, `python train.py` and
`python exploit.py` are the same four programs. A program is imported only when its subcommand runs, so `play` and
`evaluate` start without torch.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from importlib.metadata import PackageNotFoundError, version

from hollywood_gin_env.support.messages import install_hint, shown_value

#: subcommand -> (module whose main(argv, prog) runs it, one line on what it does)
COMMANDS = {
    "play": (
        "hollywood_gin_env.play.terminal",
        "play a match against the shipped bot, in the terminal or a browser (--web)",
    ),
    "evaluate": ("hollywood_gin_env.evaluation.evaluate", "benchmark agents against each other on duplicate deals"),
    "train": ("hollywood_gin_trainer.main", "train a bot by self-play (needs the [train] extra)"),
    "exploit": ("hollywood_gin_trainer.exploit", "train a best response against a frozen agent (the [train] extra)"),
}
#: the subcommands that train (they need the [train] extra)
TRAINING_COMMANDS = ("train", "exploit")
#: what they import that the core install lacks (the [train] extra brings them)
TRAIN_NEEDS = ("torch", "tensorboard")
HELP_FLAGS = ("-h", "--help")
#: a command's documentation where it is not its program's module (train's imports torch; its options do not)
DOC_MODULES = {"train": "hollywood_gin_trainer.options", "exploit": "hollywood_gin_trainer.options"}


def usage(prog: str) -> str:
    """The command's help: its subcommands, one line each."""
    width = max(map(len, COMMANDS))
    lines = [
        f"usage: {prog} {{{','.join(COMMANDS)}}} [OPTIONS]",
        "",
        "Hollywood Gin: play the shipped bot, benchmark agents, train a bot, train a best response to one.",
        "",
        "commands:",
        *(f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()),
        "",
        f"{prog} COMMAND --help shows a command's options; its documentation is installed with the package:",
        *(f"  python -m pydoc {doc}" for doc in dict.fromkeys(DOC_MODULES.get(n, m) for n, (m, _) in COMMANDS.items())),
    ]
    return "\n".join(lines)


def missing_for_training() -> list[str]:
    """The packages `train` needs that are not installed."""
    return [name for name in TRAIN_NEEDS if importlib.util.find_spec(name) is None]


def training_unavailable(prog: str, name: str, argv: list[str], missing: list[str]) -> int:
    """`train` or `exploit` without the extra: the options if asked for (--help), then what to install; 0 after
    help, else 2."""
    asked_for_help = any(arg in HELP_FLAGS for arg in argv)
    if asked_for_help:
        from hollywood_gin_trainer.options import parse_args, parse_exploit_args  # argparse only: no torch

        parse = parse_exploit_args if name == "exploit" else parse_args
        with contextlib.suppress(SystemExit):  # argparse exits after the help
            parse(["--help"], prog)
    needs = f"training needs {' and '.join(missing)}, not installed: {install_hint('train')}"
    print(f"{prog}: {'to run it' if asked_for_help else 'error'}: {needs}", file=sys.stderr)
    return 0 if asked_for_help else 2


def package_version() -> str:
    """The installed distribution's version, or "unknown" (a checkout that was never installed)."""
    try:
        return version("hollywood-gin")
    except PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None, prog: str = "hollywood-gin") -> int:
    """Run the subcommand argv names with the rest of argv; returns the exit status (2: a usage error)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(usage(prog))
        return 0
    if argv[:1] == ["--version"]:
        print(f"{prog} {package_version()}")
        return 0
    if not argv:
        print(usage(prog), file=sys.stderr)
        print(f"{prog}: error: name a command: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"{prog}: error: unknown command {shown_value(name)}: use one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    if name in TRAINING_COMMANDS and (missing := missing_for_training()):
        return training_unavailable(f"{prog} {name}", name, rest, missing)
    try:
        if name in TRAINING_COMMANDS:  # parsed before the program (torch) is imported: --help answers at once
            from hollywood_gin_trainer.options import run_command

            return run_command(name, rest, prog=f"{prog} {name}")
        program = importlib.import_module(COMMANDS[name][0])
        return program.main(rest, prog=f"{prog} {name}")
    except KeyboardInterrupt:  # Ctrl-C while importing; each program handles it during its run
        print("interrupted", file=sys.stderr)
        return 130

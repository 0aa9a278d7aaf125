"""The `hollywood-gin` command: `hollywood-gin play|evaluate|train [OPTIONS]`, also `python -m hollywood_gin_env ...`.

Each subcommand is its program's own command line, with its own `--help`: `play` (hollywood_gin_env.play.terminal),
`evaluate` (hollywood_gin_env.evaluation.evaluate) and `train` (hollywood_gin_trainer.main, which needs the [train]
extra). In a checkout, `python play.py`, `python evaluate.py` and `python train.py` are the same three programs. A
program is imported only when its subcommand runs, so `play` and `evaluate` start without torch.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from importlib.metadata import PackageNotFoundError, version

#: subcommand -> (module whose main(argv, prog) runs it, one line on what it does)
COMMANDS = {
    "play": (
        "hollywood_gin_env.play.terminal",
        "play a match against the shipped bot, in the terminal or a browser (--web)",
    ),
    "evaluate": ("hollywood_gin_env.evaluation.evaluate", "benchmark agents against each other on duplicate deals"),
    "train": ("hollywood_gin_trainer.main", "train a bot by self-play (needs the [train] extra)"),
}
#: what `train` imports that the core install lacks, and the extra that brings it
TRAIN_NEEDS = ("torch", "tensorboard")
TRAIN_EXTRA = 'install the [train] extra (in a checkout: python -m pip install ".[train]")'


def usage(prog: str) -> str:
    """The command's help: its subcommands, one line each."""
    width = max(map(len, COMMANDS))
    lines = [
        f"usage: {prog} {{{','.join(COMMANDS)}}} [OPTIONS]",
        "",
        "Hollywood Gin: play the shipped bot, benchmark agents, train a bot.",
        "",
        "commands:",
        *(f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()),
        "",
        f"{prog} COMMAND --help shows a command's options. See README.md and docs/.",
    ]
    return "\n".join(lines)


def missing_for_training() -> list[str]:
    """The packages `train` needs that are not installed."""
    return [name for name in TRAIN_NEEDS if importlib.util.find_spec(name) is None]


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
        print(f"{prog}: error: unknown command {name!r}: use one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    if name == "train" and (missing := missing_for_training()):
        print(
            f"{prog} train: error: training needs {' and '.join(missing)}, not installed: {TRAIN_EXTRA}",
            file=sys.stderr,
        )
        return 2
    try:
        program = importlib.import_module(COMMANDS[name][0])
        return program.main(rest, prog=f"{prog} {name}")
    except KeyboardInterrupt:  # Ctrl-C while importing; each program handles it during its run
        print("interrupted", file=sys.stderr)
        return 130

"""`python train.py`: the trainer, `hollywood_gin_trainer.main` (the same program as `hollywood-gin train`; its command
line is parsed before torch is imported, so `--help` answers at once)."""

from hollywood_gin_trainer.options import run_command


def main(argv: list[str] | None = None, prog: str = "python train.py") -> int:
    """The trainer on `argv` (default: the command line) as `prog`; the exit status."""
    return run_command("train", argv, prog)


if __name__ == "__main__":
    raise SystemExit(main())

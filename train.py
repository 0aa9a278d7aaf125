"""`python train.py`: the trainer, `hollywood_gin_trainer.main` (the same program as `hollywood-gin train`; its command
line is parsed before torch is imported, so `--help` answers at once)."""

from hollywood_gin_trainer.options import run_command

if __name__ == "__main__":
    raise SystemExit(run_command("train", prog="python train.py"))

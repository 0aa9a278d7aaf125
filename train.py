"""`python train.py`: the trainer, `hollywood_gin_trainer.main` (the same program as `hollywood-gin train`)."""

from hollywood_gin_trainer.main import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python train.py"))

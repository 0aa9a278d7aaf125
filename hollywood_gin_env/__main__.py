"""`python -m hollywood_gin_env play|evaluate|train [OPTIONS]`: the `hollywood-gin` command (hollywood_gin_env.cli)."""

from hollywood_gin_env.cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python -m hollywood_gin_env"))

"""`python play.py`: play the bot, `hollywood_gin_env.play.terminal` (the same program as `hollywood-gin play`)."""

import sys

from hollywood_gin_env.play.terminal import main

if __name__ == "__main__":
    sys.exit(main(prog="python play.py"))

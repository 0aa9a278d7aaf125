"""Play a Hollywood Gin match (the whole series) against a bot in the terminal: `python play.py`.

See README.md, "Play against a bot". The table, the words and the command parser live in the library
(hollywood_gin_env.render, .narrate, .commands, .hints); this file is the loop around them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

from rich.console import Console
from rich.text import Text

from hollywood_gin_env import Rules
from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.atomic import atomic_write_text
from hollywood_gin_env.commands import HELP, CommandError, parse_command
from hollywood_gin_env.game import Game
from hollywood_gin_env.hints import hint_lines
from hollywood_gin_env.narrate import hand_end_lines, hand_events, move_sentences
from hollywood_gin_env.render import sheet_text, table

CHECKPOINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoints", "hollywood-ppo.pt")
FILE_FORMAT = "hollywood-gin-match"


def default_opponent() -> str:
    """The shipped checkpoint when it is there, else the expert heuristic."""
    return f"checkpoint:{CHECKPOINT}" if os.path.isfile(CHECKPOINT) else "expert"


def save_match(path: str, game: Game, human: int, opponent: str) -> None:
    """Write the match (its engine event log, the human's seat, the opponent) to path atomically."""
    data = {"format": FILE_FORMAT, "version": 1, "human_seat": human, "opponent": opponent, "events": game.events}
    atomic_write_text(path, json.dumps(data))


def load_match(path: str) -> tuple[Game, int, str]:
    """(game replayed from its event log, human seat, opponent spec) of a saved match; ValueError if it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read the saved match {path}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT or data.get("human_seat") not in (0, 1):
        raise ValueError(f"{path} is not a match saved by play.py (expected format {FILE_FORMAT!r})")
    try:
        game = Game.replay(data["events"])
    except (KeyError, TypeError, ValueError) as error:  # a hand-edited or damaged log
        raise ValueError(f"{path} holds no replayable match: {error!r}") from None
    return game, data["human_seat"], str(data.get("opponent", "expert"))


class Table:
    """One match between the human at seat `human` and an agent, shown on a rich console."""

    def __init__(self, game: Game, human: int, opponent: str, console: Console, save: str | None) -> None:
        self.game, self.human, self.opponent, self.console, self.save_path = game, human, opponent, console, save
        self.agent = load_agent(opponent)
        self.names = ("You", "Bot") if human == 0 else ("Bot", "You")
        self.shown = len(game.events)
        self.drawn_at = -1  # the event count when the table was last shown: redraw it only after a move

    def save(self) -> bool:
        """Save the match if a save file was given; False (with the reason shown) if that failed."""
        if self.save_path:
            try:
                save_match(self.save_path, self.game, self.human, self.opponent)
            except OSError as error:
                self.console.print(f"Could not save the match to {self.save_path}: {error}", style="red")
                return False
        return True

    def news(self) -> None:
        """Print the end of every hand that ended since the last call."""
        events = self.game.events
        for i in range(self.shown, len(events)):
            if events[i]["type"] == "hand_result":
                hand = next(e["hand"] for e in reversed(events[:i]) if e["type"] == "deal")
                self.console.rule(f"Hand {hand} ends")
                for line in hand_end_lines(events, i, self.game.rules, self.names, self.human):
                    self.console.print(line)
        self.shown = len(events)

    def bot_move(self) -> None:
        """The bot's action, reseeded per decision so a resumed match plays on exactly as an unbroken one."""
        if hasattr(self.agent, "reset"):
            self.agent.reset(random.Random(f"{self.game.seed}:{len(self.game.actions_played())}").getrandbits(63))
        obs = self.game.observation(1 - self.human)
        self.game.step(int(self.agent.act(obs["observation"][None], obs["action_mask"][None])[0]))
        self.save()

    def command(self, text: str) -> bool:
        """Carry out one typed command; False when the player asked to quit."""
        try:
            command = parse_command(text, self.game, self.human)
        except CommandError as error:
            self.console.print(str(error), style="yellow")
            return True
        if command.kind == "play":
            self.game.step(command.action)
            self.save()  # after every move, so a crash loses nothing
        elif command.kind == "hint":
            for line in hint_lines(self.game, self.human, self.agent):
                self.console.print(line)
        elif command.kind == "sheet":
            self.console.print(sheet_text(self.game, self.names))
        elif command.kind == "log":
            moves = move_sentences(hand_events(self.game.events), self.human, self.names)
            self.console.print(Text("\n").join(moves) if moves else "No moves yet this hand.")
        elif command.kind == "help":
            self.console.print(HELP)
        return command.kind != "quit"

    def run(self) -> int:
        """Play until the match ends or the player leaves."""
        try:
            while True:
                self.news()
                if self.game.done:
                    self.console.print(table(self.game, self.human, self.names))
                    return 0
                if self.game.current_player != self.human:
                    self.bot_move()
                    continue
                if self.drawn_at != len(self.game.events):
                    self.console.print(table(self.game, self.human, self.names))
                    self.drawn_at = len(self.game.events)
                if not self.command(self.console.input("> ")):
                    return self.leave()
        except (EOFError, KeyboardInterrupt):
            self.console.print()
            return self.leave()

    def leave(self) -> int:
        """Leave mid-match: save to the save file, or offer to save (again, if saving failed)."""
        while True:
            if not self.save_path:
                try:
                    name = self.console.input("Save the match to a file before leaving? (name, or Enter: no) ")
                except (EOFError, KeyboardInterrupt):
                    name = ""
                self.save_path = name.strip() or None
                if not self.save_path:
                    break
            if self.save():
                self.console.print(f"Saved. Resume with: python play.py --resume {self.save_path}")
                break
            self.save_path = None
        self.console.print("Bye.")
        return 0


def replay(path: str, console: Console) -> int:
    """Step through a saved match showing both hands: Enter for the next move, q to stop."""
    final, human, _ = load_match(path)
    view = Table(Game.replay(final.events[:1]), human, "random", console, None)
    actions = final.actions_played()
    for step, action in enumerate(actions):
        console.print(table(view.game, None, view.names))
        try:
            if console.input(f"({step + 1}/{len(actions)}) Enter: next move, q: stop > ").strip().lower() == "q":
                return 0
        except (EOFError, KeyboardInterrupt):
            return 0
        view.game.step(action)
        view.news()
    console.print(table(view.game, None, view.names))
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog="See README.md, 'Play against a bot'.")
    parser.add_argument("--opponent", help="checkpoint:PATH, expert, greedy or random (default: the shipped "
                        "checkpoints/hollywood-ppo.pt if present, else expert)")  # fmt: skip
    parser.add_argument("--seed", type=int, help="seeds the deals (default: a random seed)")
    parser.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options, as evaluate.py")
    parser.add_argument("--seat", choices=("0", "1", "random"), default="random", help="your seat (default random)")
    parser.add_argument("--deck", help="fix the first deal: 52 cards (README, 'Play against a bot')")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colours")
    parser.add_argument("--save", metavar="PATH", help="save the match to PATH after every move (atomic)")
    parser.add_argument("--resume", metavar="PATH", help="continue a saved match (and keep saving to it)")
    parser.add_argument("--replay", metavar="PATH", help="step through a saved match, both hands shown")
    args = parser.parse_args(argv)
    if (args.resume or args.replay) and (args.seed is not None or args.rules or args.deck or args.seat != "random"):
        parser.error("--resume and --replay take the seed, rules, deck and seat from the saved file")
    if args.resume and args.replay:
        parser.error("use --resume or --replay, not both")
    return args


def main(argv: list[str] | None = None) -> int:
    """The `python play.py` command line."""
    args = parse_args(argv)
    console = Console(color_system=None if args.no_color else "auto", highlight=False, markup=False, soft_wrap=True)
    try:
        if args.replay:
            return replay(args.replay, console)
        if args.resume:
            game, human, opponent = load_match(args.resume)
            opponent = args.opponent or opponent
        else:
            game = Game(Rules.from_strings(args.rules), seed=args.seed, deck=args.deck)
            human = random.Random(game.seed).randrange(2) if args.seat == "random" else int(args.seat)
            opponent = args.opponent or default_opponent()
        session = Table(game, human, opponent, console, args.save or args.resume)
    except (ValueError, FileNotFoundError) as error:
        console.print(f"play.py: error: {error}", style="red")
        return 2
    return session.run() if session.save() else 2


if __name__ == "__main__":
    sys.exit(main())

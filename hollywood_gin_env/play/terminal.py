"""Play a Hollywood Gin match (the whole series) against a bot: `hollywood-gin play` (terminal) or `--web` (browser).

The same program is `python -m hollywood_gin_env play` and, in a checkout, `python play.py`. See docs/PLAY.md. The
match, the bot, the save file (hollywood_gin_env.play.session), the renderer, the words and the command parser live
in the library; this module is the terminal loop around them, and `--web` serves the page of
hollywood_gin_env.play.web over the same session.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from rich.console import Console
from rich.text import Text

from hollywood_gin_env import Rules
from hollywood_gin_env.agents import BOT_NAME
from hollywood_gin_env.display.render import position_text, sheet_text
from hollywood_gin_env.display.words import hand_end_lines, hand_events, move_sentences
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.commands import HELP, CommandError, parse_command
from hollywood_gin_env.play.session import FILE_FORMAT, Session, choose_seat, load_match, save_match

#: How the program is typed where no caller says (the console command; `python play.py` passes its own).
PROG = "hollywood-gin play"
__all__ = ["FILE_FORMAT", "PROG", "Terminal", "default_opponent", "load_match", "main", "save_match"]


def default_opponent(prog: str = PROG) -> str:
    """The shipped bot ("bot", package data) when torch is installed, else the expert heuristic (and one line why)."""
    if importlib.util.find_spec("torch") is None:
        print(
            f"{prog}: torch is not installed, so the shipped bot cannot play: you play the expert heuristic "
            '(for the bot, install the [torch] extra; in a checkout: python -m pip install ".[torch]")',
            file=sys.stderr,
        )
        return "expert"
    return BOT_NAME


def opening_line(session: Session) -> str:
    """Whom the human plays, from which seat, and where the commands are."""
    game, human = session.game, session.human
    if game.hand_number > 1 or len(game.actions_played()):
        where = f"resuming hand {game.hand_number}"
    else:
        where = "you deal first" if game.dealer == human else "the bot deals first"
    return (
        f"You play {session.opponent_label} from seat {human} ({where}). Type help for the commands; "
        "hint asks the bot what it would do."
    )


class Terminal:
    """The terminal front end of a `Session`: shows the match on a rich console and reads typed commands."""

    def __init__(self, session: Session, console: Console, pause: bool = True, prog: str = PROG) -> None:
        self.session, self.game, self.console = session, session.game, console
        self.prog = prog  # the command as typed, for the "Resume with" line
        self.pause = pause  # wait for Enter after a hand's end, so its result is read before the next deal
        self.names = session.names
        self.shown = len(self.game.events)
        self.drawn_at = -1  # the event count when the match was last shown: redraw it only after a move

    def save(self) -> bool:
        """Save the match if a save file was given; False (with the reason shown) if that failed."""
        if not self.session.save():
            self.console.print(self.session.save_error, style="red")
            return False
        return True

    def news(self) -> None:
        """Print the end of every hand that ended since the last call."""
        events = self.game.events
        for i in range(self.shown, len(events)):
            if events[i]["type"] == "hand_result":
                hand = next(e["hand"] for e in reversed(events[:i]) if e["type"] == "deal")
                self.console.rule(f"Hand {hand} ends")
                for line in hand_end_lines(events, i, self.game.rules, self.names, self.session.human):
                    self.console.print(line)
                self.shown = i + 1
                if self.pause and not self.game.done:
                    self.console.input("Enter: deal the next hand ")
        self.shown = len(events)

    def moved(self) -> None:
        """After a move: say so if it could not be saved."""
        if self.session.save_error:
            self.console.print(self.session.save_error, style="red")

    def command(self, text: str) -> bool:
        """Carry out one typed command; False when the player asked to quit."""
        human = self.session.human
        try:
            command = parse_command(text, self.game, human)
        except CommandError as error:
            self.console.print(str(error), style="yellow")
            return True
        if command.kind == "play":
            self.session.play(command.action)
            self.moved()
        elif command.kind == "hint":
            for line in self.session.hint():
                self.console.print(line)
        elif command.kind == "sheet":
            self.console.print(sheet_text(self.game.position(), self.names, human))
        elif command.kind == "log":
            moves = move_sentences(hand_events(self.game.events), human, self.names)
            self.console.print(Text("\n").join(moves) if moves else "No moves yet this hand.")
        elif command.kind == "help":
            self.console.print(HELP)
        return command.kind != "quit"

    def run(self) -> int:
        """Play until the match ends or the player leaves."""
        self.console.print(opening_line(self.session))
        try:
            while True:
                self.news()
                if self.game.done:
                    self.console.print(position_text(self.game.position(), self.session.human, self.names))
                    return 0
                if self.game.current_player != self.session.human:
                    self.session.bot_move()
                    self.moved()
                    continue
                if self.drawn_at != len(self.game.events):
                    self.console.print(position_text(self.game.position(), self.session.human, self.names))
                    self.drawn_at = len(self.game.events)
                if not self.command(self.console.input("> ")):
                    return self.leave()
        except (EOFError, KeyboardInterrupt):
            self.console.print()
            return self.leave()

    def leave(self) -> int:
        """Leave mid-match: save to the save file, or offer to save (again, if saving failed)."""
        while True:
            if not self.session.save_path:
                try:
                    name = self.console.input("Save the match to a file before leaving? (name, or Enter: no) ")
                except (EOFError, KeyboardInterrupt):
                    name = ""
                self.session.save_path = name.strip() or None
                if not self.session.save_path:
                    break
            if self.save():
                self.console.print(f"Saved. Resume with: {self.prog} --resume {self.session.save_path}")
                break
            self.session.save_path = None
        self.console.print("Bye.")
        return 0


def replay(path: str, console: Console) -> int:
    """Step through a saved match showing both hands: Enter for the next move, q to stop."""
    final, human, _ = load_match(path)
    view = Terminal(Session(Game.replay(final.events[:1]), human, "random"), console, pause=False)
    actions = final.actions_played()
    for step, action in enumerate(actions):
        console.print(position_text(view.game.position(), None, view.names))
        try:
            if console.input(f"({step + 1}/{len(actions)}) Enter: next move, q: stop > ").strip().lower() == "q":
                return 0
        except (EOFError, KeyboardInterrupt):
            return 0
        view.game.step(action)
        view.news()
    console.print(position_text(view.game.position(), None, view.names))
    return 0


def parse_args(argv: list[str] | None, prog: str = PROG) -> argparse.Namespace:
    """The command line; `prog` is the command as the user typed it, for usage and errors."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0], epilog="See docs/PLAY.md.")
    parser.add_argument(
        "--opponent",
        help="bot (the shipped bot), checkpoint:PATH, expert, greedy or random (default: "
        "bot where torch is installed, else expert)",
    )
    parser.add_argument("--seed", type=int, help="seeds the deals (default: a random seed)")
    parser.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options, as evaluate.py")
    parser.add_argument("--seat", choices=("0", "1", "random"), default="random", help="your seat (default random)")
    parser.add_argument("--deck", help="fix the first deal: 52 cards (docs/PLAY.md)")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colours")
    parser.add_argument("--save", metavar="PATH", help="save the match to PATH after every move (atomic)")
    parser.add_argument(
        "--overwrite", action="store_true", help="with --save: replace an existing file at PATH (default: refuse it)"
    )
    parser.add_argument("--resume", metavar="PATH", help="continue a saved match (and keep saving to it)")
    parser.add_argument("--replay", metavar="PATH", help="step through a saved match, both hands shown")
    web = parser.add_argument_group("the browser (--web; needs the [web] extra, docs/PLAY.md)")
    web.add_argument("--web", action="store_true", help="play in the browser: serve the page and open it")
    web.add_argument("--host", help="address to listen on (default 127.0.0.1, this machine only)")
    web.add_argument("--port", type=int, help="port to listen on (default: a free one, printed)")
    web.add_argument("--no-browser", action="store_true", help="print the page's address, do not open a browser")
    args = parser.parse_args(argv)
    args.prog = prog
    if (args.resume or args.replay) and (args.seed is not None or args.rules or args.deck or args.seat != "random"):
        parser.error("--resume and --replay take the seed, rules, deck and seat from the saved file")
    if args.overwrite and not args.save:
        parser.error("--overwrite goes with --save")
    if args.resume and args.replay:
        parser.error("use --resume or --replay, not both")
    if not args.web and (args.host is not None or args.port is not None or args.no_browser):
        parser.error("--host, --port and --no-browser go with --web")
    if args.web and args.replay:
        parser.error("--replay runs in the terminal only")
    if args.port is not None and not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not allowed: use 0 (a free port) to 65535")
    return args


def check_save_target(args: argparse.Namespace) -> None:
    """ValueError if --save names an existing regular file that is not the one resumed and --overwrite was not given
    (a symlink, a device or a directory is refused by the save itself, whatever --overwrite says)."""
    path = args.save
    if not path or args.overwrite or os.path.islink(path) or not os.path.isfile(path):
        return
    if args.resume and os.path.exists(args.resume) and os.path.samefile(path, args.resume):
        return
    raise ValueError(
        f"{path} already exists (an earlier match?): resume it with --resume {path}, save to another file, "
        "or add --overwrite to replace it"
    )


def first_session(args: argparse.Namespace, web: bool) -> Session:
    """The match the command line asks for: resumed from its file, or new."""
    if args.resume:
        game, human, opponent = load_match(args.resume)
        opponent = args.opponent or opponent
    else:
        game = Game(Rules.from_strings(args.rules), seed=args.seed, deck=args.deck)
        human = choose_seat(args.seat, game.seed)
        opponent = args.opponent or default_opponent(args.prog)
    return Session(game, human, opponent, args.save or args.resume, hold_hand_ends=web)


def serve_web(args: argparse.Namespace, session: Session, console: Console) -> int:
    """`--web`: the page for this match (and the new ones started from it) until Ctrl-C."""
    try:
        from hollywood_gin_env.play.web.matches import Matches, session_maker
        from hollywood_gin_env.play.web.server import serve
    except ImportError as error:
        console.print(
            f'{args.prog}: error: --web needs the [web] extra ({error}); in a checkout: python -m pip install ".[web]"',
            style="red",
        )
        return 2
    try:
        return serve(
            Matches(session_maker(session, args.seat)),
            args.host or "127.0.0.1",
            args.port or 0,
            not args.no_browser,
            say=console.print,
        )
    except OSError as error:
        console.print(f"{args.prog}: error: cannot listen on {args.host or '127.0.0.1'}:{args.port or 0}: {error}")
        return 2
    except KeyboardInterrupt:
        return 0


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """The `hollywood-gin play` command line (`prog`: how it was typed); returns the exit status."""
    args = parse_args(argv, prog)
    # soft_wrap off: rich breaks long lines between words at the terminal's width, not the terminal mid-word
    console = Console(color_system=None if args.no_color else "auto", highlight=False, markup=False)
    try:
        if args.replay:
            return replay(args.replay, console)
        check_save_target(args)
        session = first_session(args, args.web)
    except (ValueError, FileNotFoundError) as error:
        console.print(f"{args.prog}: error: {error}", style="red")
        return 2
    if not session.save():
        console.print(session.save_error, style="red")
        return 2
    return serve_web(args, session, console) if args.web else Terminal(session, console, prog=args.prog).run()


if __name__ == "__main__":  # python -m hollywood_gin_env.play.terminal
    sys.exit(main(prog="python -m hollywood_gin_env.play.terminal"))

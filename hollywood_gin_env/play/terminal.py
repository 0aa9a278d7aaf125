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
import shlex
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from hollywood_gin_env import Rules
from hollywood_gin_env.agents import BOT_NAME, load_agent, rules_in_play
from hollywood_gin_env.agents.loading import shipped_bot_for
from hollywood_gin_env.display.render import position_text, sheet_text
from hollywood_gin_env.display.words import hand_end_lines, hand_log
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.commands import HELP, CommandError, is_quit, parse_command
from hollywood_gin_env.play.hints import agent_label
from hollywood_gin_env.play.session import FILE_FORMAT, Session, choose_seat, load_match, player_names, save_match
from hollywood_gin_env.support.atomic import AtomicWriteError, check_write_target
from hollywood_gin_env.support.imports import add_import_option, import_modules
from hollywood_gin_env.support.messages import ArgumentParser, install_hint, printable_message, shown_value

#: How the program is typed where no caller says (the console command; `python play.py` passes its own).
PROG = "hollywood-gin play"
__all__ = ["FILE_FORMAT", "PROG", "Terminal", "default_opponent", "load_match", "main", "save_match"]
YES, NO = ("y", "yes"), ("", "n", "no")  # answers to a yes/no question (Enter: no)


class TerminalConsole(Console):
    """rich's console, printing every string it is given with control characters escaped (a file name, a path or a
    saved opponent cannot retitle or clear the terminal: hollywood_gin_env.support.messages)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """The string as rich text, its control characters (but line breaks and tabs) escaped."""
        return super().render_str(printable_message(text), **kwargs)


def default_opponent(prog: str = PROG, rules: Rules | None = None) -> str:
    """The shipped bot trained under `rules` (`bot-eaai` for the eaai rules), else "bot", when torch is installed;
    else the expert heuristic (and one line why)."""
    if importlib.util.find_spec("torch") is None:
        print(
            f"{prog}: torch is not installed, so the shipped bot cannot play: you play the expert heuristic "
            f"(for the bot: {install_hint('torch')})",
            file=sys.stderr,
        )
        return "expert"
    return shipped_bot_for(rules) or BOT_NAME


def opening_line(session: Session) -> str:
    """Whom the human plays, who deals and plays first (or which hand resumes), and where the commands are."""
    game, human, bot = session.game, session.human, session.opponent_name
    if game.hand_number > 1 or len(game.actions_played()):
        where = f"resuming hand {game.hand_number}"
    elif game.dealer == human:
        where = f"you deal the first hand, so {bot} plays first"
    else:
        where = f"{bot} deals the first hand, so you play first"
    return (
        f"You play {session.opponent_label}: {where}, under the {game.rules.describe()} rules. Type help for the "
        f"commands; hint shows what {session.opponent_label} would do."
    )


class Terminal:
    """The terminal front end of a `Session`: shows the match on a rich console and reads typed commands."""

    def __init__(
        self,
        session: Session,
        console: Console,
        pause: bool = True,
        prog: str = PROG,
        names: tuple[str, str] | None = None,
    ) -> None:
        self.session, self.game, self.console = session, session.game, console
        self.prog = prog  # the command as typed, for the "Resume with" line
        self.pause = pause  # wait for Enter after a hand's end, so its result is read before the next deal
        self.names = names or session.names
        self.shown = len(self.game.events)
        self.drawn_at = -1  # the event count when the match was last shown: redraw it only after a move

    def save(self) -> bool:
        """Save the match if a save file was given; False (with the reason shown) if that failed."""
        if not self.session.save():
            self.console.print(self.session.save_error, style="red")
            return False
        return True

    def news(self) -> bool:
        """Print the end of every hand that ended since the last call; False if the player typed quit where it waits
        for Enter before the next deal."""
        events = self.game.events
        for i in range(self.shown, len(events)):
            if events[i]["type"] == "hand_result":
                hand = next(e["hand"] for e in reversed(events[:i]) if e["type"] == "deal")
                self.console.rule(f"Hand {hand} ends")
                for line in hand_end_lines(events, i, self.game.rules, self.names, self.session.human):
                    self.console.print(line)
                self.shown = i + 1
                if self.pause and not self.game.done:
                    answer = self.console.input("Enter: deal the next hand (quit: leave) ")
                    if is_quit(answer):
                        self.shown = len(events)
                        return False
        self.shown = len(events)
        return True

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
            self.console.print(Text("\n").join(hand_log(self.game.events, human, self.names)))
        elif command.kind == "help":
            self.console.print(HELP)
        return command.kind != "quit"

    def run(self) -> int:
        """Play until the match ends or the player leaves."""
        self.console.print(opening_line(self.session))
        try:
            while True:
                if not self.news():
                    return self.leave()
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
                self.session.save_path = self.new_save_file()
                if not self.session.save_path:
                    break
            if self.save():
                resume = f"{self.prog} --resume {shlex.quote(self.session.save_path)}"
                self.console.print(f"Saved. Resume with: {resume}", soft_wrap=True)
                break
            self.session.save_path = None
        self.console.print("Bye.")
        return 0

    def ask(self, question: str) -> str:
        """The player's answer, stripped; "" after Ctrl-C or Ctrl-D."""
        try:
            return self.console.input(question).strip()
        except (EOFError, KeyboardInterrupt):
            return ""

    def ask_yes(self, question: str) -> bool:
        """True if the player answers y or yes, False for n, no or Enter; anything else asks again."""
        while True:
            answer = self.ask(f"{question} (y/N) ").lower()
            if answer in YES or answer in NO:
                return answer in YES
            self.console.print(f"Answer y (yes) or n (no), not {shown_value(answer)}.")

    def new_save_file(self) -> str | None:
        """A file to save the match to, asked for; None if the player declines. An existing file is never named:
        the player is asked for another (as --save refuses one)."""
        if not self.ask_yes("Save the match to a file before leaving?"):
            return None
        while True:
            name = self.ask("File to save it to (Enter: leave without saving): ")
            if not name or not os.path.lexists(name):
                return name or None
            self.console.print(f"{name} already exists (an earlier match?): give another name.", soft_wrap=True)


def replay(path: str, console: Console) -> int:
    """Step through a saved match showing both hands, laid out as the player saw the match (their hand last, their
    score column first): Enter for the next move, q to stop."""
    final, human, opponent = load_match(path)
    names = player_names(human, agent_label(opponent))  # the saved opponent is named, never loaded
    view = Terminal(Session(Game.replay(final.events[:1]), human, "random"), console, pause=False, names=names)
    actions = final.actions_played()
    for step, action in enumerate(actions):
        console.print(position_text(view.game.position(), None, view.names, own_seat=human))
        try:
            if console.input(f"({step + 1}/{len(actions)}) Enter: next move, q: stop > ").strip().lower() == "q":
                return 0
        except (EOFError, KeyboardInterrupt):
            return 0
        view.game.step(action)
        view.news()
    console.print(position_text(view.game.position(), None, view.names, own_seat=human))
    return 0


def parse_args(argv: list[str] | None, prog: str = PROG) -> argparse.Namespace:
    """The command line; `prog` is the command as the user typed it, for usage and errors."""
    parser = ArgumentParser(prog=prog, description=__doc__.split("\n")[0], epilog="See docs/PLAY.md.")
    parser.add_argument(
        "--opponent",
        help="bot (the shipped bot), checkpoint:PATH, expert, greedy, random, module:attr (your agent class or "
        "@agent_factory function) or a name an installed package registers (default: bot where torch is installed, "
        "else expert)",
    )
    parser.add_argument("--seed", type=int, help="seeds the deals (default: a random seed)")
    parser.add_argument(
        "--rules",
        nargs="*",
        default=None,
        metavar="[PRESET] KEY=VALUE",
        help="the rules, as evaluate.py (default: the rules the opponent was trained under, hollywood if it records "
        "none)",
    )
    add_import_option(parser, "your agent's code; a saved match's opponent from a module resolves only so")
    parser.add_argument(
        "--seat",
        choices=("0", "1", "random"),
        default="random",
        help="your seat (default random); who deals first is drawn from the seed, and the first line says who",
    )
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
    if (args.resume or args.replay) and (
        args.seed is not None or args.rules is not None or args.deck or args.seat != "random"
    ):
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
    """ValueError if --save names what a save cannot replace (a symlink, a device, a directory: whatever --overwrite
    says), or an existing regular file that is not the one resumed and --overwrite was not given; checked before the
    match starts."""
    path = args.save
    if path:
        check_write_target(path)  # /dev/null would otherwise fail every save of the match
    if not path or args.overwrite or not os.path.isfile(path):
        return
    if args.resume and os.path.exists(args.resume) and os.path.samefile(path, args.resume):
        return
    raise ValueError(
        f"{path} already exists (an earlier match?): resume it with --resume {path}, save to another file, "
        "or add --overwrite to replace it"
    )


def fail(console: Console, message: str) -> None:
    """Print an error on one line (the terminal wraps it, so a command in it stays whole), in red."""
    console.print(message, style="red", soft_wrap=True)


def first_session(args: argparse.Namespace, web: bool) -> Session:
    """The match the command line asks for: resumed from its file (under its rules; the saved opponent never makes
    the program import a module), or new (under --rules, else the opponent's own rules)."""
    import_modules(args.imports)
    if args.resume:
        game, human, saved = load_match(args.resume)
        opponent = args.opponent or saved
        agent = load_agent(opponent, allow_import=args.opponent is not None)
    else:
        asked = None if args.rules is None else Rules.from_strings(args.rules)
        opponent = args.opponent or default_opponent(args.prog, asked)
        agent = load_agent(opponent)
        rules = rules_in_play([agent], asked)
        game = Game(rules, seed=args.seed, deck=args.deck)
        human = choose_seat(args.seat, game.seed)
    return Session(game, human, opponent, args.save or args.resume, hold_hand_ends=web, agent=agent)


def serve_web(args: argparse.Namespace, session: Session, console: Console) -> int:
    """`--web`: the page for this match (and the new ones started from it) until Ctrl-C."""
    try:
        from hollywood_gin_env.play.web.matches import Matches, session_maker
        from hollywood_gin_env.play.web.server import serve
    except ImportError as error:
        fail(console, f"{args.prog}: error: --web needs the [web] extra ({error}): {install_hint('web')}")
        return 2
    try:
        return serve(
            Matches(session_maker(session, args.seat)),
            args.host or "127.0.0.1",
            args.port or 0,
            not args.no_browser,
            say=lambda line: console.print(line, soft_wrap=True),
        )
    except OSError as error:
        fail(console, f"{args.prog}: error: cannot listen on {args.host or '127.0.0.1'}:{args.port or 0}: {error}")
        return 2
    except KeyboardInterrupt:
        return 0


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """The `hollywood-gin play` command line (`prog`: how it was typed); returns the exit status."""
    args = parse_args(argv, prog)
    # soft_wrap off: rich breaks long lines between words at the terminal's width, not the terminal mid-word
    console = TerminalConsole(color_system=None if args.no_color else "auto", highlight=False, markup=False)
    console.soft_wrap = not console.is_terminal  # a pipe or a file has no width: lines stay whole, not cut at 80
    try:
        if args.replay:
            return replay(args.replay, console)
        check_save_target(args)
        session = first_session(args, args.web)
    except (ValueError, FileNotFoundError, AtomicWriteError) as error:
        fail(console, f"{args.prog}: error: {error}")
        return 2
    if not session.save():
        fail(console, session.save_error)
        return 2
    return serve_web(args, session, console) if args.web else Terminal(session, console, prog=args.prog).run()


if __name__ == "__main__":  # python -m hollywood_gin_env.play.terminal
    sys.exit(main(prog="python -m hollywood_gin_env.play.terminal"))

"""A saved match is never replaced by accident: `play.py --save PATH` refuses an existing PATH unless `--overwrite`
(as train.py refuses an existing run), and the web server's later matches never write over an existing file."""

from __future__ import annotations

import io
import json

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play import terminal as play
from hollywood_gin_env.play.session import Session, load_match


def old_match(path) -> bytes:
    """An earlier match saved at path; its bytes."""
    play.save_match(str(path), Game(seed=9), 0, "greedy")
    return path.read_bytes()


def test_save_refuses_an_existing_file_without_overwrite(tmp_path, capsys):
    path = tmp_path / "old.json"
    before = old_match(path)
    assert play.main(["--save", str(path), "--opponent", "greedy", "--seed", "1"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert f"{path} already exists" in out and "--overwrite" in out and "--resume" in out, out
    assert path.read_bytes() == before


def test_overwrite_replaces_it_and_resume_keeps_saving_to_its_own_file(tmp_path, monkeypatch):
    path = tmp_path / "old.json"
    old_match(path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # Ctrl-D at the first prompt: leave, saving
    assert play.main(["--save", str(path), "--overwrite", "--opponent", "greedy", "--seed", "1"]) == 0
    assert load_match(str(path))[0].seed == 1
    assert play.main(["--resume", str(path)]) == 0  # resuming saves to the file it read


def test_resume_refuses_to_save_over_another_existing_file(tmp_path, capsys):
    path, other = tmp_path / "old.json", tmp_path / "other.json"
    old_match(path)
    before = old_match(other)
    assert play.main(["--resume", str(path), "--save", str(other)]) == 2
    assert other.read_bytes() == before and "already exists" in " ".join(capsys.readouterr().out.split())


def test_overwrite_without_save_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        play.parse_args(["--overwrite"])
    assert "--overwrite goes with --save" in capsys.readouterr().err


def test_web_matches_never_write_over_an_existing_file(tmp_path):
    """Match 2 of a server saving to match.json skips match-2.json when that file holds an earlier match."""
    from hollywood_gin_env.play.web.matches import Matches, session_maker

    first_path, taken = tmp_path / "match.json", tmp_path / "match-2.json"
    before = old_match(taken)
    first = Session(Game(seed=1), 0, "greedy", str(first_path), hold_hand_ends=True)
    first.save()
    matches = Matches(session_maker(first, "0"))
    ids = [matches.create() for _ in range(3)]
    paths = [matches.get(i).session.save_path for i in ids]
    assert paths == [str(first_path), str(tmp_path / "match-3.json"), str(tmp_path / "match-4.json")]
    assert taken.read_bytes() == before
    assert json.loads((tmp_path / "match-4.json").read_text())["human_seat"] == 0

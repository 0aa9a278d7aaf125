"""render_mode="rgb_array" draws the table as a picture, so SB3's make_vec_env and gymnasium's RecordVideo work."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)
from hollywood_gin_env.display.picture import (
    BOTTOM_HAND_Y,
    CARD_FACE,
    CARD_H,
    CARD_W,
    FELT,
    HEIGHT,
    HIGHLIGHT,
    RED,
    SHEET_X,
    TOP_HAND_Y,
    WIDTH,
    draw_position,
    hand_layout,
)
from hollywood_gin_env.engine.game import Game, position_of
from hollywood_gin_env.rules.cards import parse_cards

# RULES.md R3: the non-dealer (P1 here) gets deck[0], deck[2], ..., the dealer deck[1], deck[3], ...
P1_HAND = parse_cards("3H 4H 5H 8C 8D 8S JS QS KS 2C")  # three melds and 2C
P0_HAND = parse_cards("AS 7D 9H TC 2D 4S 6C QH KD 5S")
UPCARD = parse_cards("9C")


def fixed_deck() -> list[int]:
    rest = [c for c in range(52) if c not in P0_HAND + P1_HAND + UPCARD]
    return [c for pair in zip(P1_HAND, P0_HAND, strict=True) for c in pair] + UPCARD + rest


def _box(frame: np.ndarray, x: int, y: int) -> np.ndarray:
    return frame[y : y + CARD_H, x : x + CARD_W].reshape(-1, 3).astype(int)


def _is(pixels: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    return (np.abs(pixels - np.array(color)) <= 12).all(axis=1)


def test_frame_shape_and_content():
    """One frame: uint8[540, 960, 3]; every held card is drawn as a card face where the layout puts it, in its
    suit's colour; the felt between the rows; the score sheet panel changes with the score."""
    env = gym.make("HollywoodGin-v1", render_mode="rgb_array", learner_seat=0)
    env.reset(seed=0, options={"deck": fixed_deck(), "first_dealer": 0})
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (HEIGHT, WIDTH, 3) == (540, 960, 3)
    assert frame.dtype == np.uint8
    np.testing.assert_array_equal(frame, draw_position(position_of(env.unwrapped.engine, 0), learner_seat=0))

    game = Game(deck=fixed_deck(), first_dealer=0, seed=0)
    frame = draw_position(game.position(), learner_seat=0)
    for p, y, dealt in ((0, TOP_HAND_Y, P0_HAND), (1, BOTTOM_HAND_Y, P1_HAND)):
        placed, melds, deadwood = hand_layout(game.hand(p))
        assert sorted(card for card, _ in placed) == sorted(dealt)
        for card, x in placed:
            pixels = _box(frame, x, y)
            assert _is(pixels, CARD_FACE).mean() > 0.6  # a white card face, mostly
            red = _is(pixels, RED).sum()
            assert (red > 30) if card // 13 in (1, 2) else (red == 0), f"card {card} at x={x}"
        bars = _is(frame[y + CARD_H + 5, :SHEET_X].astype(int), HIGHLIGHT)  # one bar under each meld
        assert int(np.count_nonzero(np.diff(bars.astype(int)) == 1)) == len(melds) == (3 if p == 1 else 0)
    assert deadwood == parse_cards("2C")
    assert _is(frame[170:190, 20:700].reshape(-1, 3).astype(int), FELT).all()  # felt between the rows

    played, rng = Game(seed=1), np.random.default_rng(1)
    before = draw_position(played.position())
    while played.last_result is None or played.last_result["kind"] == "dead":  # play until a hand is scored
        legal = played.legal_actions()
        knocks = [a for a in legal if a >= 55]
        played.step(knocks[0] if knocks else int(rng.choice(legal)))
    after = draw_position(played.position())
    assert (after[:, SHEET_X:] != before[:, SHEET_X:]).any()


def test_render_modes_and_errors():
    with pytest.raises(ValueError, match="rgb_array"), pytest.warns(UserWarning, match="render_mode='rgb'"):
        gym.make("HollywoodGin-v1", render_mode="rgb")  # gymnasium warns, then the env refuses
    assert "rgb_array" in gym.spec("HollywoodGin-v1").make().metadata["render_modes"]
    with pytest.raises(ValueError, match="learner_seat=2"):
        draw_position(Game(seed=0).position(), learner_seat=2)


def test_make_vec_env_and_maskable_ppo_train_a_few_hundred_steps():
    """SB3's make_vec_env asks for render_mode="rgb_array" first: it must build 8 envs and MaskablePPO train."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)  # torch's default thread count oversubscribes a small machine
    vec_env = make_vec_env("HollywoodGin-v1", n_envs=8, seed=0, env_kwargs={"episode": "hand"})
    assert vec_env.num_envs == 8 and vec_env.render_mode == "rgb_array"
    model = MaskablePPO("MultiInputPolicy", vec_env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=300)
    assert model.num_timesteps >= 300
    frames = vec_env.get_images()
    assert len(frames) == 8 and all(f.shape == (540, 960, 3) and f.dtype == np.uint8 for f in frames)


def test_record_video_films_a_hand(tmp_path):
    """gymnasium's RecordVideo writes an mp4 whose first frame is the table at reset."""
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy (in the [test] extra)")
    from gymnasium.wrappers import RecordVideo
    from moviepy import VideoFileClip

    env = gym.make("HollywoodGin-v1", render_mode="rgb_array", episode="hand", learner_seat=1)
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda episode: episode == 0, video_length=12)
    obs, _ = env.reset(seed=3)
    first = env.unwrapped.render()
    for _ in range(30):
        obs, _, terminated, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        if terminated:
            obs, _ = env.reset()
    env.close()
    videos = sorted((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000
    with VideoFileClip(str(videos[0])) as clip:
        frame = clip.get_frame(0)
        assert frame.shape == (540, 960, 3)
        assert clip.duration == pytest.approx(12 / 4, abs=0.3)  # 12 frames at the env's render_fps of 4
    assert np.abs(frame.astype(int) - first.astype(int)).mean() < 6  # the same picture, up to compression

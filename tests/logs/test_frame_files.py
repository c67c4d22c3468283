"""A frame a turn names is a file of its episode folder, or it is refused: run folders come from
anyone, and their readers open, show and send on the frames they name."""

from __future__ import annotations

import pytest

from llm_aai.logs.frame_files import FrameOutside, frame_file


@pytest.fixture
def episode(tmp_path):
    folder = tmp_path / "run" / "episodes" / "01-04-03_t1"
    (folder / "frames").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(b"not yours")
    return folder


@pytest.mark.parametrize("relative", [
    "/etc/passwd", "/tmp/frame.png", "../../../secret.png", "frames/../../../../secret.png",
    "frames/..", "..", ".", "frames\\..\\..\\secret.png", "", "frames//turn-001-0.png",
    "./frames/turn-001-0.png", "frames/turn-001-0.png\0.txt", "frames/", 42, None,
    ["frames/turn-001-0.png"],
])
def test_a_path_that_is_not_plain_is_refused(episode, relative):
    with pytest.raises(FrameOutside, match="frame path"):
        frame_file(episode, relative)


@pytest.mark.parametrize("link", ["frames/leak.png", "leak.png"])
def test_a_symlink_leading_out_is_refused(episode, link):
    (episode / link).symlink_to(episode.parents[2] / "secret.png")
    with pytest.raises(FrameOutside, match="leads outside the episode folder"):
        frame_file(episode, link)


def test_a_symlinked_frames_folder_leading_out_is_refused(episode):
    (episode / "frames").rmdir()
    (episode / "frames").symlink_to(episode.parents[2], target_is_directory=True)
    with pytest.raises(FrameOutside, match="leads outside the episode folder"):
        frame_file(episode, "frames/secret.png")


@pytest.mark.parametrize("relative", ["frames/turn-001-0.png", "frames/turn-012-2.jpg",
                                      "x.png", "frames/a..b.png"])
def test_paths_as_the_store_writes_them_are_taken(episode, relative):
    assert frame_file(episode, relative) == episode / relative


def test_a_symlink_that_stays_inside_is_taken(episode):
    (episode / "frames" / "turn-001-0.png").write_bytes(b"frame")
    (episode / "frames" / "again.png").symlink_to(episode / "frames" / "turn-001-0.png")
    assert frame_file(episode, "frames/again.png") == episode / "frames" / "again.png"

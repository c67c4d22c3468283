"""Frame files: JPEG as the paper's harness wrote them, or lossless PNG."""

import base64
import io

import numpy as np
import pytest

from llm_aai.frames import DEFAULT_FRAME_FORMAT, FrameFormat, file_data_url, read_frame

FRAME = np.random.default_rng(0).integers(0, 256, size=(32, 48, 3), dtype=np.uint8)


def test_default_is_jpeg_at_the_recordings_quality():
    assert DEFAULT_FRAME_FORMAT == FrameFormat("jpeg", 75)
    assert DEFAULT_FRAME_FORMAT.suffix == ".jpg"


def test_the_unity_recordings_frames_are_jpeg_at_quality_75(recording_dir):
    """The fact the default rests on: re-encoding a recorded frame at 75 gives its tables."""
    from PIL import Image

    path = next((recording_dir / "observations").glob("*.jpg"))
    with Image.open(path) as recorded:
        tables = recorded.quantization
    reencoded = FrameFormat("jpeg", 75).encode(read_frame(path))
    with Image.open(io.BytesIO(reencoded)) as ours:
        assert ours.quantization == tables


@pytest.mark.parametrize("frame_format, mime", [(FrameFormat("png"), "image/png"),
                                                (FrameFormat("jpeg", 90), "image/jpeg")])
def test_file_data_url_carries_the_file_bytes_and_type(tmp_path, frame_format, mime):
    path = tmp_path / f"f{frame_format.suffix}"
    path.write_bytes(frame_format.encode(FRAME))
    url = file_data_url(path)
    header, payload = url.split(",", 1)
    assert header == f"data:{mime};base64"
    assert base64.b64decode(payload) == path.read_bytes()


def test_png_is_lossless_and_jpeg_is_what_the_file_holds(tmp_path):
    assert np.array_equal(FrameFormat("png").as_stored(FRAME), FRAME)
    jpeg = FrameFormat("jpeg", 75)
    path = tmp_path / "f.jpg"
    path.write_bytes(jpeg.encode(FRAME))
    stored = jpeg.as_stored(FRAME)
    assert np.array_equal(read_frame(path), stored)
    assert not np.array_equal(stored, FRAME)  # lossy, so the comparison above means something


def test_bad_formats_and_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match="one of jpeg, png"):
        FrameFormat("gif")
    with pytest.raises(ValueError, match="1..95"):
        FrameFormat("jpeg", 100)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValueError, match="neither a PNG nor a JPEG"):
        file_data_url(text)

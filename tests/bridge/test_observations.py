"""The camera observation's two encodings give the client the same floats."""

import io

import numpy as np
import pytest
from PIL import Image

from llm_aai.bridge import observations
from llm_aai.bridge.wire import unity_wire_pb2 as wire


@pytest.mark.parametrize("channels_last", [False, True])
def test_floats_field_holds_the_pngs_values_in_the_declared_layout(channels_last):
    frame = np.random.default_rng(3).integers(0, 256, (84, 84, 3), dtype=np.uint8)
    obs = wire.ObservationProto()
    obs.MergeFromString(observations.float_data_field(frame, channels_last=channels_last))
    values = np.array(obs.float_data.data, dtype=np.float32)
    assert obs.WhichOneof("observation_data") == "float_data"
    # what mlagents_envs makes of the PNG: uint8 / 255 as float32
    with Image.open(io.BytesIO(observations.camera_png(frame))) as png:
        decoded = np.array(png, dtype=np.float32) / 255.0
    expected = decoded if channels_last else np.moveaxis(decoded, -1, 0)
    np.testing.assert_array_equal(values.reshape(expected.shape), expected)


def test_only_small_rgb_frames_go_as_floats():
    assert observations.small_rgb(np.zeros((84, 84, 3), np.uint8), 3)
    assert not observations.small_rgb(np.zeros((84, 84, 3), np.uint8), 1)  # grayscale
    assert not observations.small_rgb(np.zeros((512, 512, 3), np.uint8), 3)

"""The protocol's numbers: the paper's by default; renamed types' old names still import."""

import pytest

import llm_aai.protocol
from llm_aai.protocol import PAPER_PROTOCOL, EpisodeProtocol, settings


def test_the_default_protocol_is_the_papers():
    assert PAPER_PROTOCOL == EpisodeProtocol()
    paper = PAPER_PROTOCOL
    assert (paper.steps_after_reset, paper.initial_observations,
            paper.noops_after_initial_observation, paper.max_scripts) == (1, 3, 16, 30)


@pytest.mark.parametrize("module", [llm_aai.protocol, settings])
def test_the_old_name_paper_protocol_imports_with_a_deprecation_warning(module):
    with pytest.warns(DeprecationWarning, match="PaperProtocol is deprecated: use EpisodeProtocol"):
        old = module.PaperProtocol
    assert old is EpisodeProtocol


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        llm_aai.protocol.NoSuchThing  # noqa: B018


def test_the_old_name_of_a_played_turn_imports_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="Turn is deprecated: use PlayedTurn"):
        old = llm_aai.protocol.Turn
    assert old is llm_aai.protocol.PlayedTurn


def test_the_old_frame_control_module_imports_with_a_deprecation_warning():
    import importlib
    import sys

    sys.modules.pop("llm_aai.protocol.frame_control", None)
    with pytest.warns(DeprecationWarning, match="frame_control is deprecated"):
        old = importlib.import_module("llm_aai.protocol.frame_control")
    from llm_aai.protocol.action_control import ActionControl, action_reply

    assert old.FrameControl is ActionControl and old.frame_reply is action_reply

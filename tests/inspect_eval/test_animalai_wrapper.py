"""animalai 6.2's own Inspect wrapper on the bridge: the official LLM path, no Unity build.

The wrapper's ``start_animalai`` solver and ``act`` tool start ``AnimalAIEnvironment`` with the
sample's ``file_name``: here the bridge's launcher, so the episode plays on our simulator.
"""

from __future__ import annotations

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ContentImage, ModelOutput, get_model
from inspect_ai.solver import generate, system_message

from llm_aai.bridge.launcher import install


@pytest.mark.slow  # a subprocess or the animalai client: ~10-20 s
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_official_inspect_wrapper_plays_on_the_bridge(tmp_path):
    from animalai.LLM_scaffolds import FrameByFrameScaffold
    from animalai.LLM_scaffolds.inspect_wrapper import (
        add_act_tool,
        close_environment,
        start_animalai,
        total_reward_scorer,
    )

    from tests.bridge.conftest import free_port
    from tests.helpers.arenas import GOAL_AHEAD, write_arena

    launcher = install(tmp_path / "env")
    arena = write_arena(tmp_path, GOAL_AHEAD, "goal_ahead.yml")
    sample = Sample(input="Collect the reward.", metadata={
        "file_name": str(launcher), "arenas_configurations": str(arena), "resolution": 64,
        "base_port": free_port(), "no_graphics": True})
    official = Task(dataset=[sample],
                    solver=[system_message(FrameByFrameScaffold.get_default_system_prompt()),
                            start_animalai(FrameByFrameScaffold),
                            add_act_tool(FrameByFrameScaffold), generate()],
                    scorer=total_reward_scorer(), cleanup=close_environment,
                    message_limit=500)
    forward = [ModelOutput.for_tool_call("mockllm/model", "act", {"action": "FORWARD"})
               for _ in range(200)]
    log = inspect_eval(official, model=get_model("mockllm/model", custom_outputs=forward),
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    played = log.samples[0]
    score = played.scores["total_reward_scorer"]
    assert score.metadata["termination_reason"] == "env_terminal"  # the goal ended it
    assert score.value > 0.5  # the green ball's reward, less the steps' cost
    steps = score.metadata["num_steps"]
    assert 5 < steps < 200  # it walked there: not at once, not to the time limit
    tool_images = [m for m in played.messages if m.role == "tool"
                   and any(isinstance(c, ContentImage) for c in m.content)]
    assert len(tool_images) == steps  # a frame back for every action

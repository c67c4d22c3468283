"""A fake-server run whose Thinks hold true and false claims of every kind, on a known arena.

The arena puts the agent at (20, 10) facing +z; a green ball 11 m away, 27 degrees to its
right; a grey wall 8 m ahead hiding a red ball and a death zone straight behind it; a yellow
ball behind the agent; a box 37 degrees to its left; a tunnel out of view to its right. Each
reply's Think is written so every claim's truth is known from that layout (and from the health,
which only falls: nothing is collected).
"""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from llm_aai.cli.grounding import main
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run

TASK = "01-04-03"
ARENA = """
!ArenaConfig
arenas:
  0: !Arena
    timeLimit: 250
    items:
    - !Item
      name: Agent
      positions:
      - !Vector3 {x: 20, y: 0, z: 10}
      rotations: [0]
    - !Item
      name: GoodGoal
      positions:
      - !Vector3 {x: 25, y: 0, z: 20}
      sizes:
      - !Vector3 {x: 1, y: 1, z: 1}
    - !Item
      name: Wall
      positions:
      - !Vector3 {x: 20, y: 0, z: 18}
      rotations: [0]
      sizes:
      - !Vector3 {x: 4, y: 3, z: 1}
      colors:
      - !RGB {r: 153, g: 153, b: 153}
    - !Item
      name: BadGoal
      positions:
      - !Vector3 {x: 20, y: 0, z: 24}
      sizes:
      - !Vector3 {x: 1, y: 1, z: 1}
    - !Item
      name: GoodGoalMulti
      positions:
      - !Vector3 {x: 20, y: 0, z: 4}
      sizes:
      - !Vector3 {x: 1, y: 1, z: 1}
    - !Item
      name: Cardbox1
      positions:
      - !Vector3 {x: 14, y: 0, z: 18}
      rotations: [0]
      sizes:
      - !Vector3 {x: 1, y: 1, z: 1}
    - !Item
      name: DeathZone
      positions:
      - !Vector3 {x: 20, y: 0, z: 30}
      rotations: [0]
      sizes:
      - !Vector3 {x: 2, y: 0, z: 2}
    - !Item
      name: CylinderTunnel
      positions:
      - !Vector3 {x: 30, y: 0, z: 12}
      rotations: [0]
      sizes:
      - !Vector3 {x: 3, y: 3, z: 3}
"""

REPLIES = [
    'Think("I see a green ball 27 degrees to the right, about 11 m away. I see a red ball '
    'straight ahead. I see no yellow ball. The yellow ball must be behind me. I see a wall '
    'straight ahead. I see a ramp. I see a pushable box to my left. I see no death zone. I see '
    'a tunnel.");Go(1);',
    'Think("I see a green ball to my left, about 3 m away. I see no green ball. The red ball '
    'is probably somewhere. My health has increased, confirming the collection. My health has '
    'decreased.");Go(1);',
    'Think("I have successfully collected the green ball as my health has increased from 84.2 '
    'to 35.4. My health dropped from 63.3 to 59.7. I have not collected any ball yet. The red '
    'ball is at -60 degrees.");Go(1);',
]


@pytest.fixture(scope="session")
def claims_run(tmp_path_factory):
    """The run directory of three scripted replies on ``ARENA``."""
    root = tmp_path_factory.mktemp("grounding-run")
    arenas = root / "arenas"
    arenas.mkdir()
    (arenas / f"{TASK}.yaml").write_text(ARENA)
    config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=arenas, resolution=64,
                       protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=len(REPLIES),
                                                    run_out_clock=False),
                       model_options=ModelOptions(max_tokens=256))
    with pytest.MonkeyPatch.context() as patch, FakeChatServer(REPLIES) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-grounding")
        config = dataclasses.replace(config, model_options=ModelOptions(api_base=server.url,
                                                                        max_tokens=256))
        start_run(config, out=root, run_id="claims", show_progress=False)
    return root / "claims"


@pytest.fixture(scope="session")
def grounded(claims_run, tmp_path_factory):
    """A copy of ``claims_run`` that ``python -m llm_aai.grounding`` has grounded."""
    run = tmp_path_factory.mktemp("grounded") / "claims"
    shutil.copytree(claims_run, run)
    assert main([str(run)]) == 0
    return run

"""Serve the embedded simulator to unmodified ``animalai`` code over the Unity player's protocol.

``animalai.environment.AnimalAIEnvironment`` launches the Animal-AI Unity player and talks
ML-Agents gRPC to it. ``python -m llm_aai.bridge install DIR`` writes a launcher that
``animalai`` starts in the player's place (``AnimalAIEnvironment(file_name=DIR/AAI.x86_64)``);
it runs ``llm_aai.bridge.player``, which connects to ``animalai``'s gRPC server and plays the
arenas on our MuJoCo simulator: headless, on a CPU, without the 400 MB build.

Modules: ``wire`` (protocol messages generated from our own ``.proto``), ``options`` (the
player's command line as ``animalai`` writes it), ``dialects`` (what differs between client
generations: channels-last images for ``mlagents_envs`` 0.x), ``side_channels`` (the arena
and engine channels), ``episodes`` (arena order, seeds, episodes on the simulator),
``observations`` (camera PNG, rays, the 7-float vector), ``player`` (the gRPC loop) and
``launcher``.
"""

BEHAVIOR_NAME = "AnimalAI?team=0"
"""The one behaviour the Animal-AI player reports (``<BehaviorName>?team=<TeamId>``)."""

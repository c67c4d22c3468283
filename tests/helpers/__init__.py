"""Shared test helpers: arena YAML, made runs and the signal harness, each written once.

``arenas`` writes the small hand-made arenas (a goal ahead of the agent) and builds placed
arenas for the simulator; ``runs`` makes real runs through the run command; ``signals``
starts a command, waits for it to reach a point, and stops it with a signal.
"""

"""Plan-then-act probe: metrics of a complete open-loop plan, and its per-step trace.

``metrics`` scores a plan (executable, passed, violations, path efficiency, similarity to a
reference plan) and aggregates per task and level; ``trace`` plays a plan's frame actions
in the simulator and records the per-step facts the metrics need.
"""

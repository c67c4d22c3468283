"""The testbed audit: the oracle over the testbed, against what was passed in Unity.

``run_audit`` plays the oracle (``llm_aai.oracle``) on each task and seed in worker processes
and appends one row per episode to ``audit.csv`` as it finishes (so an interrupted audit
resumes where it stopped); ``write_report`` turns the rows into ``audit.md``: of the tasks
Olympics entrants passed in Unity, which the oracle solves here, per level, and a diagnosis
for each one it does not (``llm_aai/data/audit_diagnoses.csv``).
"""

from llm_aai.audit.report import build_report, write_report
from llm_aai.audit.run import AuditSettings, AuditSettingsMismatch, run_audit

__all__ = ["AuditSettings", "AuditSettingsMismatch", "build_report", "run_audit", "write_report"]

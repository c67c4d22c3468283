"""Human baselines in the browser: people play the testbed as the models or the children did.

``python -m llm_aai.human serve`` serves a study (``study.Study``: the tasks, their order per
participant, where the runs go) to participants' browsers (``app``, on ``server``). Script mode
is the LLMs' interface (the images and health after each script, the 30-script cap, the same
feedback on an invalid script); keyboard mode (``?control=keys``) is the children's: arrow
keys, one AAI step at a time in real time (``keyboard``). Each participant's session
(``session``) plays its levels through the runner's ``OpenRun``, so the episode rules are the
protocol's by construction and every level is an ordinary run's episode, with the agent
``human``, the participant's id and the interface in the manifest (docs/human.md).
"""

from llm_aai.human.server import bind, serve
from llm_aai.human.session import Session, Sessions, View
from llm_aai.human.study import INTERFACES, ORDERS, Study, StudyError

__all__ = ["INTERFACES", "ORDERS", "Session", "Sessions", "Study", "StudyError", "View", "bind",
           "serve"]

"""Child process for the SIGKILL test: submits answers forever, printing each
committed judgement id the moment submit() returns."""

import sys
import time

from annotator.services.labeling import LabelSession
from annotator.services.study import Study

ANSWERS = {
    "instruction_following": "FAIL",
    "layout_hierarchy": 2,
    "text_rendering": "PASS",
    "ui_affordance": 1,
    "failure_tags": ["broken_layout"],
    "reason": "child",
}

study = Study.open(sys.argv[1])
session = LabelSession(study, "ann")
while (item := session.next()) is not None:
    jid = session.submit(item, ANSWERS, 5)
    print(jid, flush=True)
    time.sleep(0.01)
print("done", flush=True)
time.sleep(60)

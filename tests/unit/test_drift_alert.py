"""The app's drift alert: raised by anchor answers that move away from the reference,
shown once, and only after the next live item (so it never marks the anchor)."""

from __future__ import annotations

import json
from pathlib import Path

from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.store.anchors import anchors

REPO = Path(__file__).resolve().parents[2]
LIVE = {
    "instruction_following": "PASS",
    "layout_hierarchy": 3,
    "text_rendering": "PASS",
    "ui_affordance": 3,
}


def test_drift_alert_after_the_next_live_item(tmp_path):
    study = Study.create(tmp_path / "st", REPO / "rubrics" / "ui_mockup.toml")
    src = tmp_path / "src"
    src.mkdir()
    rows = [
        {
            "item_id": f"t{i}",
            "case_id": f"c{i % 7}",
            "prompt": f"p{i % 7}",
            "generator": f"g{i % 3}",
            "text": "x",
        }
        for i in range(80)
    ]
    (src / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study.import_items(src / "m.jsonl")
    study.import_anchors(REPO / "anchors" / "ui_mockup" / "anchors.jsonl")
    study.set_setting("anchor_every", 2)  # every other item is an anchor: a long series fast
    study.add_rater("ann")
    refs = {pk: ref for pk, _s, ref, _r in anchors(study.db)}
    session = LabelSession(study, "ann")
    alert_seen_after = None
    previous = None
    for _ in range(40):
        item = session.next()
        if item is None:
            break
        alert = session.take_drift_alert()
        if alert is not None:
            assert previous == "live", "the alert must not follow an anchor directly"
            assert (
                alert["metric"] in ("layout_hierarchy", "ui_affordance")
                and alert["direction"] == "down"
            )
            alert_seen_after = previous
            break
        if item.context == "anchor":
            ref = dict(refs[item.item_pk])
            # a severe drift: two points under the reference on both scales
            ref["layout_hierarchy"] = max(0, ref["layout_hierarchy"] - 2)
            ref["ui_affordance"] = max(0, ref["ui_affordance"] - 2)
            session.submit(item, ref, 100)
        else:
            session.submit(item, LIVE, 100)
        previous = item.context
    assert alert_seen_after == "live"
    assert session.take_drift_alert() is None  # once
    study.close()

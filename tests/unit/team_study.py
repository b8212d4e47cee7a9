"""A team study made from scratch as a lead would make one: items imported from a
manifest, raters dealt items at an overlap, each rater answering through a label session, and a
judge's scores imported from a CSV. Only the services API: no rows written by hand.

The raters see the same quality in each output and differ by a point here and there (a team that
agrees well: human alpha high); the judge is lenient by design (PASS on every gate, scales
`lenient_by` points above the humans' median, capped at the top), so a report on it has one
thing it can say for sure and a lot it cannot decide on so few items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factories import REPO, basic_rows, write_manifest

from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.services.team import assign

RATERS = ("ana", "ben", "cy")
GENERATORS = ("gen-a", "gen-b", "gen-c")
# the outputs' quality by generator: (instruction following, text rendering, layout, affordance)
QUALITY = {
    "gen-a": ("PASS", "PASS", 4, 4),
    "gen-b": ("PASS", "FAIL", 3, 3),
    "gen-c": ("FAIL", "FAIL", 1, 2),
}


def _truth(item_id: str) -> dict[str, Any]:
    case, gen = (int(x) for x in item_id.split("-")[1:])
    follows, text, layout, affordance = QUALITY[GENERATORS[gen]]
    # case 3 is harder for everyone: one point lower on the scales
    layout, affordance = max(0, layout - (case == 3)), max(0, affordance - (case == 3))
    tags = []
    if follows == "FAIL":
        tags.append("missing_required_section")
    if text == "FAIL":
        tags.append("misspelled_text")
    return {
        "instruction_following": follows,
        "layout_hierarchy": layout,
        "text_rendering": text,
        "ui_affordance": affordance,
        "failure_tags": tags,
    }


def rater_answer(rater: str, item_id: str) -> dict[str, Any]:
    """What `rater` answers on `item_id`: the truth, give or take a point on some scales."""
    a = _truth(item_id)
    case, gen = (int(x) for x in item_id.split("-")[1:])
    r = RATERS.index(rater)
    if (case + gen + r) % 3 == 0:  # each rater a point off on a third of the items, either way
        step = 1 if r != 1 else -1
        a["layout_hierarchy"] = min(5, max(0, a["layout_hierarchy"] + step))
    if (case * 3 + gen + r) % 4 == 0:
        a["ui_affordance"] = min(5, max(0, a["ui_affordance"] + (1 if r == 2 else -1)))
    if rater == "cy" and gen == 2 and case < 2:  # a tag one rater sees and the others do not
        a["failure_tags"] = [*a["failure_tags"], "broken_layout"]
    a["reason"] = f"{rater} on {item_id}"
    return a


def lenient_answer(item_id: str, metric: str, lenient_by: int, tags: bool = True) -> Any:
    """The judge: PASS on every gate, scales `lenient_by` above the truth (at most 5), no tags
    (no score at all on the tags unless `tags`)."""
    t = _truth(item_id)
    if metric in ("instruction_following", "text_rendering"):
        return "PASS"
    if metric in ("layout_hierarchy", "ui_affordance"):
        return min(5, t[metric] + lenient_by)
    if metric == "failure_tags":
        return "" if tags else None
    return None


def build_team_study(
    folder: Path,
    *,
    n_cases: int = 4,
    overlap: int = 2,
    judge: str = "lenient-judge",
    lenient_by: int = 2,
    judge_tags: bool = True,
) -> Study:
    """`n_cases` x 3 generators items (12 by default), 3 raters at `overlap`, every rater's items
    answered through a label session, and the lenient judge's scores imported on every item
    (on the failure tags too unless not `judge_tags`). The caller closes the study."""
    src = folder.parent / f"{folder.name}-src"
    src.mkdir(parents=True)
    study = Study.create(folder, REPO / "rubrics" / "ui_mockup.toml")
    study.import_items(write_manifest(src, basic_rows(src, n_cases=n_cases, gens=GENERATORS)))
    assign(study, list(RATERS), overlap=overlap, pair_overlap=None, seed=7)
    item_ids = [f"it-{c}-{g}" for c in range(n_cases) for g in range(len(GENERATORS))]
    # a rater is served what they may see, never the item id: the test knows it by its view
    by_view = {v: i for i, v in study.views_of(item_ids).items()}
    for rater in RATERS:
        session = LabelSession(study, rater)
        while (item := session.next()) is not None:
            session.submit(item, rater_answer(rater, by_view[item.view]), 4000)
    rows = ["item_id,judge,metric,value"]
    for item_id in item_ids:
        for m in study.rubric.metrics:
            value = lenient_answer(item_id, m.key, lenient_by, judge_tags)
            if value is not None:
                rows.append(f"{item_id},{judge},{m.key},{value}")
    path = src / f"{judge}.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    study.import_judge(path)
    return study

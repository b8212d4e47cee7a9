"""What must come back from the peers: the source study every round trip starts from, the answers
the scenarios of peers.py give (as our values), and the comparisons. Shared by the live tests
(tests/peers/) and the default suite's tests on the recorded files (tests/unit/test_interop_peers.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from annotator.services.exports import TABLES
from annotator.services.importers import run_import
from annotator.services.study import Study

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "interop"

# the Label Studio raters' answers of peers.LS_ANSWERS / LS_RELABEL, as our values; ben left
# failure_tags unticked on it-2 (no result: the empty tag set), ana skipped reason and clarity
LS_WANT: dict[tuple[str, str], dict[str, str]] = {
    ("it-1", "ana"): {
        "instruction_following": "FAIL",
        "quality": "3",
        "style": "photo",
        "failure_tags": "text_garbled",
    },
    ("it-2", "ana"): {
        "instruction_following": "FAIL",
        "quality": "2",
        "style": "illustration",
        "failure_tags": "text_garbled;wrong_count",
        "clarity": "2",
    },
    ("it-1", "ben"): {
        "instruction_following": "PASS",
        "quality": "5",
        "style": "photo",
        "failure_tags": "extra_limbs",
    },
    ("it-2", "ben"): {
        "instruction_following": "cannot_judge",
        "quality": "1",
        "style": "diagram",
        "failure_tags": "",
    },
}

# what the two Potato users answered (tests/peers/peers.py PO_ANSWERS, alice's relabel applied:
# Potato keeps a scheme the relabel did not post, here her clarity)
POTATO_WANT = {
    ("it-1", "alice"): {
        "instruction_following": "FAIL",
        "quality": "3",
        "style": "photo",
        "failure_tags": "wrong_count",
        "reason": "on second look: two apples",
        "clarity": "3",
    },
    ("it-2", "alice"): {
        "instruction_following": "FAIL",
        "quality": "2",
        "style": "illustration",
        "failure_tags": "text_garbled;wrong_count",
    },
    # bob ticked no failure tag on it-1: Potato writes nothing, our raters' empty set
    ("it-1", "bob"): {
        "instruction_following": "PASS",
        "quality": "5",
        "style": "photo",
        "failure_tags": "",
    },
    ("it-2", "bob"): {
        "instruction_following": "FAIL",
        "quality": "1",
        "style": "diagram",
        "failure_tags": "text_garbled",
        "reason": "two, not three",
    },
}


def source_study(folder: Path) -> Study:
    """The study of tests/unit/test_interop_exports.py (every kind of answer, judge scores, pair
    votes seen from both sides) and the judge's vote on p2 with the sides swapped."""
    st = Study.create(folder, DATA / "rubric.toml")
    st.import_items(DATA / "items.jsonl")
    run_import(
        st,
        "label-studio",
        DATA / "label_studio" / "export.json",
        map_path=str(DATA / "label_studio" / "map.toml"),
    )
    csv = DATA / "csv"
    st.import_ratings(csv / "ratings.csv")
    st.import_judge(csv / "judge.csv")
    st.import_pairs(csv / "pairs.csv")
    st.import_pairs(csv / "judge_pairs.csv", judges=True)
    swapped = folder.parent / "judge_pairs_swapped.csv"
    swapped.write_text("pair_id,item_left,item_right,rater,choice\np2,it-3,it-4,gpt-j,right\n")
    st.import_pairs(swapped, judges=True)
    return st


def rows(st: Study, table: str, drop: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True)
        for r in TABLES[table].rows(st)
    )


def answers(st: Study, raters: set[str] | None = None) -> dict[tuple[str, str], dict[str, str]]:
    out: dict[tuple[str, str], dict[str, str]] = {}
    for r in TABLES["judgements"].rows(st):
        if raters is None or r["rater"] in raters:
            out.setdefault((r["item_id"], r["rater"]), {})[r["metric"]] = r["value"]
    return out


def raters_map(base_map: str, users: dict[str, int]) -> str:
    """The exporter's mapping plus Label Studio's users (by id and by email) as our raters."""
    lines = [base_map.rstrip(), "", "[raters]  # Label Studio's users"]
    for email, uid in users.items():
        name = email.split("@")[0]
        lines += [f'"{uid}" = "{name}"', f'"{email}" = "{name}"']
    return "\n".join(lines) + "\n"


def seed_items(back: Study, tasks_json: Path, map_path: Path, work: Path) -> None:
    """The study's items from our own item tasks (their annotations and predictions left out),
    as the lead's study holds them: Label Studio's default export leaves out every task nobody
    annotated, so the pairs naming those items need them in the study already."""
    tasks = json.loads(tasks_json.read_text())
    for t in tasks:
        t["annotations"], t["predictions"] = [], []
    bare = work / "items-only.json"
    bare.write_text(json.dumps(tasks))
    run_import(back, "label-studio", bare, map_path=str(map_path), media_root=tasks_json.parent)


def check_label_studio(source: Study, back: Study, *, snapshot: bool, lines: list[str]) -> None:
    """`back` holds Label Studio's export of our tasks plus the two raters' work: every value of
    the source comes back (sessions and judge reasons do not make the trip), the raters' answers
    are as they gave them, and the default export's prediction ids are counted, not refused."""
    new = set(LS_WANT_RATERS)
    src = rows(source, "judgements", ("session",))
    got = [r for r in rows(back, "judgements", ("session",)) if json.loads(r)["rater"] not in new]
    assert got == src
    assert answers(back, new) == LS_WANT
    src_pairs = rows(source, "pairs")
    got_pairs = [r for r in rows(back, "pairs") if json.loads(r)["rater"] not in new]
    assert got_pairs == src_pairs
    mine = {(json.loads(r)["rater"], json.loads(r)["choice"]) for r in rows(back, "pairs")}
    assert {("ana", "left"), ("ben", "both")} <= mine
    if snapshot:
        assert rows(back, "judge-scores", ("reason",)) == rows(source, "judge-scores", ("reason",))
        assert rows(back, "judge-pairs", ("created_at",)) == rows(
            source, "judge-pairs", ("created_at",)
        )
    else:
        assert rows(back, "judge-scores") == [] and rows(back, "judge-pairs") == []
        assert all("predictions given as ids" in line for line in lines), lines


LS_WANT_RATERS = ("ana", "ben")

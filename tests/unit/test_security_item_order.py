"""Item ids carry no order of generators: a rater's login role reads
`items.id`, `cases.id`, `cells.id` and media rows; numbered in the file's order they would tell
an item's generator by its position within its case. Every import stores its new rows in a
seeded random order (seeded by what is imported, not the file's row order), reproducible for
the lead."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from pathlib import Path

from factories import make_png, write_manifest

from annotator.services.study import Study
from annotator.store.models import Case, Cell, Item

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
GENS = ("gen-a", "gen-b", "gen-c")
N_CASES = 30


def _rows(folder: Path, *, images: bool = False) -> list[dict]:
    """30 cases x 3 generators, always listed gen-a, gen-b, gen-c (the order that leaked)."""
    rows = []
    for c in range(N_CASES):
        for g, gen in enumerate(GENS):
            row = {
                "item_id": f"it-{c:02d}-{g}",
                "case_id": f"case{c:02d}",
                "prompt": f"Draw screen {c}",
                "criteria": "All sections present.",
                "generator": gen,
            }
            if images:
                img = make_png(folder / "out" / f"{gen}_{c}.png", colour=(8 * c, 80 * g, 90))
                row["images"] = [str(img.relative_to(folder))]
            else:
                row["text"] = f"screen {c} by {gen}"
            rows.append(row)
    return rows


def _study(where: Path | str, study_id: str, manifest: Path) -> Study:
    st = Study.create(where, RUBRIC)
    st.db.set_setting("study_id", study_id)
    st.import_items(manifest)
    return st


def _ids(st: Study) -> dict[str, tuple[int, str, str, int]]:
    """item_id -> (item pk, generator, case_id, case pk)."""
    with st.db.read() as s:
        rows = (
            s.query(Item.item_id, Item.id, Item.generator, Case.case_id, Case.id)
            .join(Cell, Cell.id == Item.cell_pk)
            .join(Case, Case.id == Cell.case_pk)
            .all()
        )
    return {iid: (pk, gen, case, cpk) for iid, pk, gen, case, cpk in rows}


def _first_by_generator(ids: dict[str, tuple[int, str, str, int]]) -> Counter:
    """How often each generator holds the smallest item id of its case."""
    by_case: dict[str, list[tuple[int, str]]] = {}
    for pk, gen, case, _ in ids.values():
        by_case.setdefault(case, []).append((pk, gen))
    return Counter(min(v)[1] for v in by_case.values())


def test_item_ids_do_not_tell_the_generator_by_position_within_the_case(study_location, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    st = _study(study_location, "study-order-1", write_manifest(src, _rows(src)))
    try:
        ids = _ids(st)
    finally:
        st.close()
    assert len(ids) == N_CASES * len(GENS)
    first = _first_by_generator(ids)
    # in file order gen-a is first in all 30 cases; shuffled, each generator is first in about a
    # third of them (binomial(30, 1/3): 10 +- 2.6; the seed is fixed, so this never flakes)
    assert set(first) == set(GENS), first
    assert all(4 <= first[g] <= 17 for g in GENS), first
    # nor the manifest's order: neither items nor cases are numbered in file order
    in_file_order = [ids[r["item_id"]][0] for r in _rows(src)]
    assert in_file_order != sorted(in_file_order)
    cases = [ids[f"it-{c:02d}-0"][3] for c in range(N_CASES)]
    assert cases != sorted(cases)


def test_the_same_study_imported_the_same_way_gets_the_same_ids(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    rows = _rows(src, images=True)
    manifest = write_manifest(src, rows)
    reversed_manifest = write_manifest(src, rows[::-1], name="reversed.jsonl")
    got = {}
    media = {}
    for name, study_id, path in (
        ("one", "study-order-2", manifest),
        ("two", "study-order-2", manifest),
        ("reversed", "study-order-2", reversed_manifest),
        ("other", "study-order-3", manifest),
    ):
        st = _study(tmp_path / name, study_id, path)
        got[name] = _ids(st)
        st.close()
        with sqlite3.connect(tmp_path / name / "study.sqlite") as c:
            # a rater on the server may read the media rows' created_at (stamped row by row) and
            # their physical order: neither may follow the file's order
            media[name] = [r[0] for r in c.execute("select sha256 from media order by rowid")]
    assert got["one"] == got["two"]
    assert media["one"] == media["two"]
    # the file's row order plays no part in the ids
    assert got["reversed"] == got["one"]
    assert media["reversed"] == media["one"]
    # and neither does the study: a study rebuilt from its files publishes the same figures
    assert got["other"] == got["one"]
    # media rows are not stored in file order either: the generator of a case's first-stored image
    # varies like the items'
    with sqlite3.connect(tmp_path / "one" / "study.sqlite") as c:
        gen_of = {
            sha: gen
            for sha, gen in c.execute(
                "select m.media_sha256, i.generator from item_media m join items i "
                "on i.id = m.item_pk"
            )
        }
        case_of = {
            sha: case
            for sha, case in c.execute(
                "select m.media_sha256, k.case_id from item_media m join items i on i.id = m.item_pk "
                "join cells e on e.id = i.cell_pk join cases k on k.id = e.case_pk"
            )
        }
    seen: dict[str, str] = {}
    for sha in media["one"]:
        seen.setdefault(case_of[sha], gen_of[sha])
    first = Counter(seen.values())
    assert all(4 <= first[g] <= 17 for g in GENS), first


def test_anchors_are_shuffled_among_themselves(tmp_path):
    st = Study.create(tmp_path / "st", RUBRIC)
    st.db.set_setting("study_id", "study-order-4")
    st.import_anchors(REPO / "anchors" / "ui_mockup" / "anchors.jsonl")
    with st.db.read() as s:
        rows = s.query(Item.item_id, Item.id).filter(Item.is_anchor.is_(True)).all()
    st.close()
    assert len(rows) == 14
    # the file lists anchor-ui-01 .. anchor-ui-14 in order
    by_file = [pk for _, pk in sorted(rows)]
    assert by_file != sorted(by_file)


def test_pair_names_come_from_item_ids_not_row_numbers(tmp_path):
    """A pair no file names gets its name from its two item_ids: a name made of row numbers would
    tell the lead's export (and Label Studio's round trip) apart between two builds of one study,
    and would carry the item numbers into every place the name goes."""
    from annotator.domain.pairs import minted_pair_id
    from annotator.store.models_pairs import Pair
    from annotator.store.pairs import ensure_pairs

    src = tmp_path / "src"
    src.mkdir()
    rows = _rows(src)
    names = {}
    for name, imports in (
        ("whole", [rows]),
        ("in two", [rows[45:], rows[:45]]),  # other row numbers for the same items
    ):
        st = Study.create(tmp_path / name, RUBRIC)
        for i, part in enumerate(imports):
            st.import_items(write_manifest(src, part, name=f"{name}-{i}.jsonl"))
        ensure_pairs(st.db)
        with st.db.read() as s:
            item_id = dict(s.query(Item.id, Item.item_id).all())
            names[name] = {
                frozenset((item_id[a], item_id[b])): pid
                for pid, a, b in s.query(Pair.pair_id, Pair.item_a, Pair.item_b).all()
            }
        st.close()
    assert len(names["whole"]) == N_CASES * 3  # 3 generators: 3 pairs per case
    assert names["whole"] == names["in two"]
    assert all(pid == minted_pair_id(*sorted(k)) for k, pid in names["whole"].items())
    assert not any(re.fullmatch(r"pair-\d+-\d+", pid) for pid in names["whole"].values())

"""The offline team workflow: assignment, blinded rater packages, merge.

Real studies, real package files; a package's bytes are scanned for anything that
would de-blind it; merge is idempotent and order-independent (hypothesis drives
random interleavings of several raters' work, partial returns and re-merges)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from conftest import copy_study
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.cli import main
from annotator.domain.assignment import deal, uncovered_pairs
from annotator.domain.errors import InputError
from annotator.services.labeling import LabelSession
from annotator.services.packages import export_package, merge_package
from annotator.services.pairing import PairSession
from annotator.services.study import DB_NAME, Study
from annotator.services.team import assign

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "looks right",
}
# names long enough that they cannot turn up by chance inside image bytes
TEAM = ["anaya", "benito", "caius", "deepa"]


# ---- assignment -----------------------------------------------------------------------


@pytest.mark.parametrize("n,k", [(2, 2), (4, 2), (5, 3), (8, 2), (12, 3), (20, 2)])
def test_deal_gives_k_raters_per_item_balanced_and_every_pair_overlapping(n, k):
    raters = [f"r{i}" for i in range(n)]
    units = list(range(max(2 * n * (n - 1) // (k * (k - 1)), n)))
    out = deal(units, raters, k, seed=11)
    assert all(len(set(rs)) == k for rs in out.values()) and set(out) == set(units)
    load = Counter(r for rs in out.values() for r in rs)
    assert set(load) == set(raters) and max(load.values()) - min(load.values()) <= 1
    assert uncovered_pairs(out, raters) == []


def test_redeal_tops_up_and_never_moves_anything():
    raters = ["a", "b", "c"]
    first = deal(range(10), raters, 2, seed=1)
    second = deal(range(15), raters, 2, seed=2, dealt={u: rs for u, rs in first.items()})
    assert set(second) == set(range(10, 15))  # only the new items are dealt
    load = Counter(r for d in (first, second) for rs in d.values() for r in rs)
    assert max(load.values()) - min(load.values()) <= 1


def test_assign_in_a_study_and_again_after_new_items(demo_study_dir, tmp_path):
    study = Study.open(copy_study(demo_study_dir, tmp_path / "s"))
    try:
        msg = assign(study, TEAM, overlap=2, pair_overlap=2, seed=5)
        assert f"dealt {2 * study.counts()['items']} item assignments" in msg
        ana = LabelSession(study, "anaya")
        served = [ana.next() for _ in range(3)]
        for it in served:
            ana.submit(it, ALL, 10)
        with study.db.read() as s:
            before = sorted(
                s.execute(
                    __import__("sqlalchemy").text("SELECT rater_pk, item_pk FROM assignments")
                ).all()
            )
        src = tmp_path / "more"
        from factories import basic_rows, write_manifest

        rows = basic_rows(src, n_cases=2, gens=("x", "y"))
        for r in rows:
            r["item_id"] = "more-" + r["item_id"]
        study.import_items(write_manifest(src, rows))
        assert "dealt 8 item assignments" in assign(
            study, TEAM, overlap=2, pair_overlap=None, seed=6
        )
        with study.db.read() as s:
            after = sorted(
                s.execute(
                    __import__("sqlalchemy").text("SELECT rater_pk, item_pk FROM assignments")
                ).all()
            )
        assert set(before) <= set(after) and len(after) == len(before) + 8
        loads = Counter(r for r, _ in after)
        assert max(loads.values()) - min(loads.values()) <= 1
    finally:
        study.close()


# ---- packages ---------------------------------------------------------------------------


@pytest.fixture
def team_study(demo_study_dir, tmp_path) -> Study:
    study = Study.open(copy_study(demo_study_dir, tmp_path / "lead"))
    assign(study, TEAM, overlap=2, pair_overlap=1, seed=3)
    yield study
    study.close()


def _secrets_of(study: Study) -> list[bytes]:
    """Everything a package must not contain: generators, source paths and names, other raters."""
    with sqlite3.connect(study.folder / DB_NAME) as c:
        generators = {r[0] for r in c.execute("SELECT DISTINCT generator FROM items")}
        sources = {
            r[0] for r in c.execute("SELECT DISTINCT source FROM items WHERE source IS NOT NULL")
        }
        names = {
            r[0]
            for r in c.execute(
                "SELECT DISTINCT source_name FROM item_media WHERE source_name IS NOT NULL"
            )
        }
        raters = {r[0] for r in c.execute("SELECT name FROM raters")}
        item_ids = {r[0] for r in c.execute("SELECT item_id FROM items")}
        cases = {r[0] for r in c.execute("SELECT case_id FROM cases")}
        originals = {
            r[0]
            for r in c.execute("SELECT original_sha256 FROM media WHERE original_sha256 != sha256")
        }
    words = generators | sources | {Path(n).name for n in names} | item_ids | cases | originals
    return sorted({w.encode() for w in words if w and len(w) >= 4}), raters


def test_package_bytes_hold_no_generator_path_or_other_rater(team_study, tmp_path):
    out = tmp_path / "anaya.annot"
    e = export_package(team_study, "anaya", out)
    share = team_study.counts()["items"] * 2 // len(TEAM)  # overlap 2 over the team, balanced
    # the calibration set is the anchors not dealt silently (those are items, so a rater cannot tell an anchor by its place)
    assert e.counts["items"] == share and e.counts["anchors"] + e.counts["silent_anchors"] == 14
    secrets, raters = _secrets_of(team_study)
    data = out.read_bytes()
    leaks = [w for w in secrets if w in data]
    leaks += [r.encode() for r in raters - {"anaya"} if r.encode() in data]
    assert leaks == [], f"package leaks {leaks[:5]}"
    assert not any(out.parent.glob(".anaya.annot*")), "scratch files left behind"


def test_package_images_are_the_stored_bytes_and_the_file_has_no_free_page(team_study, tmp_path):
    """Images go into the finished file after VACUUM INTO (written once, not four times): each is
    byte for byte one of the study's stored images, the file keeps no free page that could hold
    anything, and it opens in the journal mode VACUUM INTO gives (no write-ahead log left)."""
    out = tmp_path / "anaya.annot"
    export_package(team_study, "anaya", out)
    stored = {p.read_bytes() for p in (team_study.folder / "media").rglob("*") if p.is_file()}
    conn = sqlite3.connect(out)
    try:
        blobs = [bytes(b) for (b,) in conn.execute("SELECT data FROM media_blobs")]
        linked = conn.execute("SELECT count(DISTINCT media_sha256) FROM item_media").fetchone()[0]
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert blobs and len(blobs) == linked and all(b in stored for b in blobs)
    assert not Path(str(out) + "-wal").exists() and not Path(str(out) + "-journal").exists()


def test_codes_are_per_rater(team_study, tmp_path):
    export_package(team_study, "anaya", tmp_path / "anaya.annot")
    export_package(team_study, "benito", tmp_path / "benito.annot")
    codes = {}
    for who in ("anaya", "benito"):
        with sqlite3.connect(tmp_path / f"{who}.annot") as c:
            codes[who] = {r[0] for r in c.execute("SELECT item_id FROM items WHERE is_anchor = 1")}
    assert not codes["anaya"] & codes["benito"]  # the same anchors, other codes
    with sqlite3.connect(team_study.folder / DB_NAME) as c:
        study_codes = {r[0] for r in c.execute("SELECT display_code FROM items")}
    assert not codes["anaya"] & study_codes


def _work(pkg_path: Path, n_items: int, n_pairs: int, *, back: bool = False) -> None:
    pkg = Study.open(pkg_path)
    try:
        rater = pkg.raters()[0].name
        ls = LabelSession(pkg, rater)
        for _ in range(n_items):
            it = ls.next()
            if it is None:
                break
            ls.submit(it, ALL, 7)
        if back:
            prev = ls.back()
            if prev is not None:
                ls.submit(prev, {**ALL, "layout_hierarchy": 1}, 7)  # a correction
        ps = PairSession(pkg, rater)
        for _ in range(n_pairs):
            sp = ps.next()
            if sp is None:
                break
            ps.vote(sp, "right", None, 5)
    finally:
        pkg.close()


def _count(study: Study, table: str) -> int:
    with sqlite3.connect(study.folder / DB_NAME) as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _answers(study: Study) -> set[tuple]:
    with sqlite3.connect(study.folder / DB_NAME) as c:
        j = {
            ("j", u, a, s)
            for u, a, s in c.execute("SELECT uuid, answers, supersedes IS NOT NULL FROM judgements")
        }
        v = {("v", u, ch) for u, ch in c.execute("SELECT uuid, choice FROM pair_votes")}
    return j | v


def test_working_in_a_package_then_merging_twice_adds_once(team_study, tmp_path, capsys):
    out = tmp_path / "anaya.annot"
    assert (
        main(
            [
                "package",
                "export",
                "--study",
                str(team_study.folder),
                "--rater",
                "anaya",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    _work(out, 6, 3, back=True)
    before = _answers(team_study)
    assert main(["package", "merge", str(out), "--study", str(team_study.folder)]) == 0
    once = _answers(team_study)
    assert len(once - before) == 7 + 3  # 6 answers (+ anchors among them), a correction, 3 votes
    capsys.readouterr()
    merges = _count(team_study, "merges")
    assert main(["package", "merge", str(out), "--study", str(team_study.folder)]) == 0
    assert _answers(team_study) == once
    # the same bytes again: answered from the lead's record of merges, the file not read again
    assert "nothing new (this very file was merged before)" in capsys.readouterr().out
    assert _count(team_study, "merges") == merges
    # one answer more makes another file: merged as any package is, its new answer added
    _work(out, 1, 0)
    assert main(["package", "merge", str(out), "--study", str(team_study.folder)]) == 0
    said = capsys.readouterr().out
    assert "merged before" not in said and "1 judgements" in said
    assert len(_answers(team_study) - once) == 1 and _count(team_study, "merges") == merges + 1
    assert main(["status", "--study", str(team_study.folder)]) == 0
    status = capsys.readouterr().out
    assert "merges:" in status and "anaya" in status


def test_status_queue_and_import_by_display_code_in_a_package(team_study, tmp_path, capsys):
    out = tmp_path / "benito.annot"
    e = export_package(team_study, "benito", out)
    assert main(["status", "--study", str(out), "--queue"]) == 0
    codes = capsys.readouterr().out.split()
    share = team_study.counts()["items"] * 2 // len(TEAM)
    # the silent anchors are in the queue as items
    assert e.counts["items"] == share and e.counts["silent_anchors"] >= 1
    assert len(codes) == share + e.counts["silent_anchors"] and all(
        len(c) == 7 and c[3] == "-" for c in codes
    )
    csv = tmp_path / "r.csv"
    csv.write_text(
        "item_id,rater,metric,value\n"
        + "".join(
            f"{codes[0]},benito,{k},{v if not isinstance(v, list) else ''}\n"
            for k, v in ALL.items()
        )
    )
    assert main(["import", "ratings", str(csv), "--study", str(out)]) == 0
    capsys.readouterr()
    csv.write_text(csv.read_text().replace(",benito,", ",anaya,"))
    assert main(["import", "ratings", str(csv), "--study", str(out)]) == 2
    assert "cannot go into it" in capsys.readouterr().err
    for argv in (
        ["import", "items", str(csv), "--study", str(out)],
        ["assign", "--study", str(out), "--raters", "x"],
        ["report", "--study", str(out), "--json", str(tmp_path / "r.json")],
    ):
        assert main(argv) == 2
        assert "not in a rater package" in capsys.readouterr().err
    assert main(["package", "merge", str(out), "--study", str(team_study.folder)]) == 0


def _refused(capsys, study: Study, path: Path, needle: str) -> None:
    before = _answers(study)
    with sqlite3.connect(study.folder / DB_NAME) as c:
        merges = c.execute("SELECT count(*) FROM merges").fetchone()[0]
    assert main(["package", "merge", str(path), "--study", str(study.folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err, err
    assert _answers(study) == before
    with sqlite3.connect(study.folder / DB_NAME) as c:
        assert c.execute("SELECT count(*) FROM merges").fetchone()[0] == merges


def test_tampered_truncated_and_foreign_packages_are_refused_with_nothing_written(
    team_study, demo_study_dir, tmp_path, capsys
):
    good = tmp_path / "anaya.annot"
    export_package(team_study, "anaya", good)
    _work(good, 4, 1)

    blob = tmp_path / "blob.annot"
    shutil.copy(good, blob)
    with sqlite3.connect(blob) as c:
        sha = c.execute("SELECT sha256 FROM media_blobs LIMIT 1").fetchone()[0]
        c.execute(
            "UPDATE media_blobs SET data = ? WHERE sha256 = ?", (b"\x89PNG not the image", sha)
        )
    _refused(capsys, team_study, blob, "does not match its hash")

    manifest = tmp_path / "manifest.annot"
    shutil.copy(good, manifest)
    with sqlite3.connect(manifest) as c:
        c.execute("UPDATE package_manifest SET rater = 'benito'")
    _refused(capsys, team_study, manifest, "does not match its manifest")

    unassigned = tmp_path / "unassigned.annot"
    shutil.copy(good, unassigned)
    with sqlite3.connect(team_study.folder / DB_NAME) as c:
        ben_only = c.execute(
            "SELECT rc.code FROM rater_codes rc JOIN raters r ON r.id = rc.rater_pk WHERE r.name = 'benito' "
            "AND rc.kind = 'item'"
        ).fetchall()
    with sqlite3.connect(unassigned) as c:
        c.execute(
            "UPDATE items SET item_id = ? WHERE id = (SELECT item_pk FROM judgements LIMIT 1)",
            (ben_only[0][0] if ben_only else "ZZZ-ZZZ",),
        )
    _refused(capsys, team_study, unassigned, "was not dealt to 'anaya'")

    truncated = tmp_path / "truncated.annot"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 3])
    _refused(capsys, team_study, truncated, "damaged or truncated")

    other = Study.open(copy_study(demo_study_dir, tmp_path / "other"))
    try:
        other.db.set_setting("study_id", "00000000-0000-4000-8000-000000000000")
        _refused(capsys, other, good, "belongs to another study")
    finally:
        other.close()

    with sqlite3.connect(team_study.folder / DB_NAME) as c:
        c.execute("UPDATE rubric_versions SET is_active = 0")
        c.execute(
            "INSERT INTO rubric_versions (version, rubric_id, canonical, is_active, created_at) "
            "SELECT 'f' || substr(version, 2), rubric_id, canonical, 1, created_at FROM rubric_versions"
        )
    team_study.close()
    team_study.__init__(team_study.folder, type(team_study.db)(team_study.folder / DB_NAME))
    _refused(capsys, team_study, good, "under another rubric version")


# ---- merge properties ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_team(demo_study_dir, tmp_path_factory) -> Path:
    folder = copy_study(demo_study_dir, tmp_path_factory.mktemp("base") / "lead")
    study = Study.open(folder)
    assign(study, ["anaya", "benito", "caius"], overlap=2, pair_overlap=1, seed=9)
    study.close()
    return folder


@pytest.mark.slow
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=st.lists(
        st.tuples(
            st.sampled_from(["anaya", "benito", "caius"]),
            st.integers(0, 4),
            st.integers(0, 2),
            st.booleans(),
        ),
        min_size=1,
        max_size=5,
    ),
    order_seed=st.randoms(use_true_random=False),
)
def test_merge_is_idempotent_and_order_independent(base_team, tmp_path_factory, plan, order_seed):
    """Raters work in rounds (export, label, partial returns); merging every package in any order,
    twice, gives the same study, every answer exactly once, chains intact."""
    tmp = tmp_path_factory.mktemp("prop")
    lead_a = copy_study(base_team, tmp / "a")
    sent: list[Path] = []
    study = Study.open(lead_a)
    try:
        rounds: dict[str, int] = Counter()
        for rater, n_items, n_pairs, corrections in plan:
            rounds[rater] += 1
            p = tmp / f"{rater}-{rounds[rater]}.annot"
            export_package(study, rater, p)  # a fresh package carries the rater's earlier answers
            _work(p, n_items, n_pairs, back=corrections)
            merge_package(study, p)  # the lead merges each return (so the next export includes it)
            sent.append(p)
    finally:
        study.close()
    expected = _answers(Study.open(lead_a))
    # a second lead merges the same files in a shuffled order, each twice
    lead_b = copy_study(base_team, tmp / "b")
    # the codes were minted in lead_a; the second lead must know them: copy the code table
    with sqlite3.connect(lead_a / DB_NAME) as src, sqlite3.connect(lead_b / DB_NAME) as dst:
        dst.executemany(
            "INSERT INTO rater_codes (id, rater_pk, kind, target_pk, code) VALUES (?, ?, ?, ?, ?)",
            src.execute("SELECT id, rater_pk, kind, target_pk, code FROM rater_codes").fetchall(),
        )
    order = sent * 2
    order_seed.shuffle(order)
    other = Study.open(lead_b)
    try:
        for p in order:
            merge_package(other, p)
    finally:
        other.close()
    got = _answers(Study.open(lead_b))
    assert got == expected
    with sqlite3.connect(lead_b / DB_NAME) as c:
        assert c.execute("SELECT count(*) FROM merge_conflicts").fetchone()[0] == 0
        # every correction's target is in the study, and every chain has one head per slot
        assert (
            c.execute(
                "SELECT count(*) FROM judgements j WHERE supersedes IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM judgements k WHERE k.id = j.supersedes)"
            ).fetchone()[0]
            == 0
        )
        assert (
            c.execute(
                "SELECT count(*) FROM (SELECT rater_pk, item_pk FROM judgements WHERE context = 'live' "
                "AND supersedes IS NULL GROUP BY rater_pk, item_pk HAVING count(*) > 1)"
            ).fetchone()[0]
            == 0
        )


def test_an_operator_gets_no_package(team_study, tmp_path):
    with pytest.raises(InputError, match="operator"):
        export_package(team_study, "ops-check", tmp_path / "ops.annot")


def test_assign_refuses_bad_designs(team_study, capsys):
    for argv, needle in (
        (["--raters", "ana,ana", "--overlap", "1"], "named twice"),
        (["--raters", "ana,ben", "--overlap", "3"], "needs at least 3 raters"),
        (["--raters", "anaya", "--overlap", "0"], "at least 1 rater"),
    ):
        assert main(["assign", "--study", str(team_study.folder), *argv]) == 2
        assert needle in capsys.readouterr().err
    assert json.loads(json.dumps(team_study.setting("assignment")))["overlap"] == 2


def test_assign_without_raters_deals_to_every_non_operator_rater(populated, capsys):
    """A lead who added the team with `rater add` need not list it again; the
    operator (a staff account) gets nothing; a study with no rater says what to give."""
    folder = str(populated.folder)
    populated.close()
    assert main(["assign", "--study", folder, "--overlap", "2"]) == 2
    err = capsys.readouterr().err
    assert "no raters yet" in err and "--raters" in err and len(err.strip().splitlines()) == 1
    for name in ("ana", "ben", "cai"):
        assert main(["rater", "add", name, "--study", folder]) == 0
    assert main(["rater", "add", "ops", "--study", folder, "--operator"]) == 0
    capsys.readouterr()
    assert main(["assign", "--study", folder, "--overlap", "2", "--seed", "5"]) == 0
    assert "to 3 raters (overlap 2" in capsys.readouterr().out
    with sqlite3.connect(Path(folder) / DB_NAME) as c:
        dealt = dict(
            c.execute(
                "SELECT r.name, count(*) FROM assignments a JOIN raters r ON r.id = a.rater_pk "
                "GROUP BY r.name"
            ).fetchall()
        )
    assert set(dealt) == {"ana", "ben", "cai"}
    assert main(["assign", "--study", folder, "--raters", "dee", "--overlap", "1"]) == 0
    assert " to 1 rater (overlap 1" in capsys.readouterr().out  # not "1 raters"


def test_status_lines_name_what_each_count_counts(team_study, capsys):
    """`status` printed 'judgements 461' beside a dashboard's 237 with no unit; each
    count line now says what it counts, and the stored answers are split into the live items
    answered (what the figures count) and the anchor answers."""
    assert main(["status", "--study", str(team_study.folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    counts = [ln for ln in out[1 : out.index("")] if ln.strip()]
    assert all(len(ln.split()) > 2 for ln in counts), counts  # a key, a number and its unit
    stored = next(ln for ln in counts if ln.startswith("judgements"))
    assert "answers stored" in stored and "anchors included" in stored
    live = next(ln for ln in counts if ln.startswith("  live ")).removeprefix("  live")
    anchor = next(ln for ln in counts if ln.startswith("  anchor ")).removeprefix("  anchor")
    with sqlite3.connect(team_study.folder / DB_NAME) as c:
        n_live = c.execute(
            "SELECT count(DISTINCT rater_pk || '-' || item_pk) FROM judgements "
            "WHERE context = 'live' AND supersedes IS NULL"
        ).fetchone()[0]
    assert int(live.split()[0]) == n_live and int(anchor.split()[0]) > 0
    assert int(stored.split()[1]) >= n_live + int(anchor.split()[0])


def test_report_carries_the_dealt_design_and_every_merge(team_study, tmp_path):
    """Contract 5.5's `assignment` and `merges` keys: what was dealt, how far each counted rater
    got, and each package merged (the report promised them and lacked them)."""
    from annotator.services.reporting import build_study_report

    out = tmp_path / "anaya.annot"
    export_package(team_study, "anaya", out)
    _work(out, 3, 0)
    merge_package(team_study, out)
    report = build_study_report(team_study, n_boot=20)
    dealt = report["assignment"]
    assert dealt["overlap"] == 2 and set(TEAM) <= set(dealt["raters"])
    assert "ops-check" not in dealt["raters"]  # an operator is not counted
    loads = [dealt["raters"][r]["assigned"] for r in TEAM]
    assert min(loads) > 0 and max(loads) - min(loads) <= 1
    # her 3 answers count as live items answered, but for any silent anchor her queue served
    with sqlite3.connect(team_study.folder / DB_NAME) as c:
        live = c.execute(
            "SELECT count(DISTINCT j.item_pk) FROM judgements j JOIN raters r ON r.id = j.rater_pk "
            "WHERE r.name = 'anaya' AND j.context = 'live'"
        ).fetchone()[0]
    assert 1 <= live <= 3 and dealt["raters"]["anaya"]["done"] == live
    assert dealt["raters"]["benito"]["done"] == 0
    (merge,) = report["merges"]
    assert merge["rater"] == "anaya" and merge["rows_added"]["judgements"] >= 3
    assert len(merge["package_sha256"]) == 64


def test_a_cached_report_carries_the_team_record_of_now(team_study, tmp_path):
    """The report cache (or the dashboard's kept report) never serves an old or missing
    `assignment` / `merges`: a package merged after the figures were kept shows in the next report."""
    from annotator.services.report_cache import cached_study_report

    first, _ = cached_study_report(team_study, n_boot=20, seed=4)
    assert first["merges"] == []
    out = tmp_path / "benito.annot"
    export_package(team_study, "benito", out)
    merge_package(team_study, out)  # nothing answered: no figure changes, the record does
    again, from_cache = cached_study_report(team_study, n_boot=20, seed=4)
    assert from_cache and [m["rater"] for m in again["merges"]] == ["benito"]
    assert again["assignment"]["overlap"] == 2

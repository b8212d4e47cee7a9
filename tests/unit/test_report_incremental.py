"""Reports at scale: the streamed bootstrap and the report cache give exactly the figures of a
full recomputation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from annotator.ingest.rubrics import load_rubric
from annotator.services import report_cache
from annotator.services.report_cache import cache_file, cached_study_report
from annotator.services.reporting import build_study_report
from annotator.stats import bootstrap, replicate_sums
from annotator.stats.frames import JUDGEMENT_COLUMNS, PAIR_COLUMNS, StudyFrames
from annotator.stats.item_weights import item_hashes, replicate_hashes, weights
from annotator.stats.report_model import build_report

REPO = Path(__file__).resolve().parents[2]
GENS = ["g0", "g1", "g2"]


def small_study(n_cases: int = 8, n_raters: int = 4, seed: int = 0) -> StudyFrames:
    """ui_mockup: gates, scales and tags from raters of unequal noise, a judge on a gate and a
    scale (one answer off the scale), pair votes; every statistic of the report has data."""
    rng = np.random.default_rng(seed)
    rubric = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
    tags = next(m for m in rubric.metrics if m.kind == "tags").options
    ids = [f"it{c:02d}{g}{r}" for c in range(n_cases) for g in range(3) for r in range(2)]
    n = len(ids)
    gen = np.array([int(i[4]) for i in ids])
    items = pd.DataFrame(
        {
            "item_id": ids,
            "display_code": [f"D{k:03d}" for k in range(n)],
            "case_id": [f"case{i[2:4]}" for i in ids],
            "cell_id": [f"cell{i[2:4]}" for i in ids],
            "generator": np.array(GENS)[gen],
            "slice": None,
        }
    )
    q = rng.normal(0, 1, n) + np.array([-0.6, 0.0, 0.6])[gen]
    rows = []
    for r in range(n_raters):
        noise = rng.normal(0, 0.5 + 0.2 * r, (4, n))
        for i in range(n):
            base = {
                "item_id": ids[i],
                "rater": f"rater{r}",
                "reason": "unclear header" if (i + r) % 5 == 0 else None,
                "created_at": None,
                "session_id": f"s{r}-{i // 12}",
                "position": i % 12,
            }
            picked = tuple(t for t in tags if rng.random() < 1 / (1 + np.exp(2 + 1.5 * q[i])))
            values = {
                "instruction_following": "PASS" if q[i] + noise[0, i] > -0.5 else "FAIL",
                "text_rendering": "PASS" if q[i] + noise[1, i] > -0.2 else "FAIL",
                "layout_hierarchy": int(np.clip(np.rint(2.8 + q[i] + noise[2, i]), 0, 5)),
                "ui_affordance": "cannot_judge"
                if (i * 7 + r) % 23 == 0
                else int(np.clip(np.rint(3 + 0.8 * q[i] + noise[3, i]), 0, 5)),
                "failure_tags": picked,
            }
            rows += [{**base, "metric": k, "value": v} for k, v in values.items()]
    judgements = pd.DataFrame(rows)[JUDGEMENT_COLUMNS]
    jq = q + rng.normal(0, 0.6, n)
    judge = pd.DataFrame(
        [
            {"item_id": ids[i], "judge": "judge-a", "metric": m, "value": v, "reason": "seen"}
            for i in range(n)
            for m, v in (
                ("instruction_following", "PASS" if jq[i] > -0.7 else "FAIL"),
                ("layout_hierarchy", 0.7 if i == 3 else int(np.clip(np.rint(3 + jq[i]), 0, 5))),
            )
        ]
    )
    votes = []
    for c in range(n_cases):
        for r in range(n_raters):
            a, b = rng.choice(3, 2, replace=False)
            left, right = f"it{c:02d}{a}0", f"it{c:02d}{b}0"
            votes.append(
                (
                    f"p{c}-{a}{b}",
                    f"case{c:02d}",
                    left,
                    right,
                    GENS[a],
                    GENS[b],
                    f"rater{r}",
                    "left" if q[ids.index(left)] + rng.normal() > q[ids.index(right)] else "right",
                    None,
                )
            )
    return StudyFrames(
        "incremental",
        rubric,
        items=items,
        judgements=judgements,
        judge_scores=judge,
        pair_votes=pd.DataFrame(votes, columns=PAIR_COLUMNS),
        settings={"release_gate": {"verdict_pass_rate": 0.5, "layout_hierarchy": 2.5}},
    )


def as_text(report: dict) -> str:
    return json.dumps(report, sort_keys=True, allow_nan=False)


def test_streamed_bootstrap_gives_bit_identical_reports(monkeypatch) -> None:
    """However the work is split (one replicate and one finalize row at a time, each sparse block
    in a group of its own; chunks of 16 items on two threads; every whole-number block dense, or
    every block sparse; blocks summed from triplets), every figure of the report is the same to the last bit: whole-number sums
    are exact and other sums follow the items' order."""
    frames = small_study(n_cases=6, n_raters=3)
    full = as_text(build_report(frames, n_boot=40, seed=3, n_perm=10))
    assert '"low": ' in full and '"n_boot": 40' in full
    splits = [
        {
            "_REP_COLS": 1,
            "_REP_ELEMS": 1,
            "_CHUNK_ELEMS": 1,
            "_FINALIZE_ELEMS": 1,
            "_THREADS": 1,
            "_SPARSE_NNZ": 1,
        },
        {"_DENSE_SHARE": 0.0, "_CHUNK_ITEMS": 16},
        {"_DENSE_SHARE": 2.0, "_REP_COLS": 10**12, "_REP_ELEMS": 10**12},
    ]
    for split in splits:
        with monkeypatch.context() as m:
            m.setattr(bootstrap, "_DENSE_BUILD", 0)
            for name, value in split.items():
                m.setattr(replicate_sums, name, value)
            assert as_text(build_report(frames, n_boot=40, seed=3, n_perm=10)) == full, split


def test_an_item_keeps_its_resample_weights_whatever_else_the_study_holds() -> None:
    keys = [f"item-{k}" for k in range(300)]
    reps = replicate_hashes(7, 0, 400)
    w = weights(reps, item_hashes(300, 7, keys))
    # other items added, removed and reordered: the same item, the same weights
    more = keys[::-1][:150] + ["new-a", "new-b"]
    w2 = weights(reps, item_hashes(len(more), 7, more))
    assert np.array_equal(w2[:, more.index("item-250")], w[:, 250])
    # a batch of replicates on its own is the same as part of the whole
    assert np.array_equal(
        weights(replicate_hashes(7, 100, 140), item_hashes(300, 7, keys)), w[100:140]
    )
    # Poisson(1) weights, independent across items and replicates (within a binomial band)
    assert abs(w.mean() - 1.0) < 4 * np.sqrt(1.0 / w.size)
    assert abs(w.var() - 1.0) < 0.03
    c = np.corrcoef(w[:, :40].T)[np.triu_indices(40, 1)]
    assert np.abs(c).max() < 5 / np.sqrt(400)
    # another seed, other weights
    assert not np.array_equal(weights(replicate_hashes(8, 0, 400), item_hashes(300, 8, keys)), w)


def test_weights_made_a_tile_at_a_time_are_the_hash_of_the_whole_block() -> None:
    """`weights` mixes a few rows at a time (item_weights._TILE); each weight is still the
    definition's: the Poisson(1) quantile at the top 16 bits of fmix32(item hash + replicate
    hash), computed here over the whole block at once."""
    from annotator.stats import item_weights as W

    def whole(reps: np.ndarray, items: np.ndarray, dtype: type, items_first: bool) -> np.ndarray:
        x = np.add.outer(items, reps) if items_first else np.add.outer(reps, items)
        x = W._mix(x.astype(np.uint32))
        return W._table(dtype)[x >> np.uint32(16)]

    for n_reps, n_items in ((1000, 300), (3, 200_000), (1, 1), (0, 5), (700, 4096)):
        reps, items = replicate_hashes(5, 10, 10 + n_reps), item_hashes(n_items, 5)
        for dtype in (np.float32, np.float64):
            for items_first in (False, True):
                got = weights(reps, items, dtype, items_first=items_first)
                want = whole(reps, items, dtype, items_first)
                assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_new_item_leaves_the_replicate_sums_of_the_others_unchanged() -> None:
    """The point of weights fixed per item: a report's replicate sums after an item is added are
    the old sums plus that item's weighted features (what an incremental refresh adds)."""
    rng = np.random.default_rng(1)
    keys = [f"i{k}" for k in range(50)]
    feats = rng.integers(0, 4, (51, 3)).astype(float)
    reps = replicate_hashes(0, 0, 200)
    old = weights(reps, item_hashes(50, 0, keys), np.float64) @ feats[:50]
    new = weights(reps, item_hashes(51, 0, [*keys, "i-new"]), np.float64) @ feats
    added = weights(reps, item_hashes(1, 0, ["i-new"]), np.float64) @ feats[50:]
    assert np.array_equal(new, old + added)


def ratings_csv(path: Path, raters: list[str], seed: int) -> Path:
    """Complete judgements of every item of `basic_rows` (3 cases x 3 generators)."""
    rng = np.random.default_rng(seed)
    lines = ["item_id,rater,metric,value"]
    for c in range(3):
        for g in range(3):
            for r in raters:
                good = rng.random() < 0.3 + 0.25 * g
                lines += [
                    f"it-{c}-{g},{r},instruction_following,{'PASS' if good else 'FAIL'}",
                    f"it-{c}-{g},{r},text_rendering,{'PASS' if rng.random() < 0.6 else 'FAIL'}",
                    f"it-{c}-{g},{r},layout_hierarchy,{int(rng.integers(1, 6)) if good else 1}",
                    f"it-{c}-{g},{r},ui_affordance,{int(rng.integers(0, 6))}",
                    f"it-{c}-{g},{r},failure_tags,{'' if good else 'wrong_screen_type'}",
                ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_report_cache_holds_until_the_study_changes(populated, tmp_path, monkeypatch) -> None:
    populated.import_ratings(ratings_csv(tmp_path / "r.csv", ["ann", "bob", "cy"], 0))
    first, hit = cached_study_report(populated, n_boot=40, seed=2)
    assert not hit and cache_file(populated, 40, 2).is_file()
    again, hit = cached_study_report(populated, n_boot=40, seed=2)
    assert hit and as_text(again) == as_text(first)
    assert as_text(first) == as_text(build_study_report(populated, n_boot=40, seed=2))
    # other resamples or another seed are kept apart
    assert cache_file(populated, 40, 3) != cache_file(populated, 40, 2)
    assert cache_file(populated, 41, 2) != cache_file(populated, 40, 2)
    # another rater's answers: recomputed, and equal to a full recomputation
    populated.import_ratings(ratings_csv(tmp_path / "more.csv", ["dee"], 1))
    after, hit = cached_study_report(populated, n_boot=40, seed=2)
    assert not hit and "dee" in after["raters"] and "dee" not in first["raters"]
    assert as_text(after) == as_text(build_study_report(populated, n_boot=40, seed=2))
    # a change to the figures' code is a miss too
    monkeypatch.setattr(report_cache, "code_version", lambda: "other code")
    stored = json.loads(cache_file(populated, 40, 2).read_text(encoding="utf-8").partition("\n")[2])
    assert stored["key"] != report_cache._key(populated)
    assert not cached_study_report(populated, n_boot=40, seed=2)[1]
    # a damaged file is recomputed (and replaced)
    cache_file(populated, 40, 2).write_text('{"key": {"data_vers', encoding="utf-8")
    fixed, hit = cached_study_report(populated, n_boot=40, seed=2)
    assert not hit and as_text(fixed) == as_text(after)
    assert cached_study_report(populated, n_boot=40, seed=2)[1]


def test_a_restored_backup_with_as_many_new_answers_is_recomputed(tmp_path) -> None:
    """Back the study up, add answers, report; copy the backup back and add as many other
    answers (the same row counts, the same largest ids): the kept figures are not published."""
    import shutil
    import sqlite3

    from factories import basic_rows, write_manifest

    from annotator.services.study import DB_NAME, Study

    folder = tmp_path / "st"
    study = Study.create(folder, "ui_mockup")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src)))
    study.import_ratings(ratings_csv(tmp_path / "base.csv", ["ann", "bob"], 0))
    study.close()
    backup = tmp_path / "backup.sqlite"
    live, copy = sqlite3.connect(folder / DB_NAME), sqlite3.connect(backup)
    live.backup(copy)
    live.close()
    copy.close()
    study = Study.open(folder)
    study.import_ratings(ratings_csv(tmp_path / "one.csv", ["cy"], 1))
    first, _ = cached_study_report(study, n_boot=40, seed=2)
    study.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{folder / DB_NAME}{suffix}").unlink(missing_ok=True)
    shutil.copy(backup, folder / DB_NAME)  # `cp` of the backup over the study
    study = Study.open(folder)
    try:
        study.import_ratings(ratings_csv(tmp_path / "two.csv", ["cy"], 7))  # other answers
        after, hit = cached_study_report(study, n_boot=40, seed=2)
        assert not hit
        assert as_text(after) == as_text(build_study_report(study, n_boot=40, seed=2))
        assert as_text(after) != as_text(first)
    finally:
        study.close()


def test_a_report_edited_by_hand_in_the_cache_is_not_published(populated, tmp_path) -> None:
    populated.import_ratings(ratings_csv(tmp_path / "r.csv", ["ann", "bob", "cy"], 0))
    first, _ = cached_study_report(populated, n_boot=40, seed=2)
    path = cache_file(populated, 40, 2)
    mac, _, body = path.read_text(encoding="utf-8").partition("\n")
    stored = json.loads(body)
    stored["report"]["metrics"]["instruction_following"]["human_alpha"]["estimate"] = 0.99
    path.write_text(mac + "\n" + json.dumps(stored), encoding="utf-8")  # same key, other figure
    again, hit = cached_study_report(populated, n_boot=40, seed=2)
    assert not hit and as_text(again) == as_text(first)


def test_a_cache_that_cannot_be_written_still_gives_the_report(populated, tmp_path) -> None:
    cache = Path(populated.folder) / report_cache.CACHE_DIR
    cache.write_text("a file where the cache folder goes", encoding="utf-8")  # mkdir fails
    report, hit = cached_study_report(populated, n_boot=20, seed=1)
    assert not hit and report["n_boot"] == 20
    assert cache.read_text(encoding="utf-8").startswith("a file")  # untouched
    # a report kept for a location that is not a folder (a server study) keeps nothing
    report_cache.keep_report(
        tmp_path / "not-a-folder", n_boot=20, seed=1, data_version="v", report=report
    )
    assert not (tmp_path / "not-a-folder").exists()
    assert report_cache.last_report(populated) is None


def test_the_dashboard_reads_the_report_kept_on_disk(populated, tmp_path, monkeypatch) -> None:
    """After a restart (or `annotator report`), the dashboard shows the kept figures of unchanged
    data without reading the answers or computing; a new answer is a recomputation."""
    from annotator.services import dashboard
    from annotator.stats import report_model

    populated.import_ratings(ratings_csv(tmp_path / "r.csv", ["ann", "bob", "cy"], 0))
    dashboard.CACHE.clear()
    fresh = dashboard.compute(dashboard.read_inputs(populated, n_boot=30, seed=4))
    dashboard.CACHE.clear()  # as after a restart: only the study's .cache/ is left

    def no_computing(*_a, **_k):
        raise AssertionError("the report was computed again")

    with monkeypatch.context() as m:
        m.setattr(report_model, "build_report", no_computing)
        inputs = dashboard.read_inputs(populated, n_boot=30, seed=4)
        assert inputs.frames is None and inputs.kept is not None
        again = dashboard.compute(inputs)
    assert as_text(dict(again.report)) == as_text(dict(fresh.report))
    assert again.tiles == fresh.tiles and again.sections == fresh.sections
    # the report `annotator report` keeps is read the same way, and the other way round
    assert cached_study_report(populated, n_boot=30, seed=4)[1]
    populated.import_ratings(ratings_csv(tmp_path / "more.csv", ["dee"], 1))
    dashboard.CACHE.clear()
    assert dashboard.read_inputs(populated, n_boot=30, seed=4).kept is None


def test_the_app_and_the_command_assemble_one_report(populated, tmp_path) -> None:
    """The dashboard's full computation and `annotator report` assemble their
    report in one place (reporting.study_report). The dashboard's lacked the warning naming an
    unreadable stored answer, and `annotator report` then published the report the dashboard
    had kept, without it."""
    import sqlite3

    from annotator.services import dashboard

    populated.import_ratings(ratings_csv(tmp_path / "r.csv", ["ann", "bob", "cy"], 0))
    with sqlite3.connect(Path(populated.folder) / "study.sqlite") as c:
        c.execute("UPDATE judgements SET answers = '{not json' WHERE id = 3")
    dashboard.CACHE.clear()
    app = dict(dashboard.compute(dashboard.read_inputs(populated, n_boot=30, seed=4)).report)
    command = build_study_report(populated, n_boot=30, seed=4)
    team = (
        "assignment",
        "merges",
        "answer_times",
    )  # the team's record: read fresh by each, never cached
    assert as_text({k: v for k, v in command.items() if k not in team}) == as_text(app)
    assert "judgements id 3" in app["warnings"][0]
    # what the app kept is what the command publishes, warning included
    kept, hit = cached_study_report(populated, n_boot=30, seed=4)
    assert hit and kept["warnings"] == app["warnings"]


def test_changed_data_shows_the_earlier_figures_marked_until_the_current_ones_come(
    populated, tmp_path, monkeypatch
) -> None:
    """What the dashboard shows at once after a restart on changed data: the report kept the last
    time, with the data version and time it was computed on, never served as current."""
    from annotator.services import dashboard

    populated.import_ratings(ratings_csv(tmp_path / "r.csv", ["ann", "bob", "cy"], 0))
    assert dashboard.read_earlier(populated, n_boot=30, seed=4) is None  # nothing kept yet
    dashboard.CACHE.clear()
    first = dashboard.compute(dashboard.read_inputs(populated, n_boot=30, seed=4))
    # unchanged data: the kept report is the current one, read by read_inputs, not "earlier"
    assert dashboard.read_earlier(populated, n_boot=30, seed=4) is None
    populated.import_ratings(ratings_csv(tmp_path / "more.csv", ["dee"], 1))
    dashboard.CACHE.clear()
    inputs = dashboard.read_earlier(populated, n_boot=30, seed=4)
    assert inputs is not None and inputs.frames is None
    assert inputs.data_version == first.data_version != dashboard.data_version(populated.db)
    earlier = dashboard.compute(inputs)
    assert earlier.earlier_at is not None and earlier.earlier_at.tzinfo is not None
    assert as_text(dict(earlier.report)) == as_text(dict(first.report))
    assert "dee" not in earlier.report["raters"]
    # never kept as the current figures: the current ones are computed and replace them
    current_inputs = dashboard.read_inputs(populated, n_boot=30, seed=4)
    assert current_inputs.cached is None and current_inputs.frames is not None
    current = dashboard.compute(current_inputs)
    assert current.earlier_at is None and "dee" in current.report["raters"]
    # other resamples or seed, or another code version: nothing earlier to show
    assert dashboard.read_earlier(populated, n_boot=31, seed=4) is None
    populated.import_ratings(ratings_csv(tmp_path / "third.csv", ["eve"], 2))
    assert dashboard.read_earlier(populated, n_boot=30, seed=4) is not None
    monkeypatch.setattr(report_cache, "code_version", lambda: "other code")
    assert dashboard.read_earlier(populated, n_boot=30, seed=4) is None

"""Store benchmarks: importing a 10,000-item manifest (small images) while a rater
submits, 10,000 single-answer durable commits, and on a 1,000,000-judgement study
the time to serve the next item, `PRAGMA quick_check` and opening the study.

Run: python tests/benchmarks/bench_store.py [--big]   (--big adds the 1M-judgement study)"""

from __future__ import annotations

import json
import multiprocessing
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from annotator.services.labeling import LabelSession  # noqa: E402
from annotator.services.study import Study  # noqa: E402

N = 10_000


def machine() -> str:
    try:
        model = next(
            line.split(":", 1)[1].strip()
            for line in subprocess.check_output(["lscpu"], text=True).splitlines()
            if line.startswith("Model name")
        )
    except Exception:
        model = platform.processor()
    return f"{model}, {subprocess.check_output(['nproc'], text=True).strip()} cores, Python {platform.python_version()}"


def bench_import(tmp: Path) -> float:
    src = tmp / "src"
    (src / "img").mkdir(parents=True)
    rows = []
    for i in range(N):
        p = src / "img" / f"{i}.png"
        Image.new("RGB", (32, 32), (i % 251, (i // 251) % 251, 7)).save(p)
        rows.append(
            {
                "item_id": f"it-{i}",
                "case_id": f"case-{i % 200}",
                "prompt": f"prompt {i % 200}",
                "generator": f"g{i % 5}",
                "images": [f"img/{i}.png"],
            }
        )
    (src / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = Study.create(tmp / "st", REPO / "rubrics" / "ui_mockup.toml")
    t = time.perf_counter()
    study.import_items(src / "m.jsonl")
    elapsed = time.perf_counter() - t
    study.close()
    return elapsed


ANSWERS = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
    "reason": "",
}


def _rater_during_import(folder: str, stop, out) -> None:
    """A rater submitting every 50 ms while the import runs; reports each submit's wait."""
    from annotator.store import answers as store

    study = Study.open(folder)
    session = LabelSession(study, "waiting-rater")
    waits, pk = [], 0
    while not stop.is_set():
        pk += 1
        t0 = time.perf_counter()
        store.submit(
            study.db,
            rater="waiting-rater",
            item_pk=pk,
            version=study.rubric.version,
            session_pk=session.session_pk,
            answers=ANSWERS,
            reason=None,
            time_ms=1,
        )
        waits.append(time.perf_counter() - t0)
        time.sleep(0.05)
    study.close()
    out.put(waits)


def bench_import_with_rater(tmp: Path) -> tuple[float, list[float]]:
    """The 10,000-item import again (new items) while a rater submits: the import's one
    transaction holds the write lock only for its database phase."""
    src = tmp / "src2"
    (src / "img").mkdir(parents=True)
    rows = []
    for i in range(N):
        p = src / "img" / f"{i}.png"
        Image.new("RGB", (32, 32), (i % 251, 7, (i // 251) % 251)).save(p)
        rows.append(
            {
                "item_id": f"more-{i}",
                "case_id": f"case-{i % 200}",
                "prompt": f"prompt {i % 200}",
                "generator": f"h{i % 5}",
                "images": [f"img/{i}.png"],
            }
        )
    (src / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = Study.open(tmp / "st")
    study.add_rater("waiting-rater")
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_rater_during_import, args=(str(tmp / "st"), stop, out))
    proc.start()
    time.sleep(2.0)  # the rater is submitting before the import starts
    t = time.perf_counter()
    study.import_items(src / "m.jsonl")
    elapsed = time.perf_counter() - t
    time.sleep(0.5)
    stop.set()
    waits = out.get(timeout=60)
    proc.join()
    study.close()
    return elapsed, waits


def study_of_items(folder: Path, rows: list[dict], raters: list[str]) -> Path:
    """A study of the manifest `rows` (each showing one 8x8 image as img/one.png) and `raters`."""
    study = Study.create(folder, REPO / "rubrics" / "ui_mockup.toml")
    src = folder.parent / f"{folder.name}-src"
    (src / "img").mkdir(parents=True)
    Image.new("RGB", (8, 8), (1, 2, 3)).save(src / "img" / "one.png")
    (src / "m.jsonl").write_text(
        "".join(json.dumps({**r, "images": ["img/one.png"]}) + "\n" for r in rows)
    )
    study.import_items(src / "m.jsonl")
    for name in raters:
        study.add_rater(name)
    study.close()
    return folder


def insert_live_answers(
    folder: Path, answers: Callable[[int, int], str], session_size: int | None = None
) -> None:
    """Every rater answers every item by raw inserts (quick to build; the app's own writes are
    timed apart): `answers(rater index, item index)` gives the answers' JSON.

    Without `session_size` the answers are imported ones (no session, no order). With it they
    are as the app stores them: each rater meets the items in an order of their own, in labelling
    sessions of that many items, each answer three seconds after the one before (the raters'
    session places and fatigue figures read them)."""
    c = sqlite3.connect(folder / "study.sqlite")
    version = c.execute("SELECT version FROM rubric_versions WHERE is_active").fetchone()[0]
    rater_ids = [r[0] for r in c.execute("SELECT id FROM raters ORDER BY id")]
    item_ids = [r[0] for r in c.execute("SELECT id FROM items ORDER BY id")]
    c.execute("BEGIN")
    start = datetime(2026, 11, 30)
    for r, rid in enumerate(rater_ids):
        if session_size is None:
            c.executemany(
                "INSERT INTO judgements (rater_pk, item_pk, rubric_version, context, answers, "
                "source, created_at) VALUES (?, ?, ?, 'live', ?, 'import', '2026-11-30')",
                [(rid, it, version, answers(r, i)) for i, it in enumerate(item_ids)],
            )
            continue
        order = np.random.default_rng(r).permutation(len(item_ids))
        rows = []
        for k in range(0, len(order), session_size):
            at = start + timedelta(days=k // session_size)
            cur = c.execute(
                "INSERT INTO sessions (rater_pk, mode, started_at) VALUES (?, 'label', ?)",
                (rid, at.isoformat(sep=" ")),
            )
            for q, i in enumerate(order[k : k + session_size].tolist()):
                made = (at + timedelta(seconds=3 * (q + 1))).isoformat(sep=" ")
                rows.append(
                    (rid, item_ids[i], version, cur.lastrowid, q, answers(r, i), 3000, made)
                )
        c.executemany(
            "INSERT INTO judgements (rater_pk, item_pk, rubric_version, session_pk, context, "
            "queue_position, answers, time_ms, source, created_at) "
            "VALUES (?, ?, ?, ?, 'live', ?, ?, ?, 'app', ?)",
            rows,
        )
    c.execute("COMMIT")
    c.close()


def build_big(tmp: Path, n_items: int = 20_000, n_raters: int = 50) -> Path:
    """A study with n_items x n_raters = 1,000,000 current judgements, all alike."""
    rows = [
        {
            "item_id": f"b-{i}",
            "case_id": f"case-{i % 500}",
            "prompt": f"prompt {i % 500}",
            "generator": f"g{i % 8}",
        }
        for i in range(n_items)
    ]
    folder = study_of_items(tmp / "big", rows, [f"r{r:02d}" for r in range(n_raters)])
    same = json.dumps(ANSWERS, sort_keys=True)
    insert_live_answers(folder, lambda _r, _i: same)
    return folder


def bench_big(tmp: Path) -> dict[str, float]:
    folder = build_big(tmp)
    out: dict[str, float] = {}
    t = time.perf_counter()
    from annotator.store.engine import quick_check_file

    quick_check_file(folder / "study.sqlite")
    out["quick_check_s"] = time.perf_counter() - t
    t = time.perf_counter()
    study = Study.open(folder)
    out["open_s"] = time.perf_counter() - t
    study.add_rater("fresh")
    t = time.perf_counter()
    session = LabelSession(study, "fresh")  # builds a 20,000-entry queue
    out["first_session_s"] = time.perf_counter() - t
    lat = []
    for _ in range(200):
        t0 = time.perf_counter()
        item = session.next()
        lat.append(time.perf_counter() - t0)
        session.submit(item, ANSWERS, 1)
    lat.sort()
    out["next_median_ms"] = statistics.median(lat) * 1000
    out["next_p95_ms"] = lat[int(0.95 * len(lat))] * 1000
    out["db_mb"] = (folder / "study.sqlite").stat().st_size / 1e6
    study.close()
    return out


def bench_commits(tmp: Path) -> tuple[float, list[float]]:
    study = Study.open(tmp / "st")
    study.add_rater("bench")
    session = LabelSession(study, "bench")
    answers = ANSWERS
    from annotator.store import answers as store

    item_pks = list(range(1, N + 1))
    lat = []
    t = time.perf_counter()
    for pk in item_pks:
        t0 = time.perf_counter()
        store.submit(
            study.db,
            rater="bench",
            item_pk=pk,
            version=study.rubric.version,
            session_pk=session.session_pk,
            answers=answers,
            reason=None,
            time_ms=1,
        )
        lat.append(time.perf_counter() - t0)
    total = time.perf_counter() - t
    study.close()
    return total, lat


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        imp = bench_import(tmp)
        total, lat = bench_commits(tmp)
        imp2, waits = bench_import_with_rater(tmp)
        big = bench_big(tmp) if "--big" in sys.argv else None
    lat.sort()
    print(f"machine: {machine()}")
    print(f"import 10,000-item manifest (32x32 PNGs): {imp:.1f} s ({N / imp:.0f} items/s)")
    print(
        f"10,000 durable single-answer commits: {total:.1f} s, {N / total:.0f} commits/s, "
        f"median {statistics.median(lat) * 1000:.2f} ms, p95 {lat[int(0.95 * N)] * 1000:.2f} ms"
    )
    print(
        f"import 10,000 more items while a rater submits every 50 ms: {imp2:.1f} s; "
        f"{len(waits)} submits, longest wait {max(waits) * 1000:.0f} ms, "
        f"median {statistics.median(waits) * 1000:.1f} ms"
    )
    if big:
        print(
            f"1,000,000-judgement study ({big['db_mb']:.0f} MB): quick_check {big['quick_check_s']:.2f} s, "
            f"open {big['open_s']:.2f} s, first session (20,000-entry queue) {big['first_session_s']:.2f} s, "
            f"next item median {big['next_median_ms']:.2f} ms, p95 {big['next_p95_ms']:.2f} ms"
        )

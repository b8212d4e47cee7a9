"""Team workflow benchmarks: exporting a 2,000-item rater package with 1024 px images, and
merging 20 packages of 1,000 answers each (then the same 20 again: a no-op).

Run: python tests/benchmarks/bench_team.py [--export-items N] [--packages K] [--answers M]
(the defaults are the figures of the README; smaller ones for a quick before/after on a busy
machine)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))

from bench_store import machine  # noqa: E402

from annotator.services.labeling import LabelSession  # noqa: E402
from annotator.services.packages import export_package, merge_package  # noqa: E402
from annotator.services.study import Study  # noqa: E402
from annotator.store import answers as store  # noqa: E402

ANSWERS = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
    "reason": "benchmark",
}


def photo_like(rng: np.random.Generator, size: int = 1024) -> Image.Image:
    """Smooth structure plus fine noise: compresses like a rendered image, not like pure noise."""
    low = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    im = Image.fromarray(low).resize((size, size), Image.BICUBIC)
    a = np.asarray(im).astype(np.int16) + rng.integers(-6, 7, (size, size, 3), dtype=np.int16)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def make_study(tmp: Path, n: int, size: int, name: str) -> Study:
    rng = np.random.default_rng(1)
    src = tmp / f"{name}-src"
    (src / "img").mkdir(parents=True)
    rows = []
    for i in range(n):
        p = src / "img" / f"{i}.png"
        if size >= 64 or i == 0:
            photo_like(rng, size).save(p, compress_level=1)
        rows.append(
            {
                "item_id": f"it-{i}",
                "case_id": f"case-{i % 100}",
                "prompt": f"screen {i % 100}",
                "generator": f"g{i % 5}",
                "images": [f"img/{i if size >= 64 else 0}.png"],
            }
        )
    (src / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = Study.create(tmp / name, REPO / "rubrics" / "ui_mockup.toml")
    study.db.set_setting("anchor_every", 0)
    study.import_items(src / "m.jsonl")
    return study


def bench_export(tmp: Path, n: int = 2000) -> tuple[float, float, float]:
    study = make_study(tmp, n, 1024, "big-images")
    study.add_rater("rae")
    media_mb = sum(p.stat().st_size for p in (study.folder / "media").rglob("*.png")) / 1e6
    t = time.perf_counter()
    e = export_package(study, "rae", tmp / "rae.annot")
    elapsed = time.perf_counter() - t
    study.close()
    return elapsed, e.n_bytes / 1e6, media_mb


def bench_merge(tmp: Path, k: int = 20, m: int = 1000) -> tuple[float, float, int]:
    study = make_study(tmp, m, 8, "merge")
    raters = [f"rater{i:02d}" for i in range(k)]
    for r in raters:
        study.add_rater(r)
    packages = []
    for r in raters:
        p = tmp / f"{r}.annot"
        export_package(study, r, p)
        pkg = Study.open(p)
        session = LabelSession(pkg, r)
        version = pkg.rubric.version
        with pkg.db.read() as s:
            from sqlalchemy import text

            pks = [
                row[0]
                for row in s.execute(text("SELECT id FROM items WHERE is_anchor = 0 ORDER BY id"))
            ]
        for pk in pks:  # m answers, each its own durable commit as in the app
            store.submit(
                pkg.db,
                rater=r,
                item_pk=pk,
                version=version,
                session_pk=session.session_pk,
                answers=ANSWERS,
                reason="benchmark",
                time_ms=1,
            )
        pkg.close()
        packages.append(p)
    t = time.perf_counter()
    added = sum(merge_package(study, p).added["judgements"] for p in packages)
    first = time.perf_counter() - t
    t = time.perf_counter()
    for p in packages:
        merge_package(study, p)
    again = time.perf_counter() - t
    study.close()
    return first, again, added


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--export-items", type=int, default=2000)
    ap.add_argument("--packages", type=int, default=20)
    ap.add_argument("--answers", type=int, default=1000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        exp, size, media = bench_export(tmp, a.export_items)
        first, again, added = bench_merge(tmp, a.packages, a.answers)
    print(f"machine: {machine()}")
    print(
        f"export a {a.export_items:,}-item package, 1024x1024 images: {exp:.1f} s, {size:.0f} MB "
        f"(the study's media folder: {media:.0f} MB)"
    )
    print(
        f"merge {a.packages} packages x {a.answers:,} answers: {first:.1f} s ({added} judgements "
        f"added); the same {a.packages} again: {again:.1f} s (nothing added)"
    )

"""Team workflow benchmarks: exporting a 2,000-item rater package with 1024 px images, and
merging 20 packages of 1,000 answers each (then the same 20 again: a no-op).

Run: python tests/benchmarks/bench_team.py [--export-items N] [--packages K] [--answers M]
     [--before CHECKOUT] [--rounds R]
(the defaults are the figures of the README; smaller ones for a quick before/after on a busy
machine). With --before (another checkout, e.g. `git worktree add /tmp/before <rev>`), the same
study and packages are exported and merged by that checkout's code and by this one in turn,
each in its own process, R rounds: the before and after figures of one run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
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
from sqlalchemy import text  # noqa: E402

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


def _packages(tmp: Path, k: int, m: int, pkgs: Path) -> Path:
    """A study of m items and k raters, and in `pkgs` each rater's package with m answers (each
    its own durable commit, as in the app); returns the study's folder."""
    study = make_study(tmp, m, 8, "merge")
    raters = [f"rater{i:02d}" for i in range(k)]
    for r in raters:
        study.add_rater(r)
    pkgs.mkdir(parents=True, exist_ok=True)
    for r in raters:
        p = pkgs / f"{r}.annot"
        export_package(study, r, p)
        pkg = Study.open(p)
        session = LabelSession(pkg, r)
        version = pkg.rubric.version
        with pkg.db.read() as s:
            pks = [
                row[0]
                for row in s.execute(text("SELECT id FROM items WHERE is_anchor = 0 ORDER BY id"))
            ]
        for pk in pks:
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
    folder = study.folder
    study.close()
    return folder


def bench_merge(tmp: Path, k: int = 20, m: int = 1000) -> tuple[float, float, int]:
    folder = _packages(tmp, k, m, tmp / "packages")
    packages = sorted((tmp / "packages").glob("*.annot"))
    study = Study.open(folder)
    t = time.perf_counter()
    added = sum(merge_package(study, p).added["judgements"] for p in packages)
    first = time.perf_counter() - t
    t = time.perf_counter()
    for p in packages:
        merge_package(study, p)
    again = time.perf_counter() - t
    study.close()
    return first, again, added


_EXPORT = """
import sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from annotator.services.packages import export_package
from annotator.services.study import Study
st = Study.open(Path({study!r}))
t = time.perf_counter()
e = export_package(st, "rae", Path({out!r}))
print(f"{{time.perf_counter() - t:.1f}} s, {{e.n_bytes / 1e6:.0f}} MB")
st.close()
"""
_MERGE = """
import sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from annotator.services.packages import merge_package
from annotator.services.study import Study
st = Study.open(Path({study!r}))
pk = sorted(Path({pkgs!r}).glob("*.annot"))
t = time.perf_counter()
added = sum(merge_package(st, p).added["judgements"] for p in pk)
first = time.perf_counter() - t
t = time.perf_counter()
again = sum(merge_package(st, p).added["judgements"] for p in pk)
print(f"{{first:.2f}} s ({{added}} added), again {{time.perf_counter() - t:.2f}} s ({{again}} added)")
st.close()
"""


def _in(repo: Path, code: str) -> str:
    """Run `code` with `repo`'s annotator, in a process of its own; its one line of output."""
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=False
    )
    return r.stdout.strip() or r.stderr.strip().splitlines()[-1]


def before_after(tmp: Path, before: Path, n: int, k: int, m: int, rounds: int) -> None:
    """Export and merge by `before`'s code and this checkout's in turn, on one study."""
    study = make_study(tmp, n, 1024, "big-images")
    study.add_rater("rae")
    study.close()
    pkgs = tmp / "packages"
    merge_study = _packages(tmp, k, m, pkgs)
    for r in range(rounds):
        for name, repo in (("before", before), ("after", REPO)):
            out = tmp / f"{name}.annot"
            args = dict(repo=str(repo), study=str(tmp / "big-images"), out=str(out))
            print(f"round {r + 1} {name}: export {_in(repo, _EXPORT.format(**args))}", flush=True)
            out.unlink(missing_ok=True)
            work = tmp / f"merge-{name}"
            shutil.copytree(merge_study, work)
            args = dict(repo=str(repo), study=str(work), pkgs=str(pkgs))
            print(f"round {r + 1} {name}: merge {_in(repo, _MERGE.format(**args))}", flush=True)
            shutil.rmtree(work)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--export-items", type=int, default=2000)
    ap.add_argument("--packages", type=int, default=20)
    ap.add_argument("--answers", type=int, default=1000)
    ap.add_argument("--before", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if a.before is not None:
            before_after(tmp, a.before, a.export_items, a.packages, a.answers, a.rounds)
            sys.exit(0)
        exp, size, media = bench_export(tmp, a.export_items)
        first, again, added = bench_merge(tmp, a.packages, a.answers)
    print(
        f"export a {a.export_items:,}-item package, 1024x1024 images: {exp:.1f} s, {size:.0f} MB "
        f"(the study's media folder: {media:.0f} MB)"
    )
    print(
        f"merge {a.packages} packages x {a.answers:,} answers: {first:.1f} s ({added} judgements "
        f"added); the same {a.packages} again: {again:.1f} s (nothing added)"
    )

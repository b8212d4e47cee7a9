"""Foundation benchmarks: importing a 10,000-item manifest (small images) and
10,000 single-answer durable commits. Run: python tests/benchmarks/bench_store.py"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from annotator.services.labeling import LabelSession  # noqa: E402
from annotator.services.study import Study  # noqa: E402

N = 10_000


def machine() -> str:
    try:
        model = next(line.split(":", 1)[1].strip() for line in subprocess.check_output(["lscpu"], text=True).splitlines()
                     if line.startswith("Model name"))
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
        rows.append({"item_id": f"it-{i}", "case_id": f"case-{i % 200}", "prompt": f"prompt {i % 200}",
                     "generator": f"g{i % 5}", "images": [f"img/{i}.png"]})
    (src / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = Study.create(tmp / "st", REPO / "rubrics" / "ui_mockup.toml")
    t = time.perf_counter()
    study.import_items(src / "m.jsonl")
    elapsed = time.perf_counter() - t
    study.close()
    return elapsed


def bench_commits(tmp: Path) -> tuple[float, list[float]]:
    study = Study.open(tmp / "st")
    study.add_rater("bench")
    session = LabelSession(study, "bench")
    answers = {"instruction_following": "PASS", "layout_hierarchy": 4, "text_rendering": "PASS",
               "ui_affordance": 4, "failure_tags": [], "reason": ""}
    from annotator.store import answers as store

    item_pks = list(range(1, N + 1))
    lat = []
    t = time.perf_counter()
    for pk in item_pks:
        t0 = time.perf_counter()
        store.submit(study.db, rater="bench", item_pk=pk, version=study.rubric.version, session_pk=session.session_pk,
                     answers=answers, reason=None, time_ms=1)
        lat.append(time.perf_counter() - t0)
    total = time.perf_counter() - t
    study.close()
    return total, lat


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        imp = bench_import(tmp)
        total, lat = bench_commits(tmp)
    lat.sort()
    print(f"machine: {machine()}")
    print(f"import 10,000-item manifest (32x32 PNGs): {imp:.1f} s ({N / imp:.0f} items/s)")
    print(f"10,000 durable single-answer commits: {total:.1f} s, {N / total:.0f} commits/s, "
          f"median {statistics.median(lat) * 1000:.2f} ms, p95 {lat[int(0.95 * N)] * 1000:.2f} ms")

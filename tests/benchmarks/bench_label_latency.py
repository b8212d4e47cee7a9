"""Label view latency: key press (submit) to the next item painted, and cold start.

    python tests/benchmarks/bench_label_latency.py [--items 24] [--out tests/benchmarks/ui.md]

For 1024x1024 and 2048x2048 PNG outputs, with the next items decoded ahead
(prefetch) and without (decoded once served). The latency covers the whole
path: the durable commit on the database worker (WAL, synchronous=FULL), the
next item query, the signal back to the UI thread, and the first paint of the
new item's picture. Between items the benchmark waits as a rater would (and
lets the prefetcher finish), then presses Enter.

Cold start: wall time of a child process that starts the app on a study with a
rater and quits as soon as the label view is interactive.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

import annotator.ui  # noqa: E402,F401 - PySide6 refcount fix first
from annotator.services.study import Study  # noqa: E402

RATER = "bench-rater"


def make_png(path: Path, size: int, seed: int) -> None:
    """A photo-like picture: smooth gradients plus fine noise (PNG cannot shrink it much)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    base = np.stack([np.sin(6 * x + seed) * 0.5 + 0.5, np.cos(5 * y - seed) * 0.5 + 0.5,
                     (x + y) / 2], axis=-1) * 200
    noise = rng.normal(0, 12, (size, size, 3))
    Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(path, compress_level=6)


def build(root: Path, size: int, n: int) -> Path:
    src = root / f"src{size}"
    src.mkdir(parents=True)
    lines = []
    import json

    for i in range(n):
        name = f"img_{i:03d}.png"
        make_png(src / name, size, i)
        lines.append(json.dumps({"item_id": f"b{i:03d}", "case_id": f"c{i % 6}", "prompt": f"Prompt {i % 6}",
                                 "criteria": "Criteria", "generator": f"g{i % 3}", "images": [name]}))
    (src / "m.jsonl").write_text("\n".join(lines) + "\n")
    folder = root / f"study{size}"
    s = Study.create(folder, REPO / "rubrics" / "ui_mockup.toml")
    s.import_items(src / "m.jsonl")
    s.db.set_setting("anchor_every", 0)
    s.add_rater(RATER)
    s.close()
    return folder


ANSWERS = {"instruction_following": "PASS", "layout_hierarchy": 4, "text_rendering": "PASS",
           "ui_affordance": 3, "failure_tags": []}


def measure(folder: Path, prefetch: bool, n: int) -> list[float]:
    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from annotator.ui.label_view import LabelView
    from annotator.ui.settings import AppSettings
    from annotator.ui.worker import DbWorker, ImagePrefetcher

    app = QApplication.instance() or QApplication([])
    worker = DbWorker()
    study = worker.call(Study.open, folder)
    pre = ImagePrefetcher(study.media.read)
    settings = AppSettings(Path(tempfile.mkdtemp()) / "s.ini")
    view = LabelView(study, RATER, worker, settings, prefetcher=pre, prefetch_ahead=3 if prefetch else 0)
    view.resize(1400, 900)
    view.show()
    worker.wait_idle(30)
    t_end = time.monotonic() + 30
    while view.state != "ready" and time.monotonic() < t_end:
        app.processEvents()
    lat: list[float] = []
    state: dict = {}
    loop = QEventLoop()

    def on_paint() -> None:
        if "t0" not in state or "t1" in state or view.state != "ready":
            return
        views = view.item_panel.views()
        if view.current_item is None or view.current_item.item_pk == state["from"]:
            return
        if views and all(v.image() is not None for v in views):
            state["t1"] = time.perf_counter()
            loop.quit()

    for t in view.item_panel.tiles:
        t.view.painted.connect(on_paint)
    for _ in range(n - 1):
        # A rater looks at the item for a while (seconds; here 0.3 s): the peek at the
        # next items and their decoding finish in that time.
        looked = time.monotonic() + 0.3
        for _ in range(2000):
            app.processEvents()
            if (time.monotonic() > looked and pre.pending == 0 and not worker.busy
                    and not view.item_panel.waiting_for()):
                break
            time.sleep(0.005)
        app.processEvents()
        if not prefetch:
            pre.clear()  # nothing decoded ahead: the next item's picture is decoded when served
        view.form.set_answers(ANSWERS)
        state = {"from": view.current_item.item_pk, "t0": time.perf_counter()}
        QTest.keyClick(view, Qt.Key.Key_Return)
        QTimer.singleShot(10_000, loop.quit)
        if "t1" not in state:
            loop.exec()
        if "t1" in state:
            lat.append((state["t1"] - state["t0"]) * 1000)
        for t in view.item_panel.tiles:  # new tiles may have been made
            try:
                t.view.painted.disconnect(on_paint)
            except (RuntimeError, TypeError):
                pass
            t.view.painted.connect(on_paint)
    view.shutdown()
    view.close()
    pre.stop()
    worker.call(study.close)
    worker.stop()
    return lat


def cold_start(folder: Path, runs: int = 5) -> list[tuple[float, float]]:
    out = []
    code = ("import sys; from annotator.ui.app import run_app; "
            f"sys.exit(run_app({str(folder)!r}, {RATER!r}))")
    for _ in range(runs):
        env = dict(os.environ, ANNOTATOR_QUIT_WHEN_READY="1", QT_QPA_PLATFORM="offscreen",
                   ANNOTATOR_SETTINGS=str(Path(tempfile.mkdtemp()) / "s.ini"))
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
        wall = time.perf_counter() - t0
        ready = next((float(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("ready ")), float("nan"))
        if r.returncode != 0:
            raise SystemExit(f"cold start failed: {r.stderr[-2000:]}")
        out.append((wall, ready))
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=24)
    ap.add_argument("--out", type=Path, default=None, help="write the markdown table here")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_label_"))
    rows = []
    studies = {}
    for size in (1024, 2048):
        t = time.perf_counter()
        studies[size] = build(root, size, a.items)
        print(f"built {a.items} items at {size}x{size} in {time.perf_counter() - t:.1f} s", flush=True)
        for prefetch in (True, False):
            # A fresh copy of the study per run: every run answers the same items.
            run_folder = root / f"run{size}{'p' if prefetch else 'n'}"
            subprocess.run(["cp", "-r", str(studies[size]), str(run_folder)], check=True)
            lat = measure(run_folder, prefetch, a.items)
            row = (size, prefetch, len(lat), statistics.median(lat), pct(lat, 0.95), max(lat))
            rows.append(row)
            print(f"{size}x{size} prefetch={'on ' if prefetch else 'off'} n={row[2]} "
                  f"median={row[3]:.1f} ms p95={row[4]:.1f} ms max={row[5]:.1f} ms", flush=True)
    cs = cold_start(studies[1024])
    walls = [w for w, _ in cs]
    readys = [r for _, r in cs]
    print(f"cold start to interactive label view: median {statistics.median(walls):.2f} s "
          f"(max {max(walls):.2f} s; in-process ready median {statistics.median(readys):.2f} s)")
    machine = f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, offscreen Qt"
    md = [
        "| image | prefetch | n | median (ms) | p95 (ms) | max (ms) |",
        "|---|---|---|---|---|---|",
        *[f"| {s}x{s} | {'on' if p else 'off'} | {n} | {m:.1f} | {q:.1f} | {x:.1f} |" for s, p, n, m, q, x in rows],
        "",
        f"Cold start to an interactive label view (child process wall time, {len(walls)} runs): "
        f"median {statistics.median(walls):.2f} s, max {max(walls):.2f} s.",
        "",
        f"Machine: {machine}.",
    ]
    print("\n".join(md))
    if a.out:
        a.out.write_text("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

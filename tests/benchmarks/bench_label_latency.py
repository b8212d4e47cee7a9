"""Label view latency: key press (submit) to the next item painted, cold start, and the
dashboard's first computation and cached reopen.

    python tests/benchmarks/bench_label_latency.py [--items 24] [--out tests/benchmarks/ui.md] [--no-dashboard]

For 1024x1024 and 2048x2048 PNG outputs, with the next items decoded ahead
(prefetch) and without (decoded once served), and a 1024x1024 editing case
(input beside output, edit mask outlined: the overlay is computed in the decode
job) measured in the same run as the unmasked baseline. The latency covers the whole
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
from annotator.services.study import Study  # noqa: E402 - used to build the bench studies

RATER = "bench-rater"


def make_png(path: Path, size: int, seed: int) -> None:
    """A photo-like picture: smooth gradients plus fine noise (PNG cannot shrink it much)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    base = (
        np.stack(
            [np.sin(6 * x + seed) * 0.5 + 0.5, np.cos(5 * y - seed) * 0.5 + 0.5, (x + y) / 2],
            axis=-1,
        )
        * 200
    )
    noise = rng.normal(0, 12, (size, size, 3))
    Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(path, compress_level=6)


def make_mask(path: Path, size: int, seed: int) -> None:
    """White = the edited region: an ellipse off centre."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    cx, cy = 0.4 + 0.02 * (seed % 5), 0.5
    inside = ((x - cx) / 0.25) ** 2 + ((y - cy) / 0.18) ** 2 <= 1
    Image.fromarray(np.where(inside, 255, 0).astype(np.uint8)).save(path)


def build(root: Path, size: int, n: int, *, masked: bool = False) -> Path:
    tag = f"{size}{'m' if masked else ''}"
    src = root / f"src{tag}"
    src.mkdir(parents=True)
    lines = []
    import json

    for i in range(n):
        name = f"img_{i:03d}.png"
        make_png(src / name, size, i)
        rec = {
            "item_id": f"b{i:03d}",
            "case_id": f"c{i % 6}",
            "prompt": f"Prompt {i % 6}",
            "criteria": "Criteria",
            "generator": f"g{i % 3}",
            "images": [name],
        }
        if masked:
            make_png(src / f"in_{i:03d}.png", size, 1000 + i)
            make_mask(src / f"mask_{i:03d}.png", size, i)
            rec |= {"inputs": [f"in_{i:03d}.png"], "mask": f"mask_{i:03d}.png"}
        lines.append(json.dumps(rec))
    (src / "m.jsonl").write_text("\n".join(lines) + "\n")
    folder = root / f"study{tag}"
    s = Study.create(folder, REPO / "rubrics" / "ui_mockup.toml")
    s.import_items(src / "m.jsonl")
    s.db.set_setting("anchor_every", 0)
    s.add_rater(RATER)
    s.close()
    return folder


ANSWERS = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
}


def measure(folder: Path, prefetch: bool, n: int) -> list[float]:
    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from annotator.ui.label_view import LabelView
    from annotator.ui.settings import AppSettings
    from annotator.ui.worker import DbWorker, ImagePrefetcher

    app = QApplication.instance() or QApplication([])
    from annotator.ui.session_view import SessionView

    # the time from Enter to the next item, not a rater's looking: the exposure rule is off
    SessionView.exposure_minimum = staticmethod(lambda _snapshot: 0)
    worker = DbWorker()
    snapshot = _hold(app, worker, folder)
    pre = ImagePrefetcher(snapshot.media)
    settings = AppSettings(Path(tempfile.mkdtemp()) / "s.ini")
    view = LabelView(
        snapshot, RATER, worker, settings, prefetcher=pre, prefetch_ahead=3 if prefetch else 0
    )
    view.resize(1400, 900)
    view.show()
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
        masked = view.item_panel.has_mask
        if views and all(v.image() is not None and (v.has_mask or not masked) for v in views):
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
            if (
                time.monotonic() > looked
                and pre.pending == 0
                and not worker.busy
                and not view.item_panel.waiting_for()
            ):
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
    worker.stop()
    return lat


def _hold(app, worker, folder: Path):  # noqa: ANN001, ANN202
    """Open the study on the worker (which keeps it) and return its snapshot."""
    from annotator.services.snapshot import open_study

    box: dict = {}
    worker.open_study(
        open_study,
        folder,
        on_done=lambda r: box.setdefault("r", r),
        on_error=lambda e: box.setdefault("e", e),
    )
    while not box:
        app.processEvents()
        time.sleep(0.002)
    if "e" in box:
        raise box["e"]
    return box["r"]


def dashboard_times(root: Path, runs: int = 3) -> tuple[float, list[float], str]:
    """First computation (1000 resamples) and cached reopens of the demo study's dashboard."""
    from PySide6.QtWidgets import QApplication

    from annotator.services.demo import build_demo
    from annotator.ui.dashboard_view import DashboardView
    from annotator.ui.worker import ComputeWorker, DbWorker

    app = QApplication.instance() or QApplication([])
    folder = root / "demo"
    build_demo(folder)
    worker, compute = DbWorker(), ComputeWorker()
    snapshot = _hold(app, worker, folder)

    def open_once() -> float:
        t0 = time.perf_counter()
        view = DashboardView(snapshot, None, worker, None, compute=compute, n_boot=1000)
        view.resize(1400, 1000)
        view.show()
        while view.model is None:
            app.processEvents()
            time.sleep(0.001)
        t = time.perf_counter() - t0
        view.shutdown()
        view.close()
        view.deleteLater()
        return t

    first = open_once()
    again = [open_once() for _ in range(runs)]
    n = sum(1 for _ in (folder / "media").iterdir()) if (folder / "media").exists() else 0
    compute.stop()
    worker.stop()
    return first, again, f"demo study ({n} media files)"


def cold_start(folder: Path, runs: int = 5) -> list[tuple[float, float]]:
    out = []
    code = (
        "import sys; from annotator.ui.app import run_app; "
        f"sys.exit(run_app({str(folder)!r}, {RATER!r}))"
    )
    for _ in range(runs):
        env = dict(
            os.environ,
            ANNOTATOR_QUIT_WHEN_READY="1",
            # the platform this benchmark runs under (xcb under Xvfb, or offscreen): the same
            QT_QPA_PLATFORM=os.environ["QT_QPA_PLATFORM"],
            ANNOTATOR_SETTINGS=str(Path(tempfile.mkdtemp()) / "s.ini"),
        )
        t0 = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
        )
        wall = time.perf_counter() - t0
        ready = next(
            (float(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("ready ")),
            float("nan"),
        )
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
    ap.add_argument("--no-dashboard", action="store_true", help="leave the dashboard timings out")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench_label_"))
    rows = []
    studies = {}
    for size, masked in ((1024, False), (1024, True), (2048, False)):
        t = time.perf_counter()
        key = (size, masked)
        studies[key] = build(root, size, a.items, masked=masked)
        what = "edit case (input + output + mask)" if masked else "output"
        print(
            f"built {a.items} items at {size}x{size} ({what}) in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        for prefetch in (True,) if masked else (True, False):
            # A fresh copy of the study per run: every run answers the same items.
            run_folder = root / f"run{size}{'m' if masked else ''}{'p' if prefetch else 'n'}"
            subprocess.run(["cp", "-r", str(studies[key]), str(run_folder)], check=True)
            lat = measure(run_folder, prefetch, a.items)
            row = (
                size,
                masked,
                prefetch,
                len(lat),
                statistics.median(lat),
                pct(lat, 0.95),
                max(lat),
            )
            rows.append(row)
            print(
                f"{size}x{size} {'masked ' if masked else ''}prefetch={'on ' if prefetch else 'off'} n={row[3]} "
                f"median={row[4]:.1f} ms p95={row[5]:.1f} ms max={row[6]:.1f} ms",
                flush=True,
            )
    cs = cold_start(studies[(1024, False)])
    walls = [w for w, _ in cs]
    readys = [r for _, r in cs]
    print(
        f"cold start to interactive label view: median {statistics.median(walls):.2f} s "
        f"(max {max(walls):.2f} s; in-process ready median {statistics.median(readys):.2f} s)"
    )
    machine = (
        f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{os.environ['QT_QPA_PLATFORM']} Qt"
    )
    md = [
        "| image | item | prefetch | n | median (ms) | p95 (ms) | max (ms) |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {s}x{s} | {'edit case, masked' if mk else 'output'} | {'on' if p else 'off'} | {n} | {m:.1f} | "
            f"{q:.1f} | {x:.1f} |"
            for s, mk, p, n, m, q, x in rows
        ],
        "",
        f"Cold start to an interactive label view (child process wall time, {len(walls)} runs): "
        f"median {statistics.median(walls):.2f} s, max {max(walls):.2f} s.",
    ]
    if not a.no_dashboard:
        first, again, what = dashboard_times(root)
        print(
            f"dashboard: first computation {first:.1f} s, cached reopen {statistics.median(again) * 1000:.0f} ms"
        )
        md += [
            "",
            f"Dashboard on the {what}, 1000 bootstrap resamples: first computation (open to figures "
            f"shown) {first:.1f} s; reopen on unchanged data (cached) median "
            f"{statistics.median(again) * 1000:.0f} ms, max {max(again) * 1000:.0f} ms ({len(again)} runs).",
        ]
    md += ["", f"Machine: {machine}."]
    print("\n".join(md))
    if a.out:
        a.out.write_text("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

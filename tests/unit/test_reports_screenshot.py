"""Render the sample report in headless Chromium and keep a screenshot of it.

The screenshot (report.png in the screenshot folder: `--screenshots packaging/screenshots` refreshes
the README's) is for people: it is what the
README shows and what a reviewer looks at. The test also checks that a real
browser lays the page out to a sensible height without fetching anything.
Skipped where Chromium is not installed.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_sample import png_bytes, sample_report  # noqa: E402
from test_reports_render import synthetic_frames  # noqa: E402

from annotator.reports import write_html  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next(
    (
        p
        for p in (
            "/usr/bin/chromium",
            shutil.which("chromium") or "",
            shutil.which("chromium-browser") or "",
        )
        if p and Path(p).exists()
    ),
    None,
)
WIDTH = 1200


def _trim(png: bytes) -> Image.Image:
    """Cut the empty page background below the footer (the window is taller than the page)."""
    im = Image.open(io.BytesIO(png)).convert("RGB")
    bg = im.getpixel((im.width - 1, im.height - 1))
    px = im.load()
    bottom = im.height - 1
    while bottom > 0 and all(px[x, bottom] == bg for x in range(0, im.width, 4)):
        bottom -= 1
    return im.crop((0, 0, im.width, min(im.height, bottom + 24)))


def _report_and_thumbnails() -> tuple[dict, dict[str, bytes]]:
    """The real report model on a small synthetic study when it exists, else the sample dict."""
    try:
        from annotator.stats.report_model import build_report
    except ImportError:
        return sample_report(), {
            "it-007": png_bytes((200, 80, 60)),
            "it-019": png_bytes((60, 120, 200)),
        }
    frames = synthetic_frames(hostile=False)
    frames.settings["release_gate"] = {"verdict_pass_rate": 0.5}
    report = build_report(frames, n_boot=200, seed=0)
    colours = [(70, 110, 170), (190, 120, 60), (80, 150, 110), (150, 90, 150)]
    thumbs = {
        f["item_id"]: png_bytes(colours[i % len(colours)]) for i, f in enumerate(report["findings"])
    }
    return report, thumbs


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_screenshot(tmp_path: Path, screenshot_dir: Path) -> None:
    report, thumbs = _report_and_thumbnails()
    html = write_html(report, tmp_path / "report.html", thumbs, generated_at="2025-01-01 12:00 UTC")
    out = tmp_path / "shot.png"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={WIDTH},20000",
        f"--screenshot={out}",
        html.as_uri(),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    im = _trim(out.read_bytes())
    assert im.width == WIDTH
    assert 3000 < im.height < 20000  # the whole report, laid out, not a blank page
    # and it shows something all the way down: text, tables and charts in every quarter of the
    # page (a header over an empty page, or a chart that failed to draw, leaves a flat band)
    quarter = im.height // 4
    for top in range(0, 4 * quarter, quarter):
        band = im.crop((0, top, WIDTH, top + quarter))
        colours = len(band.getcolors(band.width * band.height))
        assert colours > 20, f"the report is blank from y={top} to {top + quarter} ({colours})"
    # into a temp folder, or packaging/screenshots with --screenshots: tests never touch tracked files
    SHOT = screenshot_dir / "report.png"  # noqa: N806 - the name the module docstring uses
    # a page of flat colours: a 256-colour palette keeps the file a few times smaller
    im.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        SHOT, optimize=True
    )

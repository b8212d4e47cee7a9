"""The HTML report's layout in a real browser (headless Chromium), at a 1280 px wide window:
the summary comes first and the glossary last and folded, the page is no wider than the
window, and no table overflows the width it is given (judge tables were clipped at
1400 px, "exact agreement" cut mid-word, and a glossary of 25 entries came before any number).
Skipped where Chromium is not installed (CI installs it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_reports_screenshot import CHROMIUM, _report_and_thumbnails, _trim  # noqa: E402

from annotator.reports import write_html  # noqa: E402

WIDTH = 1280

# Runs in the page once it is laid out: every folded part opened (a table must fit once read
# too), then each table measured against its box and the window.
_PROBE = """
<script>
(function () {
  const out = {};
  const gloss = document.getElementById("what-is-what");
  out.glossaryFolded = gloss ? !gloss.open : null;
  const order = ["summary", "agreement", "judges", "findings", "limits", "glossary"]
    .map(id => document.getElementById(id))
    .filter(e => e)
    .map(e => [e.id, e.getBoundingClientRect().top + window.scrollY]);
  out.order = order;
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  const win = document.documentElement.clientWidth;
  out.window = win;
  out.pageWidth = document.documentElement.scrollWidth;
  out.tables = [];
  document.querySelectorAll("table").forEach((t, i) => {
    const box = t.parentElement;
    const r = t.getBoundingClientRect();
    const head = t.querySelector("th");
    out.tables.push({
      i: i,
      head: head ? head.textContent.trim().slice(0, 40) : "",
      width: Math.round(t.scrollWidth),
      room: Math.round(box.clientWidth),
      right: Math.round(r.right),
    });
  });
  const pre = document.createElement("pre");
  pre.id = "layout-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
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
        *args,
    ]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=180)


def _laid_out(html: Path, tmp_path: Path) -> dict:
    """What the probe measured of `html` laid out in Chromium at WIDTH px."""
    probed = tmp_path / "probed.html"
    probed.write_text(
        html.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8"
    )
    dom = _chromium([f"--window-size={WIDTH},2000", "--dump-dom", probed.as_uri()], tmp_path)
    m = re.search(r'<pre id="layout-result">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_fits_1280_px_summary_first_glossary_last_and_folded(tmp_path: Path) -> None:
    report, thumbs = _report_and_thumbnails()
    html = write_html(report, tmp_path / "report.html", thumbs, generated_at="2025-01-01 12:00 UTC")
    got = _laid_out(html, tmp_path)
    ids = [i for i, _ in got["order"]]
    tops = [t for _, t in got["order"]]
    assert ids[0] == "summary" and ids[-1] == "glossary", ids
    assert tops == sorted(tops), got["order"]
    assert got["glossaryFolded"] is True
    assert got["pageWidth"] <= got["window"], got["pageWidth"]
    over = [t for t in got["tables"] if t["width"] > t["room"] + 1 or t["right"] > got["window"]]
    assert not over, over[:5]
    # the screenshot at that width: the whole page, no wider than the window
    shot = tmp_path / "shot.png"
    _chromium([f"--window-size={WIDTH},20000", f"--screenshot={shot}", html.as_uri()], tmp_path)
    im = _trim(shot.read_bytes())
    assert im.width == WIDTH and im.height > 2000
    assert isinstance(im, Image.Image)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_the_demo_report_fits_1280_px(small_demo_dir: Path, tmp_path: Path) -> None:
    """The demo's own report, not only a synthetic one (the page scrolled to 1886 px
    because a rater's drift-and-calibration sentence sat in a pill that does not wrap)."""
    from annotator.services.reporting import build_study_report
    from annotator.services.study import Study

    study = Study.open(small_demo_dir, mode="read")
    try:
        report = build_study_report(study, n_boot=100, seed=0)
    finally:
        study.close()
    html = write_html(report, tmp_path / "report.html", {}, generated_at="2025-01-01 12:00 UTC")
    got = _laid_out(html, tmp_path)
    assert got["pageWidth"] <= got["window"], got["pageWidth"]
    assert "Can I trust the judge?" in html.read_text(encoding="utf-8")

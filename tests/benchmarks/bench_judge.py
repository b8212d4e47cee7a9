"""Judge runner throughput against the local test server (same process).
Run from the repository root: python tests/benchmarks/bench_judge.py"""

import io
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit"))
from judge_server import JudgeServer  # noqa: E402

from annotator.ingest.rubrics import load_rubric  # noqa: E402
from annotator.judge import JudgeConfig, JudgeRequest, run_judge  # noqa: E402
from annotator.judge.prompt import image_data_url  # noqa: E402


def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def median_ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


class Sink:
    def __init__(self) -> None:
        self.done: set[str] = set()

    def done_item_ids(self) -> set[str]:
        return set()

    def record_score(self, score) -> None:
        self.done.add(score.item_id)

    def record_error(self, error) -> None:
        raise AssertionError(error)


def main() -> None:
    os.environ.pop("OPENAI_API_KEY", None)
    rng = np.random.default_rng(0)
    big = png(Image.fromarray(rng.integers(0, 256, (1024, 1024, 3), dtype=np.uint8)))
    im = Image.new("RGB", (1024, 1536), (245, 245, 245))  # a mockup-like image: flat colours
    for y in range(0, 1536, 96):
        im.paste((30, 90, 200), (64, y + 20, 960, y + 70))
    flat = png(im)
    print(
        f"noise PNG {len(big) / 1e6:.2f} MB: data URL {median_ms(lambda: image_data_url(big), 20):.1f} ms"
    )
    print(
        f"flat PNG {len(flat) / 1e3:.0f} kB: data URL {median_ms(lambda: image_data_url(flat), 50):.2f} ms"
    )
    rubric = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
    for name, img in (("flat", flat), ("noise", big)):
        for delay in (0.0, 0.2):
            for conc in (1, 4, 8, 16):
                n = 64 if delay else (48 if name == "noise" else 200)
                with JudgeServer() as srv:
                    srv.ok_delay = delay
                    reqs = [
                        JudgeRequest(f"i{i}", f"p [[i{i}]]", "c", output_images=[img])
                        for i in range(n)
                    ]
                    cfg = JudgeConfig(
                        model="m", base_url=srv.base_url, concurrency=conc, timeout=30
                    )
                    t0 = time.perf_counter()
                    summary = run_judge(reqs, rubric, cfg, Sink())
                    dt = time.perf_counter() - t0
                    assert summary.n_scored == n
                    print(
                        f"{name:5s} latency {delay * 1000:3.0f} ms conc {conc:2d}: {n} items in {dt:5.2f} s = "
                        f"{n / dt:6.1f} items/s, server max in-flight {srv.max_in_flight}"
                    )


if __name__ == "__main__":
    main()

"""The offline package kept up with the server: the cost of `Outbox.refresh()` after
each answer stored on a PostgreSQL study, against the submit itself.

Run: PYTHONPATH=. python tests/benchmarks/bench_outbox_refresh.py N_CASES  (items = 2 x N_CASES;
needs the PostgreSQL at 127.0.0.1:5432, trust; makes and drops a scratch database)."""

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from annotator.services.labeling import LabelSession
from annotator.services.outbox import Outbox
from annotator.services.study import Study

sys.path.insert(0, "tests/unit")
from factories import basic_rows, write_manifest  # noqa: E402 - the tests' own item maker

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
}
name = "h10bench_" + uuid.uuid4().hex[:6]
with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
    c.execute(f"CREATE DATABASE {name}")
url = f"postgresql://postgres@127.0.0.1:5432/{name}"
try:
    tmp = Path(tempfile.mkdtemp())
    st = Study.create(url, "ui_mockup")
    st.set_setting("anchor_every", 0)
    st.import_items(
        write_manifest(
            tmp / "src", basic_rows(tmp / "src", n_cases=int(sys.argv[1]), gens=("a", "b"))
        )
    )
    st.add_rater("ann")
    box = Outbox(st, "ann", tmp / "ob")
    t = time.perf_counter()
    box.prepare()
    made = time.perf_counter() - t
    sess = LabelSession(st, "ann")
    sub, ref = [], []
    for _ in range(min(20, st.counts()["items"])):
        it = sess.next()
        t = time.perf_counter()
        sess.submit(it, ALL, 3)
        sub.append(time.perf_counter() - t)
        t = time.perf_counter()
        box.refresh()
        ref.append(time.perf_counter() - t)
    print(
        f"items={st.counts()['items']} prepare={made * 1000:.0f}ms submit_median={statistics.median(sub) * 1000:.1f}ms refresh_median={statistics.median(ref) * 1000:.1f}ms refresh_max={max(ref) * 1000:.1f}ms"
    )
    st.close()
finally:
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE {name} WITH (FORCE)")

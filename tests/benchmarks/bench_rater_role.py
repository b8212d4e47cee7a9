"""What a rater's own login role costs on a team server: the first session (which builds the
rater's queue through the row rules) and next + submit, as the owner and as a rater role, on one
study whose N items are dealt to two raters (N/2 each).

Items are copied in SQL from one imported item (same cell and image), which is what the row
rules' cost depends on: the number of rows, not their content.

Run: python tests/benchmarks/bench_rater_role.py [--items 20000] [--pg postgresql://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "unit"))

from factories import ANSWERS  # noqa: E402  (one answer to every ui_mockup metric)


def _session(location: str, rater: str, n: int) -> tuple[float, float, float]:
    from annotator.services.labeling import LabelSession
    from annotator.services.study import Study

    study = Study.open(location)
    try:
        t = time.perf_counter()
        session = LabelSession(study, rater)
        first = time.perf_counter() - t
        lat = []
        for _ in range(n):
            t = time.perf_counter()
            session.submit(session.next(), ANSWERS, 3)
            lat.append((time.perf_counter() - t) * 1000)
    finally:
        study.close()
    lat.sort()
    return first, statistics.median(lat), lat[int(0.95 * len(lat))]


def main() -> None:
    import psycopg
    from factories import basic_rows, write_manifest
    from sqlalchemy import text

    from annotator.services.study import Study
    from annotator.services.team import assign
    from annotator.store import roles

    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--submits", type=int, default=60)
    ap.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    a = ap.parse_args()
    db = f"bench_roles_{secrets.token_hex(3)}"
    admin = psycopg.connect(a.pg, autocommit=True)
    admin.execute(f'CREATE DATABASE "{db}"')
    url = a.pg.rsplit("/", 1)[0] + f"/{db}"
    lead = None
    try:
        lead = Study.create(url, "ui_mockup")
        src = Path(tempfile.mkdtemp())
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=2, gens=("a", "b"))))
        with lead.db.write() as s:
            s.execute(
                text(
                    "INSERT INTO items (item_id, cell_pk, generator, display_code, slice, seed, text, "
                    "is_anchor, content_sha256, source, created_at) SELECT 'bulk-' || g, i.cell_pk, "
                    "i.generator, 'B' || lpad(g::text, 7, '0'), i.slice, i.seed, i.text, false, "
                    "md5(g::text), i.source, i.created_at FROM items i, generate_series(1, :n) g "
                    "WHERE i.id = (SELECT min(id) FROM items)"
                ),
                {"n": a.items},
            )
            s.execute(
                text(
                    "INSERT INTO item_media (item_pk, role, ordinal, media_sha256, source_name) "
                    "SELECT i.id, m.role, m.ordinal, m.media_sha256, m.source_name FROM items i, "
                    "item_media m WHERE i.item_id LIKE 'bulk-%' AND m.item_pk = (SELECT min(id) "
                    "FROM items)"
                )
            )
        assign(lead, ["owner-side", "rater-side"], overlap=1, pair_overlap=None, seed=1)
        roles.apply_roles(lead.db, db, ["rater-side"])
        role = roles.logins_of(lead.db)["rater-side"]
        as_rater = url.replace("postgres@", f"{role}@", 1)
        print(f"{a.items} items, {a.items // 2} dealt to each rater; {a.submits} submits per run")
        for run in range(2):  # run 0 builds the queues
            for who, location, rater in (
                ("owner", url, "owner-side"),
                ("rater role", as_rater, "rater-side"),
            ):
                first, p50, p95 = _session(location, rater, a.submits)
                print(
                    f"run {run} {who:10s}: first session {first:6.2f} s, next+submit "
                    f"p50 {p50:6.1f} ms, p95 {p95:6.1f} ms"
                )
    finally:
        if lead is not None:
            roles.drop_roles(lead.db, db)
            lead.close()
        admin.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


if __name__ == "__main__":
    main()

"""Load on one study: 50 raters as separate processes, each submitting 200 judgements and 50 pair
votes with think times of 0-50 ms, against a PostgreSQL study and against a SQLite study.

Counts what every process logged as acknowledged against what the database holds (0 lost, 0
doubled), and prints p50/p95/p99 submit latency and throughput, the connections the server refused
(its max_connections reached: each refusal is retried as a lost connection, and counted apart) and
the most connections the study's database held at once.

With --roles each rater works as its own login role (`annotator roles`: row rules, server-side
checks), as a team does; without, as the database's owner. --engines postgresql skips the SQLite
run (the target: 100 raters at the full workload with 0 refused connections).

--think MIN,MAX sets the pause before each answer (the default, 0-50 ms, is a stress test: 50
Python clients on two cores are then CPU-bound on the client side; `--think 2,5` is a rater who
looks at each image for seconds). Every rater's app is open before the first submit, so start-up
is not counted as load.

Run: python tests/benchmarks/bench_server.py [--raters 50] [--roles] [--engines postgresql,sqlite]
     [--pg postgresql://postgres@127.0.0.1/postgres] [--items 200] [--votes 50] [--think 0,0.05]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))

from bench_store import machine  # noqa: E402

ANSWERS = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
    "reason": "load",
}


def rater_process(
    location: str,
    rater: str,
    n_items: int,
    n_votes: int,
    out,  # noqa: ANN001
    think: tuple[float, float] = (0.0, 0.05),
    ready=None,  # noqa: ANN001
    go=None,  # noqa: ANN001
) -> None:
    from annotator.domain.errors import StudyBusy
    from annotator.services.labeling import LabelSession
    from annotator.services.pairing import PairSession
    from annotator.services.study import Study
    from annotator.store.faults import ConnectionLost

    rng = random.Random(rater)
    lat, acked, votes, retries, refused = [], [], [], 0, 0

    def retrying(fn, *args):
        nonlocal retries, refused
        while True:
            try:
                return fn(*args)
            except (StudyBusy, ConnectionLost) as exc:
                retries += 1
                refused += "no free connection" in str(exc)  # max_connections reached
                time.sleep(0.05)

    study = retrying(Study.open, location)
    session = retrying(LabelSession, study, rater)
    if ready is not None:  # every rater's app open before anyone submits (start-up is not load)
        ready.put(rater)
        go.wait()
    for _ in range(n_items):
        item = retrying(session.next)
        if item is None:
            break
        time.sleep(rng.uniform(*think))
        t = time.perf_counter()
        acked.append(retrying(session.submit, item, ANSWERS, 10))
        lat.append(time.perf_counter() - t)
    pairs = retrying(PairSession, study, rater)
    for _ in range(n_votes):
        pair = retrying(pairs.next)
        if pair is None:
            break
        time.sleep(rng.uniform(*think))
        t = time.perf_counter()
        votes.append(retrying(pairs.vote, pair, rng.choice(["left", "right"]), None, 10))
        lat.append(time.perf_counter() - t)
    study.close()
    out.put(
        json.dumps(
            {
                "rater": rater,
                "lat": lat,
                "acked": acked,
                "votes": votes,
                "retries": retries,
                "refused": refused,
            }
        )
    )


def build(location: str, n_raters: int, tmp: Path, roles: bool) -> dict[str, str]:
    """The study, its raters dealt; rater -> the URL (or folder) that rater opens."""
    from PIL import Image

    from annotator.services.study import Study
    from annotator.services.team import assign

    src = tmp / f"src-{secrets.token_hex(2)}"
    (src / "img").mkdir(parents=True)
    Image.new("RGB", (8, 8), (1, 2, 3)).save(src / "img" / "x.png")
    rows = [
        {
            "item_id": f"c{c}-g{g}",
            "case_id": f"case{c}",
            "prompt": f"screen {c}",
            "generator": f"g{g}",
            "images": ["img/x.png"],
        }
        for c in range(100)
        for g in range(10)
    ]
    (src / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = Study.create(location, "ui_mockup")
    study.db.set_setting("anchor_every", 0)
    study.import_items(src / "m.jsonl")
    raters = [f"load{i:02d}" for i in range(n_raters)]
    assign(
        study, raters, overlap=max(1, min(n_raters, n_raters * 200 // 1000)), pair_overlap=1, seed=1
    )
    where = {r: location for r in raters}
    if roles and location.startswith("postgresql"):
        from annotator.store.roles import apply_roles

        _, logins, _ = apply_roles(study.db, location.rsplit("/", 1)[1], raters)
        user = location.split("://", 1)[1].split("@", 1)[0]
        where = {x.rater: location.replace(f"{user}@", f"{x.role}@", 1) for x in logins}
    study.close()
    return where


def _peak_connections(admin: str, database: str, stop: threading.Event, peak: list[int]) -> None:
    """The most connections the study's database held at once (sampled every 0.5 s)."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as c:
        while not stop.wait(0.5):
            n = c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchone()[0]
            peak[0] = max(peak[0], n)


def run(
    location: str,
    n_raters: int,
    tmp: Path,
    roles: bool = False,
    admin: str = "",
    *,
    items: int = 200,
    votes: int = 50,
    think: tuple[float, float] = (0.0, 0.05),
) -> dict:
    from sqlalchemy import text

    from annotator.services.study import Study

    where = build(location, n_raters, tmp, roles)
    ctx = multiprocessing.get_context("spawn")
    out, ready, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=rater_process, args=(u, r, items, votes, out, think, ready, go))
        for r, u in where.items()
    ]
    stop, peak = threading.Event(), [0]
    watch = None
    if location.startswith("postgresql"):
        watch = threading.Thread(
            target=_peak_connections, args=(admin, location.rsplit("/", 1)[1], stop, peak)
        )
        watch.start()
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=3600)
    t = time.perf_counter()
    go.set()
    results = [json.loads(out.get(timeout=3600)) for _ in procs]
    wall = time.perf_counter() - t
    stop.set()
    if watch is not None:
        watch.join()
    for p in procs:
        p.join(60)
    study = Study.open(location, mode="read")
    with study.db.read() as s:
        j = {r[0] for r in s.execute(text("SELECT id FROM judgements"))}
        v = {r[0] for r in s.execute(text("SELECT id FROM pair_votes"))}
    study.close()
    acked_j = [x for r in results for x in r["acked"]]
    acked_v = [x for r in results for x in r["votes"]]
    lat = sorted(x for r in results for x in r["lat"])
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000  # noqa: E731
    return {
        "lost": len(set(acked_j) - j) + len(set(acked_v) - v),
        "doubled": (len(acked_j) - len(set(acked_j))) + (len(acked_v) - len(set(acked_v))),
        "unacked_rows": len(j - set(acked_j)) + len(v - set(acked_v)),
        "writes": len(lat),
        "p50": q(0.5),
        "p95": q(0.95),
        "p99": q(0.99),
        "wall": wall,
        "per_s": len(lat) / wall,
        "retries": sum(r["retries"] for r in results),
        "refused": sum(r["refused"] for r in results),
        "peak_connections": peak[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raters", type=int, default=50)
    ap.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--roles", action="store_true", help="each rater as its own login role")
    ap.add_argument("--engines", default="postgresql,sqlite")
    ap.add_argument("--items", type=int, default=200, help="judgements per rater")
    ap.add_argument("--votes", type=int, default=50, help="pair votes per rater")
    ap.add_argument(
        "--think", default="0,0.05", help="a rater's pause before each answer, MIN,MAX seconds"
    )
    a = ap.parse_args()
    think = tuple(float(x) for x in a.think.split(","))
    load = dict(items=a.items, votes=a.votes, think=think)
    engines = a.engines.split(",")
    import psycopg

    name = f"annotator_load_{secrets.token_hex(3)}"
    with psycopg.connect(a.pg, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    pg_url = a.pg.rsplit("/", 1)[0] + f"/{name}"
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            figures = {}
            if "postgresql" in engines:
                figures["postgresql"] = run(pg_url, a.raters, tmp, a.roles, a.pg, **load)
            if "sqlite" in engines:
                figures["sqlite"] = run(str(tmp / "st"), a.raters, tmp, **load)
    finally:
        with psycopg.connect(a.pg, autocommit=True) as c:
            if a.roles:  # the raters' login roles live in the cluster, not the database
                from annotator.services.study import Study
                from annotator.store.roles import drop_roles

                if "postgresql" in engines:
                    study = Study.open(pg_url)
                    try:
                        drop_roles(study.db, name)
                    finally:
                        study.close()
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    with psycopg.connect(a.pg, autocommit=True) as c:
        max_conn = c.execute("SHOW max_connections").fetchone()[0]
    print(f"machine: {machine()}; server max_connections {max_conn}")
    for engine, f in figures.items():
        print(
            f"{engine}: {a.raters} raters x ({a.items} judgements + {a.votes} pair votes), think "
            f"{think[0]:g}-{think[1]:g} s, every app open before the first submit: "
            f"{f['writes']} writes in {f['wall']:.1f} s ({f['per_s']:.0f}/s); submit p50 {f['p50']:.1f} ms, "
            f"p95 {f['p95']:.1f} ms, p99 {f['p99']:.1f} ms; lost {f['lost']}, doubled {f['doubled']}, "
            f"rows nobody acknowledged {f['unacked_rows']}; busy/lost retries {f['retries']}, "
            f"of them refused connections {f['refused']}"
            + (f"; peak connections {f['peak_connections']}" if engine == "postgresql" else "")
            + (" (rater roles)" if a.roles and engine == "postgresql" else "")
        )


if __name__ == "__main__":
    main()

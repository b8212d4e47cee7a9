"""Record tests/data/interop/peers/ from the running tools (run by hand, once per tool version):

    PYTHONPATH=. python tests/peers/record.py [label-studio] [potato]

Installs the pinned Label Studio / Potato (tests/peers/peers.py), drives each server through
its HTTP API with the scenarios of peers.py, and writes what the servers export, with the tool
version in each name. The default suite's interop tests read these files.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402
from roundtrip import source_study  # noqa: E402

from annotator.services.export_label_studio import export_label_studio  # noqa: E402
from annotator.services.study import Study  # noqa: E402

DATA = ROOT / "tests" / "data" / "interop"
OUT = DATA / "peers"


def record_label_studio(work: Path) -> None:
    name, version = peers.LABEL_STUDIO
    venv = peers.install(name, version)
    st = source_study(work / "source")
    try:
        export_label_studio(st, work / "out" / "tasks.json", with_annotations=True)
    finally:
        st.close()
    shutil.copytree(DATA / "label_studio" / "media", work / "out" / "media")
    srv = peers.start_label_studio(venv, work, work / "out")
    try:
        got = peers.drive_label_studio(peers.LabelStudio(srv.base), work / "out")
    finally:
        srv.stop()
    dest = OUT / f"label-studio-{version}"
    dest.mkdir(parents=True, exist_ok=True)
    for key in (
        "items-default",
        "items-snapshot",
        "pairs-default",
        "pairs-snapshot",
        "generic-default",
    ):
        peers.write_json(dest / f"label-studio-{version}-{key}.json", got[key])
    if (dest / "tasks-media").exists():
        shutil.rmtree(dest / "tasks-media")
    shutil.copytree(work / "out" / "tasks-media", dest / "tasks-media")  # the images the tasks name
    for f in ("tasks.json", "tasks-pairs.json", "tasks.config.xml", "tasks-pairs.config.xml"):
        shutil.copy(work / "out" / f, dest / f"annotator-export-{f}")
    raters = "".join(
        f'"{uid}" = "{email.split("@")[0]}"\n"{email}" = "{email.split("@")[0]}"\n'
        for email, uid in got["users"].items()
    )
    mapping = (
        (work / "out" / "tasks.map.toml").read_text()
        + "\n[raters]  # Label Studio's users\n"
        + raters
    )
    (dest / "map.toml").write_text(mapping)
    peers.write_json(dest / "run.json", {k: got[k] for k in ("imported", "users", "pair_task")})


def record_potato(work: Path) -> None:
    name, version = peers.POTATO
    venv = peers.install(name, version)
    items = [json.loads(x) for x in (DATA / "items.jsonl").read_text().splitlines() if x.strip()]
    (work / "data").mkdir(parents=True)
    (work / "data" / "items.jsonl").write_text(
        "".join(json.dumps({"id": i["item_id"], "text": i["text"]}) + "\n" for i in items[:2])
    )
    rubric = Study.create(work / "st", DATA / "rubric.toml")
    try:
        cfg = peers.potato_config(rubric.rubric, "data/items.jsonl")
    finally:
        rubric.close()
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    srv = peers.start_potato(venv, work)
    try:
        peers.drive_potato(srv.base)
    finally:
        srv.stop()
    exported = peers.potato_export(venv, work)
    dest = OUT / f"potato-{version}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for user in peers.PO_ANSWERS:
        (dest / "annotation_output" / user).mkdir(parents=True)
        for f in ("user_state.json", "annotation_history.jsonl"):
            shutil.copy(
                work / "annotation_output" / user / f, dest / "annotation_output" / user / f
            )
    shutil.copy(exported, dest / f"potato-{version}-export.jsonl")
    shutil.copy(work / "config.yaml", dest / "config.yaml")


if __name__ == "__main__":
    which = sys.argv[1:] or ["label-studio", "potato"]
    for tool in which:
        with tempfile.TemporaryDirectory(prefix=f"record-{tool}-") as tmp:
            {"label-studio": record_label_studio, "potato": record_potato}[tool](Path(tmp))
            print(f"recorded {tool}")

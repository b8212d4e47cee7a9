"""Potato 2.12.1 itself (peers.py installs it; a server per test on a free loopback port): a
project asking our rubric's questions about our items, two users annotating through its web
endpoints as its annotation.js does (one goes back and relabels), then annotation_output/ (its v2
storage: user_state.json, annotation_history.jsonl) and its own jsonl export imported, every
value compared."""

from __future__ import annotations

import json

import peers
import pytest
import roundtrip
import yaml

from annotator.services.importers import run_import
from annotator.services.study import Study

pytestmark = [pytest.mark.peers, pytest.mark.slow]


@pytest.fixture(scope="module")
def annotated(potato_venv, tmp_path_factory):
    work = tmp_path_factory.mktemp("potato")
    items = [
        json.loads(x)
        for x in (roundtrip.DATA / "items.jsonl").read_text().splitlines()
        if x.strip()
    ]
    (work / "data").mkdir()
    (work / "data" / "items.jsonl").write_text(
        "".join(json.dumps({"id": i["item_id"], "text": i["text"]}) + "\n" for i in items[:2])
    )
    st = Study.create(work / "rubric-only", roundtrip.DATA / "rubric.toml")
    try:
        cfg = peers.potato_config(st.rubric, "data/items.jsonl")
    finally:
        st.close()
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    try:
        srv = peers.start_potato(potato_venv, work)
    except RuntimeError as exc:
        pytest.skip(f"Potato {peers.POTATO[1]} did not start: {exc}")
    try:
        peers.drive_potato(srv.base)
    finally:
        srv.stop()
    return work, peers.potato_export(potato_venv, work)


@pytest.mark.parametrize("what", ["annotation_output", "history only", "potato.export"])
def test_potato_output_comes_back_with_every_value(annotated, tmp_path, what):
    work, exported = annotated
    src = {
        "annotation_output": work / "annotation_output",
        "potato.export": exported,
        "history only": tmp_path / "history",
    }[what]
    if what == "history only":
        for user in peers.PO_ANSWERS:
            (src / user).mkdir(parents=True)
            (src / user / "annotation_history.jsonl").write_bytes(
                (work / "annotation_output" / user / "annotation_history.jsonl").read_bytes()
            )
    st = Study.create(tmp_path / "st", roundtrip.DATA / "rubric.toml")
    try:
        st.import_items(roundtrip.DATA / "items.jsonl")
        m = roundtrip.DATA / "peers" / f"potato-{peers.POTATO[1]}" / "map.toml"
        line = run_import(st, "potato", src, map_path=str(m))
        assert "4 judgements" in line, line
        assert roundtrip.answers(st) == roundtrip.POTATO_WANT
    finally:
        st.close()

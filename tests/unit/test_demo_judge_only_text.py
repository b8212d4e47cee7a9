"""The demo's judge-only items carry their text: a rater dealt one from the random human
sample is asked about "In-image text rendering", which an image without legible text (a grey
bar) would not let anyone judge."""

from __future__ import annotations

from PIL import Image

from annotator.demo import images, scenario


def test_judge_only_items_are_drawn_with_their_text(tmp_path):
    files = scenario.write_judge_only_inputs(tmp_path, variants=1)
    assert files.items
    cases = {c.case_id: c for c in scenario.DEMO_CASES}
    for record in files.items.values():
        stored = Image.open(tmp_path / record["images"][0]).convert("RGB")
        spec = scenario.spec_for(cases[record["case_id"]], record["generator"], 3)
        with images.drawn_at(scenario.JUDGE_ONLY_SCALE):
            text = images.render_mockup(spec).image.convert("RGB")
        with images.drawn_at(scenario.JUDGE_ONLY_SCALE, greeked=True):
            bars = images.render_mockup(spec).image.convert("RGB")
        assert stored.size == text.size
        assert stored.tobytes() == text.tobytes() != bars.tobytes()

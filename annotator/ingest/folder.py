"""A folder of images: FOLDER/<case_id>/prompt.txt (+ criteria.txt) and one
image per generator, FOLDER/<case_id>/<generator>.<png|jpg|webp>.
Tested in tests/unit/test_cli.py and tests/unit/test_hardening.py.
"""

from __future__ import annotations

from pathlib import Path

from ..domain.errors import InputError
from ..domain.records import ItemSpec
from ..domain.text import check_name, check_text
from .manifest import ImageResolver, ParsedItems
from .readers import read_text

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp"}


def parse_folder(folder: str | Path) -> ParsedItems:
    root = Path(folder)
    if not root.is_dir():
        raise InputError("not a folder", source=str(root))
    out = ParsedItems()
    resolve = ImageResolver(root, str(root), out.spool)
    for case_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        prompt_file = case_dir / "prompt.txt"
        if not prompt_file.is_file():
            raise InputError(
                "missing prompt.txt for this case", source=str(case_dir), field="prompt"
            )
        prompt = check_text(
            read_text(prompt_file, str(prompt_file)).strip(), "the prompt", source=str(prompt_file)
        )
        crit = case_dir / "criteria.txt"
        criteria = (
            check_text(read_text(crit, str(crit)).strip(), "the criteria", source=str(crit))
            if crit.is_file()
            else None
        )
        check_name(case_dir.name, "the case folder name", source=str(case_dir))
        for img in sorted(p for p in case_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES):
            check_name(img.stem, "the image name (the generator)", source=str(img))
            e = resolve(str(img.relative_to(root)), 0, "images")
            out.images[e.sha256] = e
            out.specs.append(
                ItemSpec(
                    item_id=f"{case_dir.name}:{img.stem}",
                    case_id=case_dir.name,
                    prompt=prompt,
                    criteria=criteria,
                    generator=img.stem,
                    outputs=(e.sha256,),
                    source=str(root),
                    source_names={e.sha256: img.name},
                )
            )
    if not out.specs:
        raise InputError("no images found (expected <case_id>/<generator>.png)", source=str(root))
    return out

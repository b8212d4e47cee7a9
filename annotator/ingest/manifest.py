"""Item manifest (docs/design.md 5.2): JSON Lines, one item a line, paths relative
to the manifest and never outside its folder.
Tested in tests/unit/test_ingest_bad_input.py and tests/unit/test_cli.py.
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Callable, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.scratch import scratch_dir
from ..domain.errors import InputError
from ..domain.records import ItemSpec
from ..domain.text import check_name, check_text
from .media import EncodedImage, encode_image
from .readers import read_bytes, read_jsonl

SEED_BOUND = 2**63  # a seed is stored as a signed 64-bit integer

REQUIRED = ("item_id", "case_id", "prompt", "generator")
KNOWN = set(REQUIRED) | {
    "criteria",
    "images",
    "inputs",
    "mask",
    "seed",
    "slice",
    "text",
    "task_type",
}


class Spool:
    """A temporary folder for the encoded images of one import (removed with it)."""

    def __init__(self) -> None:
        self._dir = scratch_dir("import")  # and the folders of imports killed before
        # removed when the import is done with it, or when the spool is collected
        self._remove = weakref.finalize(self, shutil.rmtree, self._dir, True)

    def keep(self, img: EncodedImage) -> EncodedImage:
        return img.spool(self._dir)

    def close(self) -> None:
        self._remove()


@dataclass
class ParsedItems:
    specs: list[ItemSpec] = field(default_factory=list)
    images: dict[str, EncodedImage] = field(default_factory=dict)
    extra: list[dict[str, Any]] = field(
        default_factory=list
    )  # per spec: fields other importers use
    spool: Spool = field(
        default_factory=Spool
    )  # where the encoded images wait: lives as long as this


class ImageResolver:
    """Encodes each referenced file once, refusing paths that leave `root`."""

    def __init__(self, root: Path, source: str, spool: Spool | None = None) -> None:
        self.root = root.resolve()
        self.source = source
        self.cache: dict[Path, EncodedImage] = {}
        self.spool = spool or Spool()

    def __call__(self, rel: Any, line: int, fld: str) -> EncodedImage:
        if not isinstance(rel, str) or not rel:
            raise InputError(
                "image path must be a non-empty string", source=self.source, line=line, field=fld
            )
        if "\x00" in rel:
            raise InputError(
                "image path contains a NUL character; fix the path",
                source=self.source,
                line=line,
                field=fld,
            )
        try:
            p = (self.root / rel).resolve()
        except (OSError, RuntimeError) as exc:
            raise InputError(
                f"image path '{rel[:80]}' cannot be resolved ({getattr(exc, 'strerror', None) or exc})",
                source=self.source,
                line=line,
                field=fld,
            ) from None
        if not p.is_relative_to(self.root):
            raise InputError(
                f"path '{rel}' is outside the manifest's folder; move the file under it",
                source=self.source,
                line=line,
                field=fld,
            )
        if p in self.cache:
            return self.cache[p]
        data = read_bytes(p, f"{self.source}:{line}", what=f"image '{rel}'", field=fld)
        enc = self.spool.keep(encode_image(data, source=f"{self.source}:{line} ({rel})", field=fld))
        self.cache[p] = enc
        return enc


def _opt_str(d: dict, key: str, src: str, line: int | None) -> str | None:
    v = d.get(key)
    if v is not None and not isinstance(v, str):
        raise InputError(f"'{key}' must be a string or null", source=src, line=line, field=key)
    return v


# An image reference -> the image, encoded: ImageResolver here, MediaResolver for Label Studio.
Resolve = Callable[[Any, Any, str], EncodedImage]


def item_from_dict(
    d: Any, line: int | None, src: str, resolve: Resolve, out: ParsedItems
) -> ItemSpec:
    if not isinstance(d, dict):
        raise InputError("line is not a JSON object", source=src, line=line)
    for key in REQUIRED:
        v = d.get(key)
        if v is None:
            raise InputError(f"missing required field '{key}'", source=src, line=line, field=key)
        if not isinstance(v, str) or not v.strip():
            raise InputError(
                f"'{key}' must be a non-empty string", source=src, line=line, field=key
            )
        if key == "prompt":
            check_text(v, "the prompt", source=src, line=line, field=key)
        else:
            check_name(v, f"'{key}'", source=src, line=line, field=key)
    images = d.get("images")
    text = _opt_str(d, "text", src, line)
    if images is None and text is None:
        raise InputError(
            "an item needs 'images' (a list) or 'text'", source=src, line=line, field="images"
        )
    images = images or []
    inputs = d.get("inputs") or []
    for key, v in (("images", images), ("inputs", inputs)):
        if not isinstance(v, list):
            raise InputError(f"'{key}' must be a list of paths", source=src, line=line, field=key)
    seed = d.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InputError("'seed' must be an integer or null", source=src, line=line, field="seed")
    if seed is not None and not -SEED_BOUND <= seed < SEED_BOUND:
        raise InputError(
            "'seed' does not fit in 64 bits; store it as text in another field or reduce it",
            source=src,
            line=line,
            field="seed",
        )
    for key in ("criteria", "text"):
        if isinstance(d.get(key), str):
            check_text(d[key], f"'{key}'", source=src, line=line, field=key)
    for key in ("slice", "task_type"):
        if isinstance(d.get(key), str):
            check_name(d[key], f"'{key}'", source=src, line=line, field=key)
    names: dict[str, str] = {}

    def enc(rel: Any, fld: str) -> str:
        e = resolve(rel, line, fld)
        out.images[e.sha256] = e
        names[e.sha256] = str(rel)
        return e.sha256

    outputs = tuple(enc(p, "images") for p in images)
    ins = tuple(enc(p, "inputs") for p in inputs)
    mask = enc(d["mask"], "mask") if d.get("mask") is not None else None
    return ItemSpec(
        item_id=d["item_id"].strip(),
        case_id=d["case_id"].strip(),
        prompt=d["prompt"],
        criteria=_opt_str(d, "criteria", src, line),
        generator=d["generator"].strip(),
        outputs=outputs,
        inputs=ins,
        mask=mask,
        seed=seed,
        slice=_opt_str(d, "slice", src, line),
        text=text,
        task_type=_opt_str(d, "task_type", src, line),
        source=src,
        source_names=names,
    )


def parse_manifest(path: str | Path, *, extra_fields: Set[str] = frozenset()) -> ParsedItems:
    """Validate every line and encode every image; nothing is written."""
    p = Path(path)
    src = str(p)
    out = ParsedItems()
    resolve = ImageResolver(p.parent, src, out.spool)
    seen: dict[str, int] = {}
    rows = read_jsonl(p)
    if not rows:
        raise InputError("manifest has no items", source=src)
    for n, d in rows:
        spec = item_from_dict(d, n, src, resolve, out)
        if spec.item_id in seen:
            raise InputError(
                f"duplicate item_id '{spec.item_id}' (first on line {seen[spec.item_id]})",
                source=src,
                line=n,
                field="item_id",
            )
        seen[spec.item_id] = n
        unknown = sorted(set(d) - KNOWN - set(extra_fields))
        if unknown:
            raise InputError(f"unknown field '{unknown[0]}'", source=src, line=n, field=unknown[0])
        out.specs.append(spec)
        out.extra.append({k: d[k] for k in extra_fields if k in d} | {"_line": n})
    return out

"""Content-addressed media store: images re-encoded as PNG without metadata.

Re-encoding (not copying) is what keeps raters blind: EXIF, PNG text chunks,
ICC names and the source file name all stay behind, and the stored file is
named by the SHA-256 of its own stripped bytes. The original's hash is kept
for provenance.
"""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

from ..domain.errors import InputError


@dataclass(frozen=True)
class EncodedImage:
    sha256: str
    original_sha256: str
    width: int
    height: int
    png: bytes

    @property
    def row(self) -> tuple[str, str, int, int, int]:
        return (self.sha256, self.original_sha256, self.width, self.height, len(self.png))


def encode_image(data: bytes, *, source: str, line: int | None = None, field: str = "images") -> EncodedImage:
    """Decode fully, fix orientation, drop all metadata, re-encode as PNG."""
    if not data:
        raise InputError("image file is empty (0 bytes); re-export it", source=source, line=line, field=field)
    try:
        with warnings.catch_warnings():
            # a decompression-bomb *warning* is as unsafe to render as the error
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                im = ImageOps.exif_transpose(im)
                mode = "RGBA" if im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info else "RGB"
                clean = im.convert(mode)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(
            "image is larger than the decompression-bomb limit; downscale it before importing",
            source=source, line=line, field=field,
        ) from None
    except UnidentifiedImageError:
        raise InputError("not an image file Pillow can read; check the file", source=source, line=line, field=field) from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"image is truncated or corrupt ({exc}); re-export it", source=source, line=line, field=field) from None
    # a fresh image carries no info dict, so nothing but pixels is written
    pixels = Image.new(clean.mode, clean.size)
    pixels.paste(clean)
    buf = io.BytesIO()
    pixels.save(buf, format="PNG", compress_level=1)
    png = buf.getvalue()
    return EncodedImage(hashlib.sha256(png).hexdigest(), hashlib.sha256(data).hexdigest(), clean.width, clean.height, png)


class MediaStore:
    """`media/ab/abcdef....png` under the study folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.png"

    def has(self, sha256: str) -> bool:
        return self.path(sha256).exists()

    def put(self, img: EncodedImage) -> bool:
        """Write atomically; returns True if the file is new."""
        dest = self.path(img.sha256)
        if dest.exists():
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            fh.write(img.png)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
        return True

    def read(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def remove(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)

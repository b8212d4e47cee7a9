"""Content-addressed media store: images re-encoded as PNG without metadata.

Re-encoding (not copying) is what keeps raters blind: EXIF, PNG text chunks,
ICC names and the source file name all stay behind, and the stored file is
named by the SHA-256 of its own stripped bytes. The original's hash is kept
for provenance.
Tested in tests/unit/test_security_media.py and tests/unit/test_hardening.py.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ..base.atomic import atomic_write_bytes
from ..domain.errors import DamagedStudy, DiskFull, InputError, StudyReadOnly


@dataclass(frozen=True)
class EncodedImage:
    """An image re-encoded as stripped PNG: its bytes in memory, or spooled to a file (an import
    of thousands of images keeps one in memory at a time, not all of them)."""

    sha256: str
    original_sha256: str
    width: int
    height: int
    data: bytes | None = None
    spooled: Path | None = None
    n_bytes: int = 0

    @property
    def png(self) -> bytes:
        return self.data if self.data is not None else self.spooled.read_bytes()  # type: ignore[union-attr]

    @property
    def row(self) -> tuple[str, str, int, int, int]:
        return (self.sha256, self.original_sha256, self.width, self.height, self.n_bytes)

    def spool(self, folder: Path) -> EncodedImage:
        """The same image with its bytes moved to a file in `folder`."""
        if self.data is None:
            return self
        path = folder / f"{self.sha256}.png"
        if not path.exists():
            with study_faults(str(folder)):
                path.write_bytes(self.data)
        return EncodedImage(
            self.sha256, self.original_sha256, self.width, self.height, None, path, self.n_bytes
        )


def to_8bit(im: Image.Image) -> Image.Image:
    """High-bit-depth and float images scaled to 8 bits per channel.

    Pillow's convert("RGB") clips instead of scaling: a 16-bit grey gradient
    becomes 0/255 and a float image in [0, 1] all black. Integer images are
    scaled by their bit depth (16-bit: / 257); float images are taken as
    [0, 1] when every value lies there, else stretched from their own min..max.
    """
    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        a = np.asarray(im, dtype=np.float64)
        top = 65535.0 if im.mode.startswith("I;16") or a.max(initial=0) > 255 else 255.0
        if im.mode == "I" and a.max(initial=0) > 65535:
            top = float(a.max())
        return Image.fromarray(np.clip(np.rint(a / top * 255.0), 0, 255).astype(np.uint8), "L")
    if im.mode == "F":
        a = np.asarray(im, dtype=np.float64)
        finite = a[np.isfinite(a)]
        lo, hi = (
            (0.0, 1.0)
            if finite.size == 0 or (finite.min() >= 0 and finite.max() <= 1)
            else (finite.min(), finite.max())
        )
        scaled = (np.nan_to_num(a, nan=lo, posinf=hi, neginf=lo) - lo) / ((hi - lo) or 1.0)
        return Image.fromarray(np.clip(np.rint(scaled * 255.0), 0, 255).astype(np.uint8), "L")
    return im


def encode_image(
    data: bytes, *, source: str, line: int | None = None, field: str = "images"
) -> EncodedImage:
    """Decode fully, fix orientation, drop all metadata, re-encode as 8-bit PNG.

    Animated images (GIF, APNG, WebP with frames) are refused: a rater would
    judge one frame of something made to be seen moving.
    """
    if not data:
        raise InputError(
            "image file is empty (0 bytes); re-export it", source=source, line=line, field=field
        )
    try:
        with warnings.catch_warnings():
            # a decompression-bomb *warning* is as unsafe to render as the error
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                frames = getattr(im, "n_frames", 1)
                if frames > 1:
                    raise InputError(
                        f"animated image ({frames} frames); export the frame to judge as a still PNG",
                        source=source,
                        line=line,
                        field=field,
                    )
                im.load()
                im = to_8bit(ImageOps.exif_transpose(im))  # type: ignore[assignment]
                mode = (
                    "RGBA"
                    if im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info
                    else "RGB"
                )
                clean = im.convert(mode)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(
            "image is larger than the decompression-bomb limit; downscale it before importing",
            source=source,
            line=line,
            field=field,
        ) from None
    except UnidentifiedImageError:
        raise InputError(
            "not an image file Pillow can read; check the file",
            source=source,
            line=line,
            field=field,
        ) from None
    except InputError:
        raise
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(
            f"image is truncated or corrupt ({exc}); re-export it",
            source=source,
            line=line,
            field=field,
        ) from None
    # a fresh image carries no info dict, so nothing but pixels is written
    pixels = Image.new(clean.mode, clean.size)
    pixels.paste(clean)
    buf = io.BytesIO()
    pixels.save(buf, format="PNG", compress_level=1)
    png = buf.getvalue()
    return EncodedImage(
        hashlib.sha256(png).hexdigest(),
        hashlib.sha256(data).hexdigest(),
        clean.width,
        clean.height,
        png,
        None,
        len(png),
    )


class PngBlob(Protocol):
    """What a media store writes: PNG bytes under their SHA-256 (an EncodedImage, or bytes
    copied from another study)."""

    @property
    def sha256(self) -> str: ...

    @property
    def png(self) -> bytes: ...


MEDIA_LINK = (
    "the study's media folder holds a link or a special file here, not an image annotator "
    "wrote: remove it and import the item's image again"
)
MEDIA_DAMAGED = (
    "the study's image file is damaged (its bytes no longer match its name, e.g. a disk error): "
    "import the item's image again, or restore the study folder from a backup"
)


class MediaStore:
    """`media/ab/abcdef....png` under the study folder."""

    in_database = False

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.png"

    def has(self, sha256: str) -> bool:
        return self.path(sha256).exists()

    def put(self, img: PngBlob, tx: object = None) -> bool:
        """Write atomically (a unique .tmp, fsync, rename); True if the file is new.
        (`tx` is for the database-backed store's signature; files need no transaction.)

        A failure (a full disk) leaves no .tmp behind and raises the one-line study error.
        """
        dest = self.path(img.sha256)
        if dest.exists():
            return False
        with study_faults(str(self.root)):
            atomic_write_bytes(dest, img.png)
        return True

    def read(self, sha256: str) -> bytes:
        """The image's bytes, checked: a regular file inside `media/` (a link is never followed,
        so a link placed there cannot hand a lead's private file to a rater's package or an
        export) whose bytes still have the hash that names them (a disk error that truncated it
        is said as the study's damage, never passed on as a rater's)."""
        path = self.path(sha256)
        where = str(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise DamagedStudy(MEDIA_LINK, source=where) from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or path.parent.is_symlink():
                raise DamagedStudy(MEDIA_LINK, source=where)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read()
        finally:
            os.close(fd)
        if hashlib.sha256(data).hexdigest() != sha256:
            raise DamagedStudy(MEDIA_DAMAGED, source=where)
        return data

    def remove(self, sha256: str, tx: object = None) -> None:
        self.path(sha256).unlink(missing_ok=True)


@contextmanager
def study_faults(where: str) -> Iterator[None]:
    """A full disk or a read-only media folder as the one-line study error."""
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise DiskFull(
                "the disk is full; free some space and import again (nothing was imported)",
                source=where,
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise StudyReadOnly(
                "the study's media folder cannot be written; check its permissions", source=where
            ) from None
        raise

"""The process's memory policy: freed arrays go back to the operating system.

glibc serves an allocation from its heap unless it is at least the mmap threshold, and that
threshold grows (up to 32 MB) each time a large block is freed. A report makes thousands of
numpy temporaries of 1-32 MB; after the first few they all land on the heap, and the heap's
free holes stay in the process's resident memory. On the 1,000,000-judgement benchmark that
was about a fifth of the peak (1,155 MB against 914 MB with a fixed 1 MB threshold; the alpha
benchmark ran no slower, the report's time was not settled: tests/benchmarks/agreement.md
section 5). Fixing the threshold stops the growth, so every block of 1 MB
or more is mapped on its own and unmapped when freed. Elsewhere (macOS, Windows, musl) the
allocator returns large blocks by itself, and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
THRESHOLD = 1 << 20


def return_large_blocks_to_the_os() -> bool:
    """Fix glibc's mmap threshold at 1 MB; True when the allocator took the setting."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, THRESHOLD) == 1

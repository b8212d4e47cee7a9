"""The process's memory policy: large freed arrays go back to the operating system, and the
heap below them is one for every thread and kept for the next use (`keep_one_heap`).

glibc serves an allocation from its heap unless it is at least the mmap threshold, and that
threshold grows (up to 32 MB) each time a large block is freed. A report makes thousands of
numpy temporaries of 1-32 MB; after the first few they all land on the heap, and the heap's
free holes stay in the process's resident memory. On the 1,000,000-judgement benchmark that
was about a fifth of the peak (1,155 MB against 914 MB with a fixed 1 MB threshold:
tests/benchmarks/agreement.md section 5). Fixing the threshold stops the growth, so every block
of 4 MB or more is mapped on its own and unmapped when freed. Why 4 MB and not 1 MB: each mapped
block is faulted in afresh, and at 1 MB the report's many 1-4 MB temporaries paid for it (the 1M
report 30.1-33.7 s, 936-938 MB; at 4 MB 26.3-28.1 s, 971-987 MB; glibc's own growing threshold
23.4 s, 1,119 MB: tests/benchmarks/README.md). Elsewhere (macOS, Windows, musl) the
allocator returns large blocks by itself, and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # glibc's malloc.h
THRESHOLD = 4 << 20
HEAP_KEPT = 256 << 20


def set_memory_policy() -> bool:
    """The process's whole policy, as the `annotator` command sets it at start (before any
    thread allocates): large blocks returned at once, and the heap below them kept; True when
    the allocator took every setting."""
    return return_large_blocks_to_the_os() & keep_one_heap()


def return_large_blocks_to_the_os() -> bool:
    """Fix glibc's mmap threshold at 4 MB; True when the allocator took the setting."""
    return _mallopt(M_MMAP_THRESHOLD, THRESHOLD)


def keep_one_heap() -> bool:
    """Every thread's blocks below the mmap threshold from one heap, which keeps up to
    HEAP_KEPT of freed memory at its top instead of giving it back at once.

    glibc gives each thread that allocates an arena of its own, in heaps of at most 64 MB
    unmapped the moment they empty, and trims any heap whose free top passes 128 KB (the
    default once the mmap threshold is fixed). The dashboard's database worker reads the new
    answers and its compute worker computes the live estimate, each in its own arena: at a
    million judgements a refresh faulted in 8,000 pages for the read and 18,000-25,000 for
    the estimate, the same memory given back and taken again each time (the read 0.12 s on
    its worker against 0.045 s on the main thread). One arena, kept: 1,000-3,000 faults a
    step (tests/benchmarks/README.md). Only the memory freed at the heap's top is kept, up to
    HEAP_KEPT; blocks of THRESHOLD and more are still returned as they are freed."""
    return _mallopt(M_ARENA_MAX, 1) & _mallopt(M_TRIM_THRESHOLD, HEAP_KEPT)


def _mallopt(param: int, value: int) -> bool:
    """glibc's mallopt(param, value); False where the allocator is not glibc's or refused."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt(param, value) == 1


_paused = 0  # how many pauses are open (two workers may hold one each)
_was_enabled = False
_pause_lock = threading.Lock()


@contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cycle collector held off while the block runs, for a computation that makes
    hundreds of thousands of short-lived containers and no cycle (a live refresh).

    The collector runs each time 700 more containers were made than freed, and in full once
    enough of them have outlived two young passes. A live refresh at a million judgements holds
    its new report (a few hundred thousand dicts and lists) until it is done: it paid for about
    120 young passes over the same objects and, every few refreshes, a full pass over every
    object of the process (0.17-0.25 s), and it leaves about five objects in cycles. Held
    off, the block's survivors are moved into the oldest generation when it ends
    (`_promote_young`), where they wait for the next full pass (the process's collections
    over seven refreshes and a full report: 2.3-2.5 s -> 1.2-1.4 s with one young pass after
    the block; the collections inside nine refreshes, 0.53-0.59 s -> 0.003 s with none,
    tests/benchmarks/README.md). Nested and concurrent pauses (the database and compute
    workers) end with the last; a collector already off is left off."""
    global _paused, _was_enabled
    with _pause_lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                _promote_young()
                gc.enable()


def _promote_young() -> None:
    """Move every object the collector tracks into its oldest generation without a pass over
    them: the young pass the next allocation would make walks the whole new report (10-20 ms
    at a million judgements) to find nothing to free, and its survivors then count towards a
    full pass. freeze() moves every generation aside and unfreeze() puts them back as the
    oldest, two list splices; what a cycle holds is still freed, by the next full pass."""
    gc.freeze()
    gc.unfreeze()

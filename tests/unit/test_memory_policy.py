"""The process's memory policy (services/memory.py): large freed arrays leave resident memory."""

from __future__ import annotations

import platform
import sys

import numpy as np
import pytest

from annotator.services.memory import return_large_blocks_to_the_os


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's allocator only",
)
def test_freed_blocks_of_a_few_megabytes_leave_resident_memory() -> None:
    assert return_large_blocks_to_the_os()
    # Free one 32 MB block first: without the policy this raises glibc's threshold to 32 MB,
    # and the 6 MB blocks after it would stay on the heap once freed (the policy maps every block
    # of 4 MB or more on its own).
    big = np.ones(4_000_000)
    del big
    before = _rss_mb()
    blocks = [np.ones(750_000) for _ in range(64)]  # 64 x 6 MB, touched
    during = _rss_mb()
    keep = blocks[::2]  # every other block stays: the freed ones are holes between them
    del blocks
    after = _rss_mb()
    assert during - before > 300
    assert after - before < 250, (before, during, after)
    assert len(keep) == 32

"""The process's memory policy (services/memory.py): large freed arrays leave resident memory;
smaller freed blocks stay for the next use, whichever thread made them."""

from __future__ import annotations

import platform
import subprocess
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


_ROUNDS = """
import resource, sys, threading
import numpy as np
from annotator.services import memory
if sys.argv[1] == "policy":
    assert memory.set_memory_policy()
else:  # the large blocks' setting alone
    assert memory.return_large_blocks_to_the_os()
faults = []
def work():
    for _ in range(4):
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        blocks = [np.ones(12_500) for _ in range(400)]  # 400 x 100 KB, touched, then freed
        del blocks
        faults.append(resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before)
worker = threading.Thread(target=work)
worker.start()
worker.join()
print(*faults)
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's allocator only",
)
def test_a_worker_thread_reuses_the_memory_it_freed() -> None:
    """The dashboard's workers each take and free tens of megabytes of blocks below the mmap
    threshold at every refresh. Under the policy, a worker's second round of the same work
    reuses the memory of the first (one heap, its freed top kept); with the large blocks'
    setting alone, the worker's own heap gives much of it back and faults it in again."""

    def rounds(mode: str) -> list[int]:
        out = subprocess.run(
            [sys.executable, "-c", _ROUNDS, mode], capture_output=True, text=True, check=True
        )
        return [int(x) for x in out.stdout.split()]

    pages = 400 * 100_000 // 4096  # the 40 MB a round touches, in pages
    kept, given_back = rounds("policy"), rounds("alone")
    assert kept[0] > pages // 2  # the first round faults its memory in
    assert max(kept[1:]) < pages // 10, kept
    assert min(given_back[1:]) > pages // 4, given_back  # 40% of it again, seen here

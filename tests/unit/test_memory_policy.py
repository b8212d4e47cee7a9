"""The process's memory policy (services/memory.py): large freed arrays leave resident memory;
smaller freed blocks stay for the next use, whichever thread made them."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

_BLOCKS = """
import numpy as np
from annotator.services import memory
assert memory.set_memory_policy()
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6
# Free one 32 MB block first: without the policy this raises glibc's threshold to 32 MB, and
# the 6 MB blocks after it would stay on the heap once freed (the policy maps every block of
# 4 MB or more on its own, the heap kept below them or not).
big = np.ones(4_000_000)
del big
before = rss_mb()
blocks = [np.ones(750_000) for _ in range(64)]  # 64 x 6 MB, touched
during = rss_mb()
keep = blocks[::2]  # every other block stays: the freed ones are holes between them
del blocks
print(before, during, rss_mb(), len(keep))
"""


def _run(script: str, *args: str) -> list[float]:
    """`script` in a fresh process (the suite's own may hold the policy already, set by a test
    that ran the command, with a heap that kept what earlier tests freed): its printed numbers."""
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    return [float(x) for x in out.stdout.split()]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's allocator only",
)
def test_freed_blocks_of_a_few_megabytes_leave_resident_memory() -> None:
    before, during, after, kept = _run(_BLOCKS)
    assert during - before > 300
    assert after - before < 250, (before, during, after)
    assert kept == 32


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

    pages = 400 * 100_000 // 4096  # the 40 MB a round touches, in pages
    kept, given_back = _run(_ROUNDS, "policy"), _run(_ROUNDS, "alone")
    assert kept[0] > pages // 2  # the first round faults its memory in
    assert max(kept[1:]) < pages // 10, kept
    assert min(given_back[1:]) > pages // 4, given_back  # 40% of it again, seen here

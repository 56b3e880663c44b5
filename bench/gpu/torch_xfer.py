#!/usr/bin/env python3
"""The PCIe ceiling for issue 10's od96 transfers: PyTorch copying the 1x3x640x640 fp32 input up
and the 1x1x640x640 output down, from pinned and pageable host tensors. Wall time of one copy then
torch.cuda.synchronize(), median of 41 (as bench/gpu/xfer_probe.c times OpenCL's copies)."""
import time

import torch


def med(fn, runs=41):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e6)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


for pinned in (True, False):
    up = torch.ones(1, 3, 640, 640, pin_memory=pinned)
    down = torch.empty(1, 1, 640, 640, pin_memory=pinned)
    dup = torch.empty(up.shape, device="cuda")
    ddown = torch.zeros(down.shape, device="cuda")
    for name, fn, nb in (("up", lambda: dup.copy_(up, non_blocking=True), up.nbytes),
                         ("down", lambda: down.copy_(ddown, non_blocking=True), down.nbytes),
                         ("up + down", lambda: (dup.copy_(up, non_blocking=True),
                                                down.copy_(ddown, non_blocking=True)), up.nbytes + down.nbytes)):
        m, lo = med(fn)
        print("torch %-9s %-8s %8d B: median %7.1f us (min %7.1f), %5.1f GB/s" %
              (name, "pinned" if pinned else "pageable", nb, m, lo, nb / (m * 1e3)))

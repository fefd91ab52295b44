#!/usr/bin/env python3
"""A Llama-style MLP block (gate, up: d -> ff; down: ff -> d; SiLU(gate) *
up) in PyTorch, its three linears swapped for qjit.Linear, run eagerly and
replayed from a CUDA graph; its output compared with the FP16 block and the
tokens per second of each reported.

    python samples/mlp_block.py [--scheme w4a8-lqq] [--group 128] [--d 4096] [--ff 11008] [--m 1,16,64]

Needs torch with CUDA and the qjit package (pip install ./python, or
PYTHONPATH=python QJIT_LIBRARY=build/libqjit.so)."""
import argparse
import time

import torch

import qjit


class MLP(torch.nn.Module):
    def __init__(self, gate, up, down):
        super().__init__()
        self.gate, self.up, self.down = gate, up, down

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def timed(fn, reps):
    """Median GPU time of fn in us (events around each call)."""
    fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return sorted(times)[len(times) // 2]


def graphed(block, x):
    """block(x) captured in a CUDA graph (after a warm-up on a side stream)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        block(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = block(x)
    return g, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", default="w4a8-lqq")
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--d", type=int, default=4096)
    ap.add_argument("--ff", type=int, default=11008)
    ap.add_argument("--m", default="1,16,64")
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    torch.manual_seed(0)
    lin = [torch.nn.Linear(a.d, a.ff, bias=False), torch.nn.Linear(a.d, a.ff, bias=False),
           torch.nn.Linear(a.ff, a.d, bias=False)]
    for layer in lin:
        torch.nn.init.normal_(layer.weight, std=0.02)
    fp16 = MLP(*[torch.nn.Linear(l.in_features, l.out_features, bias=False) for l in lin]).cuda().half()
    for dst, src in zip((fp16.gate, fp16.up, fp16.down), lin):
        dst.weight.data.copy_(src.weight.data.half())
    q = MLP(*[qjit.Linear.from_float(l, scheme=a.scheme, group=a.group, max_tokens=4096) for l in lin])
    print(f"qjit {qjit.version()} ({qjit.library_path}); {torch.cuda.get_device_name()}; MLP d={a.d} ff={a.ff}, "
          f"{a.scheme} g={a.group}; median of {a.reps}")
    print(f"{'M':>5} {'rel err':>8} {'fp16 us':>9} {'qjit us':>9} {'graph us':>9} {'fp16 graph':>10} "
          f"{'tok/s qjit graph':>16} {'x fp16 graph':>12}")
    for M in [int(m) for m in a.m.split(",")]:
        x = (torch.randn(M, a.d, device="cuda") * 0.5).half()
        with torch.no_grad():
            ref, out = fp16(x), q(x)
            rel = float((out.float() - ref.float()).norm() / ref.float().norm())
            t_fp16 = timed(lambda: fp16(x), a.reps)
            t_q = timed(lambda: q(x), a.reps)
            g, gy = graphed(q, x)
            gf, _ = graphed(fp16, x)
            g.replay()
            torch.cuda.synchronize()
            assert torch.equal(gy, q(x)), "the graph's replay differs from the eager block"
            t_g = timed(g.replay, a.reps)
            t_gf = timed(gf.replay, a.reps)
        print(f"{M:>5} {rel:>8.4f} {t_fp16:>9.1f} {t_q:>9.1f} {t_g:>9.1f} {t_gf:>10.1f} {M / t_g * 1e6:>16.0f} "
              f"{t_gf / t_g:>12.2f}")


if __name__ == "__main__":
    main()

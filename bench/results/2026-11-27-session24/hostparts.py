# what each piece of qjit.Linear's hot path costs on the host (bursts of 1000 after a sync, median of 20)
import time, torch, qjit
from qjit import _lib
from qjit.linear import _raw_stream
N, K = 512, 1024
lin = torch.nn.Linear(K, N, bias=False)
layer = qjit.Linear.from_float(lin, scheme="w4a8-lqq", group=128)
x = torch.randn(1, K).half().cuda(); y = layer(x); torch.cuda.synchronize()
ctx, handle = layer._layer(x.device); stream = torch.cuda.current_stream().cuda_stream
class Noop(torch.nn.Module):
    def forward(self, x):
        return x
noop = Noop()
def timed(fn, burst=100, rounds=30):
    per = []
    for _ in range(rounds):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(burst):
            fn()
        per.append((time.perf_counter() - t0) / burst * 1e6)
    torch.cuda.synchronize()
    return sorted(per)[len(per) // 2]
f = _lib.lib.qjit_linear_forward
parts = {
    "lambda": lambda: None,
    "module noop call": lambda: noop(x),
    "x.is_cuda": lambda: x.is_cuda, "x.dtype is": lambda: x.dtype is torch.float16, "x.dim()": lambda: x.dim(),
    "x.shape[-1]": lambda: x.shape[-1], "x.is_contiguous()": lambda: x.is_contiguous(),
    "x.data_ptr()": lambda: x.data_ptr(), "x.get_device()": lambda: x.get_device(), "x.numel()": lambda: x.numel(),
    "x.new_empty": lambda: x.new_empty((*x.shape[:-1], N)),
    "torch.empty(dtype, device)": lambda: torch.empty((*x.shape[:-1], N), dtype=torch.float16, device=x.device),
    "_raw_stream(0)": lambda: _raw_stream(0), "layer._native.get": lambda: layer._native.get(0),
    "C API": lambda: f(handle, 1, x.data_ptr(), y.data_ptr(), None, 0, stream),
    "layer.forward(x, out=y)": lambda: layer.forward(x, out=y), "layer(x, out=y)": lambda: layer(x, out=y),
    "layer(x)": lambda: layer(x),
}
for name, fn in parts.items():
    print(f"{name:28s} {timed(fn):7.2f} us")

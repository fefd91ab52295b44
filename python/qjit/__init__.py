"""qjit: low-bit GEMM kernels generated from templates, compiled with NVRTC
at run time for the GPU in hand, cached on disk and dispatched by shape.

    import qjit
    ctx = qjit.Context(arch="sm_90a")         # no GPU needed to generate/compile
    ctx.compile("scheme=w4a8-lqq;g=128")
    layer = qjit.Linear.from_float(torch_linear, scheme="w4a8-lqq", group=128)   # needs torch
    y = layer(x)                              # x: (..., K) float16 on CUDA

The C library is libqjit (bundled by `pip install ./python`, or $QJIT_LIBRARY)."""
from .core import SCHEMES, Context, QJitError, scheme_name, version
from ._lib import path as library_path

__all__ = ["SCHEMES", "Context", "QJitError", "Linear", "scheme_name", "version", "library_path"]
__version__ = version()


def __getattr__(name):
    # qjit.Linear needs torch; importing qjit does not.
    if name == "Linear":
        from .linear import Linear
        return Linear
    raise AttributeError(f"module 'qjit' has no attribute {name!r}")

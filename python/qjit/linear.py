"""qjit.Linear: a torch module running a packed qjit layer on the current
CUDA stream (FP16 activations in and out), built from an nn.Linear or a
weight tensor. Its packed buffer is a module buffer, so state_dict saves it
and load_state_dict restores it."""
import ctypes

import torch

from . import _lib
from .core import Context, _check
from ._lib import lib

_host = None

# torch's current stream on a device as a raw handle (what Triton uses: no
# Stream object per call), else the public way.
if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    _raw_stream = torch._C._cuda_getCurrentRawStream
else:  # pragma: no cover
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _host_context():
    """One context for host work (quantization, inspection): touches no GPU."""
    global _host
    if _host is None:
        _host = Context()
    return _host


class Linear(torch.nn.Module):
    """y = x W^T (+ bias) with W packed by qjit (a scheme, a group size).

    x: (..., in_features) of the layer's dtype (float16, or bfloat16), contiguous, on a
    CUDA device, 16-byte aligned; y: (..., out_features) of that dtype on the same device, computed on
    torch's current stream there. The first call on a device creates the
    layer there (uploads the weights; its kernels come from the disk cache or
    are compiled once). CUDA-graph capturable once a call at the largest M to
    be captured has run (the workspace grows outside capture only)."""

    def __init__(self, packed, bias=None, max_tokens=1024, dtype=torch.float16):
        super().__init__()
        data = bytes(packed) if not isinstance(packed, torch.Tensor) else packed.detach().cpu().contiguous().numpy().tobytes()
        info = _host_context().weights_info(data)
        self.register_buffer("packed", torch.frombuffer(bytearray(data), dtype=torch.uint8))
        self.scheme, self.group = info["scheme"], info["group"]
        self.in_features, self.out_features = int(info["K"]), int(info["N"])
        if dtype not in (torch.float16, torch.bfloat16):
            raise TypeError(f"a qjit.Linear's activations are torch.float16 or torch.bfloat16, not {dtype}")
        self.dtype = dtype
        if bias is not None:
            # FP32, added by the GEMM's epilogue before rounding to the output's dtype.
            bias = torch.as_tensor(bias).detach().to("cpu", torch.float32).reshape(-1)
            if bias.numel() != self.out_features:
                raise ValueError(f"bias has {bias.numel()} values, not out_features = {self.out_features}")
            if not bool(torch.isfinite(bias).all()):
                raise ValueError("bias holds a value that is not finite")
            self.register_buffer("bias", bias.clone())
        else:
            self.bias = None
        self.max_tokens = int(max_tokens)
        self._native = {}          # device index -> (Context, qjit_linear handle)

    @classmethod
    def from_float(cls, layer, scheme="w4a8-lqq", group=128, max_tokens=1024, dtype=None, **options):
        """Quantizes an nn.Linear (or a weight tensor, out x in) with a scheme
        and group size (0: per channel). dtype: the activations' (float16 or
        bfloat16; None: bfloat16 for a bfloat16 layer, else float16).
        options as Context.quantize_weights: alpha, sparsity, block, calib
        (calibration rows, a tensor), a8_fraction, layer_name."""
        weight = layer.weight if isinstance(layer, torch.nn.Linear) else layer
        bias = layer.bias if isinstance(layer, torch.nn.Linear) else options.pop("bias", None)
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            raise TypeError("from_float takes an nn.Linear or a 2-D weight tensor (out_features x in_features)")
        W = weight.detach().to("cpu", torch.float32).contiguous()
        if "calib" in options and isinstance(options["calib"], torch.Tensor):
            options["calib"] = options["calib"].detach().to("cpu", torch.float32).contiguous()
        N, K = W.shape
        if dtype is None:
            dtype = torch.bfloat16 if weight.dtype == torch.bfloat16 else torch.float16
        packed = _host_context().quantize_weights(W, scheme, group, N, K, **options)
        return cls(packed, bias=bias, max_tokens=max_tokens, dtype=dtype)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, scheme={self.scheme}, "
                f"group={self.group}, dtype={self.dtype}, bias={self.bias is not None}")

    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self._release()

    def _release(self):
        for ctx, handle in self._native.values():
            lib.qjit_linear_destroy(handle)
            ctx.close()
        self._native = {}

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass

    def _layer(self, device):
        """(Context, qjit_linear handle) of the layer on a CUDA device (a
        torch.device or its index), created on first use there."""
        index = device if isinstance(device, int) else device.index
        if index is None:
            index = torch.cuda.current_device()
        got = self._native.get(index)
        if got is not None:
            return got
        data = self.packed.detach().cpu().contiguous()
        ctx = Context(device=index)
        opts = _lib.LinearOptions()
        lib.qjit_linear_options_init(ctypes.byref(opts))
        opts.max_tokens = self.max_tokens
        opts.dtype = 3 if self.dtype == torch.bfloat16 else 1     # QJIT_DTYPE_BF16 / _F16
        bias = None
        if self.bias is not None:                                  # copied by create
            bias = self.bias.detach().to("cpu", torch.float32).contiguous()
            opts.bias = bias.data_ptr()
        handle = ctypes.c_void_p()
        with torch.cuda.device(index):
            _check(lib.qjit_linear_create(ctx.handle, data.data_ptr(), data.numel(), ctypes.byref(opts),
                                          ctypes.byref(handle)), ctx.handle)
        self._native[index] = (ctx, handle.value)
        return self._native[index]

    def _format(self, ctx, handle, M):
        fmt = _lib.TokensFormat()
        lib.qjit_tokens_format_init(ctypes.byref(fmt))
        _check(lib.qjit_linear_tokens_format(handle, M, ctypes.byref(fmt)), ctx.handle)
        return fmt

    def _check_input(self, x):
        """x's data pointer, once x is checked: a CUDA tensor of the layer's dtype,
        contiguous, 16-byte aligned, its last dimension in_features."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"qjit.Linear takes a torch.Tensor, not {type(x).__name__}")
        if not x.is_cuda:
            raise ValueError(f"qjit.Linear runs on CUDA tensors; x is on {x.device}")
        if x.dtype is not self.dtype:
            raise TypeError(f"this qjit.Linear takes {self.dtype} activations, not {x.dtype}")
        shape = x.shape
        if not shape or shape[-1] != self.in_features:
            raise ValueError(f"x has shape {tuple(shape)}; its last dimension must be in_features = "
                             f"{self.in_features}")
        if not x.is_contiguous():
            raise ValueError("x must be contiguous (x.contiguous())")
        ptr = x.data_ptr()
        if ptr & 15:
            raise ValueError("x must be 16-byte aligned (a view starting mid-row is not)")
        return ptr

    def forward(self, x, out=None):
        """y = x W^T (+ bias) on torch's current stream. out: a tensor to
        write y into instead of a new one (the layer's dtype, contiguous,
        16-byte aligned, on x's device, x.numel() / in_features rows of
        out_features: its last dimension out_features), which saves torch's
        allocation, most of a call's host time."""
        # The hot path: a handful of attribute reads (the careful checks with
        # their messages run only when one of them fails), no torch.device
        # object, one allocation or none, one C call.
        K = self.in_features
        if (x.__class__ is not torch.Tensor and not isinstance(x, torch.Tensor)) or x.dtype is not self.dtype \
                or not x.is_cuda or not x.dim() or x.size(-1) != K or not x.is_contiguous():
            self._check_input(x)
        ptr = x.data_ptr()
        if ptr & 15:
            self._check_input(x)
        index = x.get_device()
        native = self._native.get(index) or self._layer(index)
        M = x.numel() // K
        if out is None:
            y = x.new_empty((*x.shape[:-1], self.out_features))
            yptr = y.data_ptr()
        else:
            y = out
            yptr = self._check_out(out, index, M)
        if M:
            status = lib.qjit_linear_forward(native[1], M, ptr, yptr, None, 0, _raw_stream(index))
            if status:
                _check(status, native[0].handle)
        return y

    def _check_out(self, out, index, M):
        """out's data pointer, once out is checked to hold y: nothing is
        launched on a wrong one."""
        N = self.out_features
        if out.__class__ is not torch.Tensor and not isinstance(out, torch.Tensor):
            raise TypeError(f"out must be a torch.Tensor, not {type(out).__name__}")
        if out.dtype is not self.dtype or out.get_device() != index or not out.is_contiguous() \
                or out.numel() != M * N or not out.dim() or out.size(-1) != N:
            raise ValueError(f"out must be a contiguous {self.dtype} tensor on cuda:{index} of {M} x {N} values "
                             f"(its last dimension {N}); it is {out.dtype} {tuple(out.shape)} on {out.device}"
                             f"{'' if out.is_contiguous() else ', not contiguous'}")
        ptr = out.data_ptr()
        if ptr & 15:
            raise ValueError("out must be 16-byte aligned (a view starting mid-row is not)")
        return ptr

    def variant(self, M, device=None):
        """The GEMM variant key the layer runs at M tokens."""
        ctx, handle = self._layer(torch.device(device or "cuda"))
        buf = ctypes.create_string_buffer(1024)
        _check(lib.qjit_linear_variant(handle, int(M), buf, len(buf)), ctx.handle)
        return buf.value.decode()

    def quantize(self, x):
        """The layer's activation quantization alone (its own kernel, on the
        current stream): a dict of tensors xq (M x row_bytes, int8), sx
        (M x scales, float32) and, for layers that take them, rowsum (M,
        int32), for forward_tokens."""
        self._check_input(x)
        M = x.numel() // self.in_features
        if M == 0:
            raise ValueError("x holds no tokens")
        ctx, handle = self._layer(x.device)
        fmt = self._format(ctx, handle, M)
        out = {"xq": torch.empty((M, fmt.row_bytes), dtype=torch.int8, device=x.device),
               "sx": torch.empty((M, fmt.scales), dtype=torch.float32, device=x.device)}
        if fmt.rowsum:
            out["rowsum"] = torch.empty((M,), dtype=torch.int32, device=x.device)
        t = self._tokens(out, M, fmt, x.device)
        _check(lib.qjit_linear_quantize(handle, M, x.data_ptr(), ctypes.byref(t), _raw_stream(x.get_device())),
               ctx.handle)
        return out

    @staticmethod
    def _tokens(tokens, M, fmt, device):
        """The C struct of a dict of token tensors, each checked against the
        format at M (its bytes, device, layout): nothing is launched on a
        tensor too small."""
        want = {"xq": M * fmt.row_bytes, "sx": M * fmt.scales * 4, "rowsum": M * 4 if fmt.rowsum else 0}
        t = _lib.Tokens()
        lib.qjit_tokens_init(ctypes.byref(t))
        for name, nbytes in want.items():
            v = tokens.get(name)
            if v is None:
                if nbytes:
                    raise ValueError(f"tokens['{name}'] is missing: this layer takes it")
                continue
            if not nbytes:
                raise ValueError(f"tokens['{name}'] is given, but this layer takes none")
            if not isinstance(v, torch.Tensor) or v.device != device or not v.is_contiguous():
                raise ValueError(f"tokens['{name}'] must be a contiguous tensor on {device}")
            if v.numel() * v.element_size() != nbytes:
                raise ValueError(f"tokens['{name}'] holds {v.numel() * v.element_size()} bytes; {M} tokens take "
                                 f"{nbytes}")
            setattr(t, name, v.data_ptr())
        return t

    def forward_tokens(self, tokens):
        """y from tokens quantized before (quantize(), or an engine's own
        kernel writing the same format: qjit_linear_tokens_format), the GEMM
        alone on the current stream: y is (M, out_features) of the layer's dtype."""
        xq = tokens.get("xq") if isinstance(tokens, dict) else None
        if not isinstance(xq, torch.Tensor) or xq.dim() != 2 or not xq.is_cuda:
            raise ValueError("tokens must be a dict whose 'xq' is a 2-D CUDA tensor (M x row_bytes)")
        M = xq.shape[0]
        ctx, handle = self._layer(xq.device)
        t = self._tokens(tokens, M, self._format(ctx, handle, M), xq.device)
        y = torch.empty((M, self.out_features), dtype=self.dtype, device=xq.device)
        _check(lib.qjit_linear_forward_tokens(handle, M, ctypes.byref(t), y.data_ptr(), None, 0,
                                              _raw_stream(xq.get_device())), ctx.handle)
        return y

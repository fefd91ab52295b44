"""The C API as Python: a Context (keys, generation, compilation, the disk
cache, host quantization and the CPU reference) and QJitError. Host-side
buffers are anything with the buffer protocol (bytes, bytearray,
array.array, numpy arrays, memoryview) or CPU torch tensors."""
import ctypes
import os

from . import _lib
from ._lib import lib

SCHEMES = ("w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8", "w4a4", "w4ax", "w4ax-s")
DTYPE_F16, DTYPE_F32, DTYPE_BF16 = 1, 2, 3


class QJitError(RuntimeError):
    """A qjit call failed: .status is the C status name ("QJIT_INVALID_KEY",
    ...), the message the library's own (qjit_last_error)."""

    def __init__(self, status, message):
        self.status = lib.qjit_status_name(status).decode()
        self.code = status
        super().__init__(f"{self.status}: {message}")


def _check(status, ctx=None):
    if status != 0:
        raise QJitError(status, (lib.qjit_last_error(ctx) or b"").decode(errors="replace"))


def _b(text):
    return None if text is None else str(text).encode()


def version():
    """The library's version string ("0.2.0")."""
    return lib.qjit_version_string().decode()


def scheme_id(scheme):
    """The C enum value of a scheme name or alias ("w4a8-lqq", "lqq", "int8", ...)."""
    out = ctypes.c_int()
    _check(lib.qjit_scheme_from_name(_b(scheme), ctypes.byref(out)))
    return out.value


def scheme_name(scheme):
    """The canonical name of a scheme given by name, alias or enum value."""
    sid = scheme if isinstance(scheme, int) else scheme_id(scheme)
    return lib.qjit_scheme_name(sid).decode()


class _HostBuffer:
    """A host buffer's address and size: keeps what it wraps alive."""

    def __init__(self, obj, what, writable=False):
        self.keep = obj
        if obj is None:
            self.ptr, self.nbytes = None, 0
            return
        if hasattr(obj, "data_ptr") and hasattr(obj, "is_cuda"):          # a torch tensor
            if obj.is_cuda:
                raise ValueError(f"{what} must be in host memory (a CPU tensor), not on {obj.device}")
            if not obj.is_contiguous():
                raise ValueError(f"{what} must be contiguous")
            self.ptr, self.nbytes = obj.data_ptr(), obj.numel() * obj.element_size()
            return
        view = memoryview(obj)
        if not view.c_contiguous:
            raise ValueError(f"{what} must be contiguous")
        if writable and view.readonly:
            raise ValueError(f"{what} must be writable")
        self.nbytes = view.nbytes
        if view.readonly:
            self.keep = bytes(view) if not isinstance(obj, bytes) else obj
            self.ptr = ctypes.cast(ctypes.c_char_p(self.keep), ctypes.c_void_p).value
        else:
            self.ptr = ctypes.addressof(ctypes.c_char.from_buffer(view.cast("B")))
        self.view = view


def _dtype_of(obj, what):
    """QJIT_DTYPE_F32 or _F16 of a host array of floats: a numpy array or
    torch tensor by its dtype; an array.array or memoryview by its format,
    'f' for float32 and 'H' (uint16: the bits of float16 values) or 'e'
    for float16."""
    name = getattr(obj, "dtype", getattr(obj, "typecode", None))
    if name is None:
        try:
            name = memoryview(obj).format
        except TypeError:
            name = ""
    name = str(name)
    if name in ("float32", "torch.float32", "f"):
        return DTYPE_F32
    if name in ("float16", "torch.float16", "e", "H"):
        return DTYPE_F16
    if name in ("bfloat16", "torch.bfloat16"):
        return DTYPE_BF16
    raise TypeError(f"{what} must hold float32, float16 or bfloat16 values, not {name or type(obj).__name__}")


class Context:
    """A qjit context: where keys are generated, compiled and cached. Works
    without a GPU when arch is given (or $QJIT_ARCH is set)."""

    def __init__(self, arch=None, cache_dir=None, template_path=None, device=0):
        opts = _lib.ContextOptions()
        lib.qjit_context_options_init(ctypes.byref(opts))
        self._keep = (_b(arch), _b(cache_dir), _b(template_path))
        opts.arch, opts.cache_dir, opts.template_path = self._keep
        opts.device = int(device)
        handle = ctypes.c_void_p()
        _check(lib.qjit_context_create(ctypes.byref(opts), ctypes.byref(handle)))
        self.handle = handle

    def close(self):
        if self.handle:
            lib.qjit_context_destroy(self.handle)
            self.handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, status):
        _check(status, self.handle)

    @property
    def templates(self):
        """The template search path in use (the built-in templates last)."""
        return lib.qjit_context_templates(self.handle).decode()

    @property
    def cache_dir(self):
        return lib.qjit_context_cache_dir(self.handle).decode()

    @property
    def arch(self):
        """The compile target ("sm_90a"): the one given, else the device's."""
        buf = ctypes.create_string_buffer(32)
        self._check(lib.qjit_context_arch(self.handle, buf, len(buf)))
        return buf.value.decode()

    def canonicalize(self, key):
        """A variant key in canonical form (every field, defaults filled, sorted)."""
        buf = ctypes.create_string_buffer(2048)
        self._check(lib.qjit_key_canonicalize(self.handle, _b(key), buf, len(buf)))
        return buf.value.decode()

    def generate(self, key):
        """The CUDA source the templates generate for a key."""
        src, n = ctypes.c_void_p(), ctypes.c_size_t()
        self._check(lib.qjit_generate(self.handle, _b(key), ctypes.byref(src), ctypes.byref(n)))
        try:
            return ctypes.string_at(src, n.value).decode()
        finally:
            lib.qjit_free(self.handle, src)

    def compile(self, key, arch=None):
        """Compiles a key into the disk cache (a cached one is only verified);
        returns what it did: from_cache, healed, seconds, the entry's name."""
        info = _lib.CompileInfo()
        self._check(lib.qjit_compile(self.handle, _b(key), _b(arch), ctypes.byref(info)))
        return {"from_cache": bool(info.from_cache), "healed": bool(info.healed),
                "generate_seconds": info.generate_seconds, "compile_seconds": info.compile_seconds,
                "total_seconds": info.total_seconds, "entry": info.entry.decode()}

    def default_variants(self, arch=None, dtype="float16"):
        """The default variant set (canonical keys) for arch, of FP16 layers
        or (dtype "bfloat16") BF16 ones."""
        keys = ctypes.c_void_p()
        code = {"float16": DTYPE_F16, "bfloat16": DTYPE_BF16}.get(str(dtype).replace("torch.", ""))
        if code is None:
            raise ValueError(f"dtype must be float16 or bfloat16, not {dtype}")
        self._check(lib.qjit_default_variants_dtype(self.handle, _b(arch), code, ctypes.byref(keys)))
        try:
            return ctypes.string_at(keys).decode().split()
        finally:
            lib.qjit_free(self.handle, keys)

    def cache_list(self):
        """The cache's entries, each verified: dicts of name, key, arch,
        bytes, valid, problem."""
        out = []

        def visit(_ud, e):
            c = e.contents
            out.append({"name": c.name.decode(), "key": (c.key or b"").decode(), "arch": (c.arch or b"").decode(),
                        "bytes": c.bytes, "valid": bool(c.valid),
                        "problem": c.problem.decode() if c.problem else None})
            return 0

        bad = ctypes.c_size_t()
        self._check(lib.qjit_cache_list(self.handle, _lib.CACHE_VISIT(visit), None, ctypes.byref(bad)))
        return out

    def cache_clear(self):
        """Removes every qjit entry of the cache folder; returns how many."""
        n = ctypes.c_size_t()
        self._check(lib.qjit_cache_clear(self.handle, ctypes.byref(n)))
        return n.value

    def records_export(self, path):
        """Writes the cache folder's tuning records into one file (to ship to
        machines with the same GPU); returns how many."""
        n = ctypes.c_size_t()
        self._check(lib.qjit_records_export(self.handle, _b(os.fspath(path)), ctypes.byref(n)))
        return n.value

    def records_import(self, path):
        """Stores the tuning records of an exported file in the cache folder,
        each verified; returns (stored, damaged and skipped)."""
        n, bad = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(lib.qjit_records_import(self.handle, _b(os.fspath(path)), ctypes.byref(n), ctypes.byref(bad)))
        return n.value, bad.value

    def record_variants(self, arch=None):
        """The kernels the cache folder's tuning records run, planned for arch
        (None: the context's): what to pre-compile on a machine without the
        GPU after importing a fleet's records."""
        keys = ctypes.c_void_p()
        self._check(lib.qjit_record_variants(self.handle, _b(arch), ctypes.byref(keys)))
        try:
            return ctypes.string_at(keys).decode().split()
        finally:
            lib.qjit_free(self.handle, keys)

    # Tuning (needs a GPU): the M buckets and variants measured best for a
    # layer on this GPU, stored as a tuning record in the cache folder.

    _PHASES = {1: "compile", 2: "time", 3: "check"}

    def _tune_options(self, ms, dtype, bias, reps, threads, store, progress):
        o = _lib.TuneOptions()
        lib.qjit_tune_options_init(ctypes.byref(o))
        keep = []
        if ms is not None:
            ms = [int(m) for m in ms]
            if not ms or len(ms) > _lib.TUNE_MAX_POINTS:
                raise ValueError(f"ms: 1 to {_lib.TUNE_MAX_POINTS} token counts, not {len(ms)}")
            arr = (ctypes.c_int64 * len(ms))(*ms)
            keep.append(arr)
            o.ms, o.n_ms = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int64)), len(ms)
        code = {"float16": DTYPE_F16, "bfloat16": DTYPE_BF16}.get(str(dtype).replace("torch.", ""))
        if code is None:
            raise ValueError(f"dtype must be float16 or bfloat16, not {dtype}")
        o.dtype, o.bias, o.reps, o.threads, o.store = code, int(bool(bias)), int(reps), int(threads), int(bool(store))
        if progress is not None:
            def call(_ud, p):
                c = p.contents
                progress({"phase": self._PHASES.get(c.phase, "?"), "done": c.done, "total": c.total,
                          "elapsed_seconds": c.elapsed_seconds, "seconds_left": c.seconds_left,
                          "best_speedup": c.best_speedup})
            cb = _lib.TUNE_PROGRESS(call)
            keep.append(cb)
            o.progress = cb
        return o, keep

    @staticmethod
    def _tune_report(r):
        return {"points": [{"M": p.M, "static_us": p.static_us, "tuned_us": p.tuned_us, "bucket": p.bucket}
                           for p in r.points[:r.npoints]],
                "buckets": [{"max_m": b.max_m, "key": b.key.decode()} for b in r.buckets[:r.nbuckets]],
                "candidates": r.candidates, "failed": r.failed, "timings": r.timings, "speedup": r.speedup,
                "monotone": bool(r.monotone), "stored": bool(r.stored), "compile_seconds": r.compile_seconds,
                "time_seconds": r.time_seconds, "check_seconds": r.check_seconds, "total_seconds": r.total_seconds}

    def tune(self, packed, ms=None, dtype="float16", bias=False, reps=20, threads=0, store=True, progress=None):
        """Tunes the layer of a packed buffer (as Linear takes it) on this
        context's GPU and stores its tuning record (unless store is False):
        Linear layers of the same scheme, group, shape, dtype, bias and
        residual made afterwards on this GPU use it. ms: the token counts to
        measure (None: 1..4096 in 20 steps and the table's bucket edges);
        progress: called with a dict (phase, done, total, elapsed_seconds,
        seconds_left, best_speedup). Returns the report: per point M,
        static_us, tuned_us, bucket; the buckets (max_m, key); candidates,
        failed, timings, speedup, monotone, stored and the seconds spent."""
        b = _HostBuffer(packed, "packed")
        o, keep = self._tune_options(ms, dtype, bias, reps, threads, store, progress)
        r = _lib.TuneReport()
        r.struct_size = ctypes.sizeof(r)
        self._check(lib.qjit_tune_layer(self.handle, b.ptr, b.nbytes, ctypes.byref(o), ctypes.byref(r)))
        del keep
        return self._tune_report(r)

    def tune_shape(self, scheme, group, N, K, **options):
        """tune() for an N x K layer of scheme and group on random dense
        weights (the record serves every dense layer of that shape); options
        as tune's."""
        o, keep = self._tune_options(options.pop("ms", None), options.pop("dtype", "float16"),
                                     options.pop("bias", False), options.pop("reps", 20), options.pop("threads", 0),
                                     options.pop("store", True), options.pop("progress", None))
        if options:
            raise TypeError(f"tune_shape: unknown option(s) {', '.join(sorted(options))}")
        r = _lib.TuneReport()
        r.struct_size = ctypes.sizeof(r)
        self._check(lib.qjit_tune_shape(self.handle, scheme_id(scheme), int(group), int(N), int(K), ctypes.byref(o),
                                        ctypes.byref(r)))
        del keep
        return self._tune_report(r)

    # Host quantization and the CPU reference.

    @staticmethod
    def _quantize_options(K, alpha=0, sparsity=0.0, block=None, calib=None, a8_fraction=0.0, layer_name=None):
        o = _lib.QuantizeOptions()
        lib.qjit_quantize_options_init(ctypes.byref(o))
        o.alpha, o.sparsity, o.a8_fraction = int(alpha), float(sparsity), float(a8_fraction)
        o.layer_name = _b(layer_name)
        if block:
            o.block_n, o.block_k = int(block[0]), int(block[1])
        keep = [o.layer_name]
        if calib is not None:
            cb = _HostBuffer(calib, "calib")
            o.calib, o.calib_dtype = cb.ptr, _dtype_of(calib, "calib")
            per_row = 4 if o.calib_dtype == DTYPE_F32 else 2
            if cb.nbytes % (per_row * K):
                raise ValueError(f"calib holds {cb.nbytes} bytes: not whole rows of K = {K} values")
            o.calib_rows = cb.nbytes // per_row // K
            keep.append(cb)
        return o, keep

    def quantize_weights(self, W, scheme, group, N, K, **options):
        """Packs W (N x K float32, float16 or bfloat16, host, row-major) with a scheme
        and group size (0: per channel) into the self-describing buffer a
        layer takes (bytes). options: alpha (w4a8-is), sparsity, block
        ((block_n, block_k)), calib (calibration rows x K, float16/32),
        a8_fraction (w4ax, w4ax-s), layer_name."""
        N, K, group = int(N), int(K), int(group)
        w = _HostBuffer(W, "W")
        dtype = _dtype_of(W, "W")
        if w.nbytes != N * K * (4 if dtype == DTYPE_F32 else 2):
            raise ValueError(f"W holds {w.nbytes} bytes, not N x K = {N} x {K} values")
        opts, keep = self._quantize_options(K, **options)
        sid = scheme_id(scheme)
        size = ctypes.c_size_t()
        self._check(lib.qjit_packed_size_ex(self.handle, sid, group, N, K, ctypes.byref(opts), ctypes.byref(size)))
        out = ctypes.create_string_buffer(size.value)
        written = ctypes.c_size_t()
        self._check(lib.qjit_quantize_weights_ex(self.handle, sid, group, w.ptr, dtype, N, K, ctypes.byref(opts),
                                                 out, size.value, ctypes.byref(written)))
        del keep
        return out.raw[:written.value]

    def weights_info(self, packed):
        """What a packed buffer holds (verified): scheme, group, N, K, bytes,
        payload_bytes, alpha, and its activations (bits, parts, a8_channels,
        permuted)."""
        b = _HostBuffer(packed, "packed")
        info = _lib.WeightsInfo()
        self._check(lib.qjit_weights_inspect(self.handle, b.ptr, b.nbytes, ctypes.byref(info)))
        act = _lib.ActivationInfo()
        lib.qjit_activation_info_init(ctypes.byref(act))
        self._check(lib.qjit_weights_activation(self.handle, b.ptr, b.nbytes, ctypes.byref(act)))
        return {"scheme": scheme_name(info.scheme), "group": info.group, "N": info.N, "K": info.K,
                "bytes": info.bytes, "payload_bytes": info.payload_bytes, "alpha": info.alpha,
                "bits": act.bits, "parts": act.parts, "a8_channels": act.a8_channels, "permuted": bool(act.permuted)}

    def reference(self, packed, X, M):
        """The CPU reference of a layer on X (M x K float16 or bfloat16,
        host): the activation quantization the layer takes, then the exact
        INT32 sums and the FP32 output. Returns (Y, acc) as array('f') and
        array('i'), M x N (acc: one plane per activation part)."""
        from array import array
        info = self.weights_info(packed)
        N, K, parts, M = info["N"], info["K"], info["parts"], int(M)
        dtype = _dtype_of(X, "X")
        if dtype not in (DTYPE_F16, DTYPE_BF16):
            raise TypeError("X must hold float16 or bfloat16 values")
        x = _HostBuffer(X, "X")
        if x.nbytes != M * K * 2:
            raise ValueError(f"X holds {x.nbytes} bytes, not M x K = {M} x {K} 16-bit values")
        p = _HostBuffer(packed, "packed")
        xq = ctypes.create_string_buffer(M * K)
        sx = (ctypes.c_float * (M * parts))()
        acc = (ctypes.c_int32 * (M * N * parts))()
        y = (ctypes.c_float * (M * N))()
        self._check(lib.qjit_reference_quantize_activations_dtype(self.handle, p.ptr, p.nbytes, M, dtype, x.ptr, xq,
                                                                  sx))
        self._check(lib.qjit_reference_gemm(self.handle, p.ptr, p.nbytes, M, xq, sx, acc, y))
        return array("f", bytes(y)), array("i", bytes(acc))

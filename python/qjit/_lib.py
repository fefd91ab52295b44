"""ctypes bindings over libqjit's C API (include/qjit.h): the library, its
structs and its functions' signatures. Nothing here allocates on the GPU."""
import ctypes
import ctypes.util
import glob
import os

c_size_t, c_int, c_int64, c_uint32, c_uint64 = (ctypes.c_size_t, ctypes.c_int, ctypes.c_int64,
                                                 ctypes.c_uint32, ctypes.c_uint64)
c_char_p, c_void_p, c_double = ctypes.c_char_p, ctypes.c_void_p, ctypes.c_double


def _find_library():
    """QJIT_LIBRARY, else the copy bundled with the package (pip install),
    else the system's (an installed qjit)."""
    path = os.environ.get("QJIT_LIBRARY")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = sorted(glob.glob(os.path.join(here, "_native", "lib*", "libqjit.so*")), key=len)
    if bundled:
        return bundled[0]
    return ctypes.util.find_library("qjit")


_path = _find_library()
if not _path:
    raise ImportError("qjit: libqjit not found: install the package from the repository (pip install ./python, "
                      "which builds it), set QJIT_LIBRARY to a libqjit.so, or install qjit (cmake --install)")
lib = ctypes.CDLL(_path)
path = _path


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("device", c_int), ("cache_dir", c_char_p),
                ("template_path", c_char_p), ("arch", c_char_p), ("host_realloc", c_void_p),
                ("host_ud", c_void_p), ("dev_alloc", c_void_p), ("dev_free", c_void_p), ("dev_ud", c_void_p),
                ("log", c_void_p), ("log_ud", c_void_p), ("line_info", c_int)]


class CompileInfo(ctypes.Structure):
    _fields_ = [("from_cache", c_int), ("healed", c_int), ("generate_seconds", c_double),
                ("compile_seconds", c_double), ("total_seconds", c_double), ("entry", ctypes.c_char * 80)]


class CacheEntryInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("key", c_char_p), ("arch", c_char_p), ("bytes", c_uint64),
                ("valid", c_int), ("problem", c_char_p)]


CACHE_VISIT = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(CacheEntryInfo))


class WeightsInfo(ctypes.Structure):
    _fields_ = [("scheme", c_int), ("group", c_int), ("N", c_int64), ("K", c_int64), ("bytes", c_size_t),
                ("payload_bytes", c_size_t), ("alpha", c_double)]


class QuantizeOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("alpha", c_uint32), ("layer_name", c_char_p), ("sparsity", c_double),
                ("block_n", c_int), ("block_k", c_int), ("calib", c_void_p), ("calib_dtype", c_int),
                ("calib_rows", c_int64), ("hessian_diag", c_void_p), ("a8_fraction", c_double)]


class ActivationInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("bits", c_int), ("parts", c_int), ("a8_channels", c_int64),
                ("permuted", c_int)]


class LinearOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("max_tokens", c_int64), ("eager", c_int), ("variant", c_char_p),
                ("dtype", c_int), ("bias", c_void_p)]


class Tokens(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("xq", c_void_p), ("sx", c_void_p), ("rowsum", c_void_p)]


class TokensFormat(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("row_bytes", c_int64), ("pack", c_int), ("scales", c_int),
                ("rowsum", c_int)]


class TuneProgress(ctypes.Structure):
    _fields_ = [("phase", c_int), ("done", c_int64), ("total", c_int64), ("elapsed_seconds", c_double),
                ("seconds_left", c_double), ("best_speedup", c_double)]


TUNE_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, ctypes.POINTER(TuneProgress))


class TuneOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("ms", ctypes.POINTER(c_int64)), ("n_ms", c_size_t), ("dtype", c_int),
                ("bias", c_int), ("reps", c_int), ("threads", c_int), ("store", c_int), ("progress", TUNE_PROGRESS),
                ("progress_ud", c_void_p)]


TUNE_MAX_POINTS, TUNE_MAX_BUCKETS, TUNE_KEY_BYTES = 32, 8, 512


class TunePoint(ctypes.Structure):
    _fields_ = [("M", c_int64), ("static_us", c_double), ("tuned_us", c_double), ("bucket", c_int)]


class TuneBucket(ctypes.Structure):
    _fields_ = [("max_m", c_int64), ("key", ctypes.c_char * TUNE_KEY_BYTES)]


class TuneReport(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("npoints", c_int), ("points", TunePoint * TUNE_MAX_POINTS),
                ("nbuckets", c_int), ("buckets", TuneBucket * TUNE_MAX_BUCKETS), ("candidates", c_int),
                ("failed", c_int), ("timings", c_int64), ("speedup", c_double), ("monotone", c_int),
                ("stored", c_int), ("compile_seconds", c_double), ("time_seconds", c_double),
                ("check_seconds", c_double), ("total_seconds", c_double)]


def _sig(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


P = ctypes.POINTER
_sig("qjit_version_string", c_char_p)
_sig("qjit_status_name", c_char_p, c_int)
_sig("qjit_status_string", c_char_p, c_int)
_sig("qjit_context_options_init", None, P(ContextOptions))
_sig("qjit_context_create", c_int, P(ContextOptions), P(c_void_p))
_sig("qjit_context_destroy", None, c_void_p)
_sig("qjit_last_error", c_char_p, c_void_p)
_sig("qjit_context_arch", c_int, c_void_p, c_char_p, c_size_t)
_sig("qjit_context_templates", c_char_p, c_void_p)
_sig("qjit_context_cache_dir", c_char_p, c_void_p)
_sig("qjit_key_canonicalize", c_int, c_void_p, c_char_p, c_char_p, c_size_t)
_sig("qjit_generate", c_int, c_void_p, c_char_p, P(c_void_p), P(c_size_t))
_sig("qjit_free", None, c_void_p, c_void_p)
_sig("qjit_compile", c_int, c_void_p, c_char_p, c_char_p, P(CompileInfo))
_sig("qjit_default_variants", c_int, c_void_p, c_char_p, P(c_void_p))
_sig("qjit_cache_list", c_int, c_void_p, CACHE_VISIT, c_void_p, P(c_size_t))
_sig("qjit_cache_clear", c_int, c_void_p, P(c_size_t))
_sig("qjit_records_export", c_int, c_void_p, c_char_p, P(c_size_t))
_sig("qjit_records_import", c_int, c_void_p, c_char_p, P(c_size_t), P(c_size_t))
_sig("qjit_record_variants", c_int, c_void_p, c_char_p, P(c_void_p))
_sig("qjit_tune_options_init", None, P(TuneOptions))
_sig("qjit_tune_layer", c_int, c_void_p, c_void_p, c_size_t, P(TuneOptions), P(TuneReport))
_sig("qjit_tune_shape", c_int, c_void_p, c_int, c_int, c_int64, c_int64, P(TuneOptions), P(TuneReport))
_sig("qjit_scheme_name", c_char_p, c_int)
_sig("qjit_scheme_from_name", c_int, c_char_p, P(c_int))
_sig("qjit_quantize_options_init", None, P(QuantizeOptions))
_sig("qjit_packed_size_ex", c_int, c_void_p, c_int, c_int, c_int64, c_int64, P(QuantizeOptions), P(c_size_t))
_sig("qjit_quantize_weights_ex", c_int, c_void_p, c_int, c_int, c_void_p, c_int, c_int64, c_int64,
     P(QuantizeOptions), c_void_p, c_size_t, P(c_size_t))
_sig("qjit_weights_inspect", c_int, c_void_p, c_void_p, c_size_t, P(WeightsInfo))
_sig("qjit_activation_info_init", None, P(ActivationInfo))
_sig("qjit_weights_activation", c_int, c_void_p, c_void_p, c_size_t, P(ActivationInfo))
_sig("qjit_reference_quantize_activations_for", c_int, c_void_p, c_void_p, c_size_t, c_int64, c_void_p, c_void_p,
     c_void_p)
_sig("qjit_reference_quantize_activations_dtype", c_int, c_void_p, c_void_p, c_size_t, c_int64, c_int, c_void_p,
     c_void_p, c_void_p)
_sig("qjit_default_variants_dtype", c_int, c_void_p, c_char_p, c_int, P(c_void_p))
_sig("qjit_reference_gemm", c_int, c_void_p, c_void_p, c_size_t, c_int64, c_void_p, c_void_p, c_void_p, c_void_p)
_sig("qjit_linear_options_init", None, P(LinearOptions))
_sig("qjit_linear_create", c_int, c_void_p, c_void_p, c_size_t, P(LinearOptions), P(c_void_p))
_sig("qjit_linear_destroy", None, c_void_p)
_sig("qjit_linear_workspace_size", c_int, c_void_p, c_int64, P(c_size_t))
_sig("qjit_linear_forward", c_int, c_void_p, c_int64, c_void_p, c_void_p, c_void_p, c_size_t, c_void_p)
_sig("qjit_linear_variant", c_int, c_void_p, c_int64, c_char_p, c_size_t)
_sig("qjit_tokens_init", None, P(Tokens))
_sig("qjit_tokens_format_init", None, P(TokensFormat))
_sig("qjit_linear_tokens_format", c_int, c_void_p, c_int64, P(TokensFormat))
_sig("qjit_linear_quantize", c_int, c_void_p, c_int64, c_void_p, P(Tokens), c_void_p)
_sig("qjit_linear_forward_tokens", c_int, c_void_p, c_int64, P(Tokens), c_void_p, c_void_p, c_size_t, c_void_p)

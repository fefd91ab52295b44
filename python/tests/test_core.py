"""CPU tests of the bindings: no GPU, no torch."""
import array
import math
import os
import random
import struct

import pytest

import qjit


@pytest.fixture
def ctx(tmp_path):
    with qjit.Context(arch="sm_90a", cache_dir=str(tmp_path / "cache")) as c:
        yield c


def half(values):
    """FP16 values as an array of their bits (format 'H')."""
    return array.array("H", struct.pack(f"{len(values)}e", *values))


def weights(N, K, seed=1):
    r = random.Random(seed)
    return array.array("f", [r.gauss(0.0, 0.05) for _ in range(N * K)])


def test_version_and_library():
    assert qjit.version() == qjit.__version__
    assert qjit.version().count(".") == 2
    assert qjit.library_path


def test_context_paths(ctx, tmp_path):
    assert ctx.arch == "sm_90a"
    assert ctx.cache_dir == str(tmp_path / "cache")
    assert ctx.templates.split(":")[-1].endswith("templates")
    if os.environ.get("QJIT_TEST_INSTALLED") and not os.environ.get("QJIT_LIBRARY"):
        # pip-installed: the bundled library and the templates beside it.
        native = os.path.join(os.path.dirname(qjit.__file__), "_native")
        assert qjit.library_path.startswith(native)
        assert ctx.templates == os.path.join(native, "share", "qjit", "templates")


def test_scheme_names():
    assert qjit.scheme_name("lqq") == "w4a8-lqq"
    assert qjit.scheme_name("int8") == "w8a8"
    assert set(qjit.SCHEMES) == {qjit.scheme_name(s) for s in qjit.SCHEMES}
    with pytest.raises(qjit.QJitError) as e:
        qjit.scheme_name("w3a7")
    assert e.value.status == "QJIT_INVALID_ARGUMENT"


def test_keys(ctx):
    key = ctx.canonicalize("scheme=w4a8-qoq;g=64;tile=16x64x128")
    assert "scheme=w4a8-qoq" in key and "g=64" in key and "arch=sm_90a" in key
    assert ctx.canonicalize(key) == key
    with pytest.raises(qjit.QJitError) as e:
        ctx.canonicalize("scheme=w4a8-lqq;tile=banana")
    assert e.value.status == "QJIT_INVALID_KEY"
    assert "tile" in str(e.value)


def test_generate_compile_and_cache(ctx):
    key = ctx.canonicalize("scheme=w4a8-lqq;g=128;tile=16x64x128;warps=1x4;stages=4;split=2")
    src = ctx.generate(key)
    assert src.startswith("// qjit variant: " + key)
    first = ctx.compile(key)
    assert not first["from_cache"] and first["compile_seconds"] > 0
    again = ctx.compile(key)
    assert again["from_cache"] and again["entry"] == first["entry"]
    entries = ctx.cache_list()
    assert [e["key"] for e in entries] == [key] and entries[0]["valid"]
    assert ctx.cache_clear() >= 1
    assert ctx.cache_list() == []
    defaults = ctx.default_variants()
    assert len(defaults) > 100 and all(k.startswith(("actq=", "arch=")) for k in defaults)


def test_records_export_and_import(ctx, tmp_path):
    path = tmp_path / "records.qjr"
    assert ctx.records_export(path) == 0
    assert ctx.records_import(path) == (0, 0)
    other = tmp_path / "other.txt"
    other.write_text("not records\n")
    with pytest.raises(qjit.QJitError) as e:
        ctx.records_import(other)
    assert e.value.status == "QJIT_CACHE_CORRUPT" and "not an export" in str(e.value)


def test_record_variants_of_an_empty_cache(ctx):
    assert ctx.record_variants("sm_90a") == []
    with pytest.raises(qjit.QJitError) as e:
        ctx.record_variants("banana")
    assert e.value.status == "QJIT_UNSUPPORTED_ARCH"


def test_tune_refuses_bad_input(ctx):
    N, K = 64, 256
    packed = ctx.quantize_weights(weights(N, K), "w4a8-lqq", 128, N, K)
    with pytest.raises(ValueError):
        ctx.tune(packed, ms=[])
    with pytest.raises(ValueError):
        ctx.tune(packed, dtype="float32")
    with pytest.raises(TypeError):
        ctx.tune_shape("w4a8-lqq", 128, 4096, 4096, banana=1)
    with pytest.raises(qjit.QJitError) as e:
        ctx.tune(packed, reps=-1)
    assert e.value.status == "QJIT_INVALID_ARGUMENT" and "reps" in str(e.value)
    with pytest.raises(qjit.QJitError) as e:
        ctx.tune(packed, ms=[8, 70000])
    assert e.value.status == "QJIT_INVALID_ARGUMENT" and "ms[1]" in str(e.value)
    with pytest.raises(qjit.QJitError) as e:
        ctx.tune(b"\0" * 4096)
    assert e.value.status == "QJIT_CORRUPT_WEIGHTS"
    with pytest.raises(qjit.QJitError) as e:
        ctx.tune_shape("w4a8-lqq", 128, 4096, 100)
    assert e.value.status == "QJIT_INVALID_ARGUMENT"


def test_quantize_inspect_and_reference(ctx):
    N, K, M = 64, 256, 3
    W = weights(N, K)
    packed = ctx.quantize_weights(W, "w4a8-lqq", 128, N, K)
    info = ctx.weights_info(packed)
    assert (info["scheme"], info["group"], info["N"], info["K"]) == ("w4a8-lqq", 128, N, K)
    assert info["bits"] == 8 and info["parts"] == 1 and not info["permuted"]
    r = random.Random(2)
    X = half([r.gauss(0.0, 1.0) for _ in range(M * K)])
    Xf = struct.unpack(f"{M * K}e", X.tobytes())
    Y, acc = ctx.reference(packed, X, M)
    assert len(Y) == M * N and len(acc) == M * N
    # Against the exact product of the unquantized weights: 4-bit weights
    # with groups of 128 and INT8 tokens stay within ~10 %.
    num = den = 0.0
    for m in range(M):
        for n in range(N):
            exact = sum(Xf[m * K + k] * W[n * K + k] for k in range(K))
            num += (Y[m * N + n] - exact) ** 2
            den += exact ** 2
    assert math.sqrt(num / den) < 0.15


def test_every_scheme_packs(ctx):
    N, K = 32, 256
    W = weights(N, K, seed=3)
    for scheme, group in (("w4a8-qoq", 0), ("w4a8-qoq", 64), ("w4a8-is", 128), ("w8a8", 0), ("w4a4", 0)):
        info = ctx.weights_info(ctx.quantize_weights(W, scheme, group, N, K))
        assert (info["scheme"], info["group"]) == (scheme, group)
    calib = array.array("f", [random.Random(4).gauss(0, 1) for _ in range(16 * K)])
    packed = ctx.quantize_weights(W, "w4ax-s", 0, N, K, calib=calib, a8_fraction=0.5)
    info = ctx.weights_info(packed)
    assert info["a8_channels"] == 128 and info["bits"] == 4 and info["parts"] == 1


def test_bad_input_is_refused(ctx):
    N, K = 64, 256
    W = weights(N, K)
    with pytest.raises(ValueError, match="N x K"):
        ctx.quantize_weights(W[:-1], "w4a8-lqq", 128, N, K)
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        ctx.quantize_weights(array.array("d", W), "w4a8-lqq", 128, N, K)
    with pytest.raises(qjit.QJitError) as e:
        ctx.quantize_weights(W, "w4a8-lqq", 96, N, K)
    assert e.value.status == "QJIT_INVALID_ARGUMENT"
    packed = bytearray(ctx.quantize_weights(W, "w4a8-lqq", 128, N, K))
    packed[len(packed) // 2] ^= 0x40
    with pytest.raises(qjit.QJitError) as e:
        ctx.weights_info(bytes(packed))
    assert e.value.status == "QJIT_CORRUPT_WEIGHTS"
    with pytest.raises(qjit.QJitError, match="shorter than the smallest header"):
        ctx.weights_info(b"not a qjit buffer")
    good = ctx.quantize_weights(W, "w4a8-lqq", 128, N, K)
    with pytest.raises(ValueError, match="M x K"):
        ctx.reference(good, half([0.0] * (2 * K - 1)), 2)
    with pytest.raises(TypeError, match="float16"):
        ctx.reference(good, array.array("f", [0.0] * (2 * K)), 2)

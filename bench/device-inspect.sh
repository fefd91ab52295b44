#!/usr/bin/env bash
# On the GPU machine: SASS instruction mix of every cached kernel (registers,
# local memory, IMMA / LDSM / LDS.128 / IMAD / LOP3 counts) and per-kernel
# times under ncu for a small-M forward. Expects build-dev/ and a populated
# $QJIT_CACHE_DIR. Output: $OUT/sass.txt, $OUT/ncu.txt.
set -uo pipefail
out=${OUT:-out}
python3 - "$QJIT_CACHE_DIR" >"$out/sass.txt" <<'PY'
import glob, struct, subprocess, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.qjb")):
    b = open(f, "rb").read()
    _, _, kl, ml, _, _ = struct.unpack("<8sIIIIQ", b[:32])
    key = b[64:64 + kl].decode()
    open("/tmp/k.cubin", "wb").write(b[64 + kl + ml:])
    variant = [l for l in key.split("\n") if l.startswith("variant")][0][8:]
    res = subprocess.run(["cuobjdump", "-res-usage", "/tmp/k.cubin"], capture_output=True, text=True).stdout
    sass = subprocess.run(["cuobjdump", "-sass", "/tmp/k.cubin"], capture_output=True, text=True).stdout
    ops = [l.split(";")[0].split("*/")[-1].strip().split(" ")[0] for l in sass.splitlines() if "/*" in l and ";" in l]
    count = lambda p: sum(1 for o in ops if o.startswith(p))
    reg = [l.strip() for l in res.splitlines() if "REG" in l]
    print(variant)
    print("   ", reg[0] if reg else "?")
    print("    IMMA %d LDSM %d LDS.128 %d LDGSTS %d IMAD %d LOP3 %d SHF %d LDL %d STL %d BAR %d" % tuple(
        count(p) for p in ["IMMA", "LDSM", "LDS.128", "LDGSTS", "IMAD", "LOP3", "SHF", "LDL", "STL", "BAR"]))
PY
ncu --clock-control none --metrics gpu__time_duration.sum ./build-dev/qjit demo --m 1,16,128 --seed 3 \
  >"$out/ncu.txt" 2>&1
grep -E "qjit_|gpu__time_duration" "$out/ncu.txt" | paste - - | awk '{print $1, $(NF-1), $NF}' | sort | uniq -c | head -30

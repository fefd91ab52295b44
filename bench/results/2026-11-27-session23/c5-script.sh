#!/usr/bin/env bash
# session 23, call 5: the Python package installed from the repository on the GPU machine
# (pip install ./python), its tests (CPU and GPU), the MLP-block sample
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.cuda.is_available())' | tee -a $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > $out/pip.txt 2>&1; echo "pip rc=$?" | tee -a $out/pip.txt
tail -3 $out/pip.txt
stamp installed
cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests > $out/pytest.txt 2>&1; echo "rc=$?" >> $out/pytest.txt; cd - >/dev/null
stamp pytest
grep -E "passed|failed|host cost|^E " $out/pytest.txt | head -30
PYTHONPATH=/tmp/site timeout $(( 560 - ($(date +%s) - T0) )) python3 samples/mlp_block.py --m 1,16,64,256 --reps 100 > $out/mlp-block.txt 2>&1; echo "rc=$?" >> $out/mlp-block.txt
stamp sample
cat $out/mlp-block.txt

#!/usr/bin/env python3
"""MXNet models through nnvm beside MXNet itself: result check and timing, same run.

Usage (development only; needs MXNet 1.9.1 from PyPI in a venv with numpy<1.24, see
tests/models/mxnet/README.md):
    venv/bin/python scripts/models/mxnet/make_mxnet_models.py ZOO --set zoo
    venv/bin/python bench/mxnet/mxnet_zoo.py ZOO build/tools/nnvmc/nnvmc [--threads 1] [--repeat 15]

For each of resnet18_v1, mobilenetv2_1.0 and squeezenet1.1: nnvmc runs MXNet's stored input and the
largest difference from MXNet's stored output is printed; then MXNet (hybridized SymbolBlock, its
oneDNN, OMP_NUM_THREADS = --threads) and `nnvmc bench` (default target) are timed, median of
--repeat runs each, with the ratio and the machine's ISA.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("zoo"); ap.add_argument("nnvmc")
ap.add_argument("--threads", type=int, default=1); ap.add_argument("--repeat", type=int, default=15)
a = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(a.threads)
os.environ["MXNET_CPU_WORKER_NTHREADS"] = str(a.threads)
import mxnet as mx  # noqa: E402  (after the thread settings)
import numpy as np  # noqa: E402

flags = open("/proc/cpuinfo").read()
isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
print(f"ISA {isa}, {a.threads} thread(s), load average {os.getloadavg()[0]:.2f}")
tmp = tempfile.mkdtemp()
for name in ["resnet18_v1", "mobilenetv2_1.0", "squeezenet1.1"]:
    d = f"{a.zoo}/{name}"
    sym, params = f"{d}/{name}-symbol.json", f"{d}/{name}-0000.params"
    ref = mx.nd.load(f"{d}/reference.params")
    np.save(f"{tmp}/in.npy", ref["data"].asnumpy())
    subprocess.run([a.nnvmc, "run", sym, "--input-shape", "data:1x3x224x224", "-i", f"{tmp}/in.npy",
                    "--save-outputs", tmp], check=True, capture_output=True)
    got, want = np.load(f"{tmp}/output_0.npy"), ref["output0"].asnumpy()
    diff = float(np.abs(got - want).max())
    net = mx.gluon.SymbolBlock.imports(sym, ["data"], params)
    net.hybridize(static_alloc=True, static_shape=True)
    x = ref["data"]
    for _ in range(3):
        net(x).wait_to_read()
    ts = []
    for _ in range(a.repeat):
        t = time.perf_counter(); net(x).wait_to_read(); ts.append((time.perf_counter() - t) * 1e3)
    r = subprocess.run([a.nnvmc, "bench", sym, "--input-shape", "data:1x3x224x224", "--threads", str(a.threads),
                        "--repeat", str(a.repeat)], capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms", r.stdout + r.stderr)
    if not m:
        sys.exit(f"{name}: nnvmc bench failed: {r.stderr}")
    nn, mxm = float(m.group(1)), statistics.median(ts)
    print(f"{name:16s} max|nnvm-mxnet| {diff:.2g}  top-1 same: {got.argmax() == want.argmax()}  "
          f"MXNet {mxm:7.2f} ms  nnvm {nn:7.2f} ms  nnvm/MXNet {nn / mxm:.2f}")

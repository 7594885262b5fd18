#!/usr/bin/env python3
"""nnvm beside ONNX Runtime on exported networks: outputs checked, timings interleaved, medians.

Usage (development only; ONNX Runtime from PyPI in a venv with numpy):
    venv/bin/python bench/models/ort_compare.py build/tools/nnvmc/nnvmc M/squeezenet1_1 M/resnet18 ...
        [--threads 1] [--repeat 15] [--rounds 3]

Each MODEL_DIR holds model.onnx and input_0.npy (scripts/models/export_models.py writes them). Per
model: nnvmc runs the input and the largest difference from ONNX Runtime's output is printed;
then, in --rounds rounds so that drift hits both alike, ONNX Runtime (all graph optimizations,
intra-op threads = --threads, sequential) runs --repeat times and `nnvmc bench` (default
target) --repeat times. Prints the medians over all runs, nnvm/ORT, the ISA and the load average.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time

import numpy as np
import onnxruntime as ort

ap = argparse.ArgumentParser()
ap.add_argument("nnvmc"); ap.add_argument("models", nargs="+")
ap.add_argument("--threads", type=int, default=1); ap.add_argument("--repeat", type=int, default=15)
ap.add_argument("--rounds", type=int, default=3)
a = ap.parse_args()

flags = open("/proc/cpuinfo").read()
isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
print(f"ISA {isa}, {a.threads} thread(s), ONNX Runtime {ort.__version__}, load average {os.getloadavg()[0]:.2f}")
tmp = tempfile.mkdtemp()
for d in a.models:
    name = os.path.basename(os.path.normpath(d))
    x = np.load(f"{d}/input_0.npy")
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(f"{d}/model.onnx", so, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: x}
    want = sess.run(None, feed)[0]
    subprocess.run([a.nnvmc, "run", d, "-i", f"{d}/input_0.npy", "--save-outputs", tmp], check=True, capture_output=True)
    diff = float(np.abs(np.load(f"{tmp}/output_0.npy") - want).max())
    ort_ms, nnvm_ms = [], []
    for _ in range(a.rounds):
        for _ in range(3):
            sess.run(None, feed)
        for _ in range(a.repeat):
            t = time.perf_counter(); sess.run(None, feed); ort_ms.append((time.perf_counter() - t) * 1e3)
        r = subprocess.run([a.nnvmc, "bench", d, "--threads", str(a.threads), "--repeat", str(a.repeat)],
                           capture_output=True, text=True)
        m = re.search(r"median ([0-9.]+) ms", r.stdout + r.stderr)
        if not m:
            sys.exit(f"{name}: nnvmc bench failed: {r.stderr}")
        nnvm_ms.append(float(m.group(1)))
    o, n = statistics.median(ort_ms), statistics.median(nnvm_ms)
    print(f"{name:16s} max|nnvm-ort| {diff:.2g}  ORT {o:7.2f} ms  nnvm {n:7.2f} ms (rounds {', '.join(f'{v:.2f}' for v in nnvm_ms)})"
          f"  nnvm/ORT {n / o:.2f}")

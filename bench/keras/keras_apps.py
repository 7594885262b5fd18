#!/usr/bin/env python3
"""Keras applications through nnvm beside Keras itself: result check and timing, same run.

Usage (development only; Keras 3 with the JAX backend from PyPI, see tests/models/keras/README.md):
    KERAS_BACKEND=jax venv/bin/python bench/keras/keras_apps.py OUT_DIR build/tools/nnvmc/nnvmc \
        [--threads 1] [--repeat 15] [--models MobileNetV2,ResNet50,...]

For each model of keras.applications (random weights, fixed seed, batch-norm statistics
randomized, input 1x224x224x3): the .keras file is saved to OUT_DIR, nnvmc runs Keras' input and
the largest difference from Keras' output is printed with whether the top-1 agrees; then Keras
(`model.predict_on_batch`, JAX's XLA on the CPU, jit-compiled, --threads CPU threads) and
`nnvmc bench` (default target) are timed, median of --repeat runs each, with the ratio and the
machine's ISA.
"""
import argparse, os, re, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("out"); ap.add_argument("nnvmc")
ap.add_argument("--threads", type=int, default=1); ap.add_argument("--repeat", type=int, default=15)
ap.add_argument("--models", default="MobileNetV2,ResNet50,DenseNet121,EfficientNetB0")
a = ap.parse_args()
os.environ.setdefault("KERAS_BACKEND", "jax")
if a.threads == 1:  # XLA's CPU client: one thread for the whole computation
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
import keras  # noqa: E402  (after the thread settings)
import numpy as np  # noqa: E402

flags = open("/proc/cpuinfo").read()
isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
print(f"ISA {isa}, {a.threads} thread(s), Keras {keras.__version__} ({keras.backend.backend()}), "
      f"load average {os.getloadavg()[0]:.2f}")
os.makedirs(a.out, exist_ok=True)
for name in a.models.split(","):
    keras.utils.set_random_seed(7)
    rng = np.random.default_rng(7)
    model = getattr(keras.applications, name)(weights=None, input_shape=(224, 224, 3))
    for layer in model.layers:  # random batch-norm statistics, so that folding them shows
        if isinstance(layer, keras.layers.BatchNormalization):
            w = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, v.shape).astype("float32") if k in (0, len(w) - 1)
                               else rng.normal(0, 0.1, v.shape).astype("float32") for k, v in enumerate(w)])
    path = f"{a.out}/{name}.keras"
    model.save(path)
    x = rng.uniform(0, 255, (1, 224, 224, 3)).astype("float32")
    np.save(f"{a.out}/{name}_in.npy", x)
    want = np.asarray(model.predict_on_batch(x))
    subprocess.run([a.nnvmc, "run", path, "-i", f"{a.out}/{name}_in.npy", "--save-outputs", a.out],
                   check=True, capture_output=True)
    got = np.load(f"{a.out}/output_0.npy")
    diff = float(np.abs(got - want).max())
    ts = []
    for _ in range(3):
        model.predict_on_batch(x)
    for _ in range(a.repeat):
        t = time.perf_counter(); np.asarray(model.predict_on_batch(x)); ts.append((time.perf_counter() - t) * 1e3)
    r = subprocess.run([a.nnvmc, "bench", path, "--threads", str(a.threads), "--repeat", str(a.repeat)],
                       capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms", r.stdout + r.stderr)
    if not m:
        sys.exit(f"{name}: nnvmc bench failed: {r.stderr}")
    nn, km = float(m.group(1)), statistics.median(ts)
    print(f"{name:16s} max|nnvm-keras| {diff:.2g} (max|out| {float(np.abs(want).max()):.2g})  "
          f"top-1 same: {got.argmax() == want.argmax()}  Keras {km:7.2f} ms  nnvm {nn:7.2f} ms  nnvm/Keras {nn / km:.2f}")

#!/usr/bin/env python3
"""Times PyTorch (eager, inference) on the model export_resnet18.py exports, on the same input.

Usage: time_pytorch.py MODEL_DIR THREADS REPEAT WARMUP
Prints one line, "... median M ms, min A ms, max B ms over R runs ...", in nnvmc bench's words
so the two can be read side by side.
"""
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_resnet18 import build_model  # noqa: E402  (same seed, so the same weights)


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: time_pytorch.py MODEL_DIR THREADS REPEAT WARMUP")
    model_dir, threads, repeat, warmup = sys.argv[1], *map(int, sys.argv[2:])
    torch.set_num_threads(threads)
    model = build_model()
    x = torch.from_numpy(np.load(os.path.join(model_dir, "input_0.npy")))
    times = []
    with torch.inference_mode():
        for i in range(warmup + repeat):
            start = time.perf_counter()
            model(x)
            if i >= warmup:
                times.append((time.perf_counter() - start) * 1e3)
    print(f"PyTorch {torch.__version__} eager: median {statistics.median(times):.3f} ms, "
          f"min {min(times):.3f} ms, max {max(times):.3f} ms over {repeat} runs (threads {threads})")


if __name__ == "__main__":
    main()

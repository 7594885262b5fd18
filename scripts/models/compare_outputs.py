#!/usr/bin/env python3
"""Compares an output nnvm saved with the framework's: compare_outputs.py WANT.npy GOT.npy

Prints the max absolute error, whether the top-1 class agrees, and PASS or FAIL; exits 1 on
FAIL. The tolerance is relative to the output's scale because float32 sums in a different
order differ by rounding that grows with the values, not by a fixed amount.
"""
import sys

import numpy as np


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_outputs.py WANT.npy GOT.npy")
    want = np.load(sys.argv[1])
    got = np.load(sys.argv[2])
    if want.shape != got.shape or want.dtype != got.dtype:
        print(f"FAIL: nnvm gave {got.dtype}{list(got.shape)}, PyTorch {want.dtype}{list(want.shape)}")
        sys.exit(1)
    err = float(np.abs(want.astype(np.float64) - got.astype(np.float64)).max())
    tol = 1e-4 * max(1.0, float(np.abs(want).max()))
    top1 = "same" if want.reshape(want.shape[0], -1).argmax(1).tolist() == \
        got.reshape(got.shape[0], -1).argmax(1).tolist() else "DIFFERENT"
    verdict = "PASS" if err <= tol else "FAIL"
    print(f"nnvm vs PyTorch: max abs error {err:.3g} (tolerance {tol:.3g}), top-1 class {top1}: {verdict}")
    sys.exit(0 if verdict == "PASS" else 1)


if __name__ == "__main__":
    main()

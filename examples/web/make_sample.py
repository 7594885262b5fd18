#!/usr/bin/env python3
"""Writes the web demo's sample and its PyTorch reference beside an exported image network.

    /usr/bin/python3 examples/web/make_sample.py MODELS_DIR/squeezenet1_1

The network is rebuilt from scripts/models/export_models.py with the same seed (and checked
against the stored output_0.npy, so the weights are the ones in model.onnx). Writes:
  sample.png        a 224x224 RGB test picture, drawn here (no download), stored losslessly
  labels.json       the 1000 ImageNet class names, in torchvision's order
  sample_top5.txt   PyTorch's top-5 on that picture: "class probability" per line, after the
                    same preprocessing the page does ((pixel/255 - mean) / std per channel)
The weights are random, so the classes say nothing about the picture; they check that the
page, model.mjs and model.wasm compute what PyTorch computes.
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image
from torchvision.models._meta import _IMAGENET_CATEGORIES

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "models"))
import export_models  # noqa: E402

MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def picture(size=224):
    """Concentric rings over a diagonal gradient: smooth, colourful, every channel different."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float64) / (size - 1)
    r = np.hypot(x - 0.45, y - 0.55)
    red = 0.5 + 0.5 * np.sin(18 * r)
    green = x * (1 - y)
    blue = 0.5 + 0.5 * np.cos(7 * (x + y))
    return np.clip(np.round(np.stack([red, green, blue], -1) * 255), 0, 255).astype(np.uint8)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    name = os.path.basename(os.path.normpath(out))
    make_model, _, _ = export_models.NETWORKS[name]
    torch.manual_seed(0)
    model = export_models.randomize_batch_norms(make_model()).eval()
    stored_in, stored_out = (np.load(os.path.join(out, f)) for f in ("input_0.npy", "output_0.npy"))
    with torch.no_grad():
        again = model(torch.from_numpy(stored_in)).numpy()
    if not np.allclose(again, stored_out, rtol=1e-4, atol=1e-5):
        sys.exit(f"{name}: rebuilding the network did not reproduce output_0.npy; re-export it")

    pixels = picture()
    Image.fromarray(pixels, "RGB").save(os.path.join(out, "sample.png"))
    # float64 arithmetic rounded once to float32: what the page's Float32Array stores.
    x = ((pixels / 255.0 - MEAN) / STD).astype(np.float32).transpose(2, 0, 1)[None].copy()
    with torch.no_grad():
        probs = torch.softmax(model(torch.from_numpy(x)), dim=1)[0].numpy().astype(np.float64)
    order = np.argsort(-probs)
    # A near-tie at rank 5 would make the check flaky: say so instead of writing it.
    if probs[order[4]] - probs[order[5]] < 1e-5 * probs[order[0]]:
        sys.exit(f"{name}: classes {order[4]} and {order[5]} tie on the sample; change picture()")
    with open(os.path.join(out, "sample_top5.txt"), "w") as f:
        for k in order[:5]:
            f.write(f"{k} {probs[k]:.9g}\n")
    with open(os.path.join(out, "labels.json"), "w") as f:
        json.dump(list(_IMAGENET_CATEGORIES), f)
    print(f"wrote {out}/sample.png, sample_top5.txt ({' '.join(map(str, order[:5]))}), labels.json")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Exports torchvision's resnet18 to ONNX with one input and PyTorch's output for it.

Usage: export_resnet18.py OUT_DIR
Writes OUT_DIR/resnet18.onnx (opset 13, input "input" of shape 1x3x224x224 float32),
OUT_DIR/input_0.npy and OUT_DIR/output_0.npy, so nnvm's result can be checked against the
framework's. Weights are randomly initialised with a fixed seed (pretrained weights need a
download); batch-norm statistics are randomised too, otherwise every BatchNormalization
would be the identity and a wrong batch-norm would go unnoticed.
Runs with Debian 12's system python: apt-get install python3-torch python3-torchvision.
"""
import os
import sys

import numpy as np
import torch
import torchvision


def build_model():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    return model.eval()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_resnet18.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    model = build_model()
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((1, 3, 224, 224), dtype=np.float32))
    with torch.no_grad():
        y = model(x)
    onnx_path = os.path.join(out_dir, "resnet18.onnx")
    # Write next to the target and rename, so an interrupted export never leaves a model that
    # a later run would take as complete.
    tmp_path = onnx_path + ".tmp"
    torch.onnx.export(model, x, tmp_path, opset_version=13, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)
    np.save(os.path.join(out_dir, "input_0.npy"), x.numpy())
    np.save(os.path.join(out_dir, "output_0.npy"), y.numpy())
    os.replace(tmp_path, onnx_path)
    print(f"exported {onnx_path}: input {tuple(x.shape)}, output {tuple(y.shape)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Exports the project's real test networks to ONNX, each with one input and PyTorch's output.

Usage: export_models.py OUT_DIR [NAME ...]     (no NAME: every network below)

For each NAME writes OUT_DIR/NAME/model.onnx, OUT_DIR/NAME/input_0.npy and
OUT_DIR/NAME/output_0.npy (PyTorch's result for that input), so nnvm's result can be checked
against the framework's; the same two files also in OUT_DIR/NAME/test_data_set_0, which makes
the folder a case `nnvmc check` runs. Weights are random with a fixed seed (pretrained weights need a
download); batch-norm statistics are randomised too, so a wrong batch-norm cannot pass as the
identity. The .onnx is written last (through a rename), so its presence means the files
beside it are complete. Runs with Debian 12's system python:
apt-get install python3-torch python3-torchvision.
"""
import os
import sys

import numpy as np
import torch
import torchvision


def randomize_batch_norms(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d)):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    return model


class _LocalResponseNormFn(torch.autograd.Function):
    """PyTorch's local_response_norm, exported as ONNX's own LRN node (as the model zoo's ZFNet
    has it); torch's exporter would otherwise spell it as pads, pools and an If on the rank."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        return torch.nn.functional.local_response_norm(x, size, alpha, beta, k)

    @staticmethod
    def symbolic(g, x, size, alpha, beta, k):
        return g.op("LRN", x, size_i=size, alpha_f=alpha, beta_f=beta, bias_f=k)


class LocalResponseNorm(torch.nn.Module):
    def __init__(self, size, alpha, beta, k):
        super().__init__()
        self.args = (size, alpha, beta, k)

    def forward(self, x):
        return _LocalResponseNormFn.apply(x, *self.args)


class ZFNet512(torch.nn.Module):
    """The ONNX model zoo's ZFNet-512 layout: wide 3x3 convs (512, 1024, 512 channels), LRN and
    4096-wide dense layers; large weights and a 1024-channel conv with its padded input."""

    def __init__(self):
        super().__init__()
        c = torch.nn.Conv2d
        self.features = torch.nn.Sequential(
            c(3, 96, 7, stride=2, padding=1), torch.nn.ReLU(), LocalResponseNorm(5, 1e-4, 0.75, 1.0),
            torch.nn.MaxPool2d(3, 2, 1),
            c(96, 256, 5, stride=2), torch.nn.ReLU(), LocalResponseNorm(5, 1e-4, 0.75, 1.0),
            torch.nn.MaxPool2d(3, 2, 1),
            c(256, 512, 3, padding=1), torch.nn.ReLU(),
            c(512, 1024, 3, padding=1), torch.nn.ReLU(),
            c(1024, 512, 3, padding=1), torch.nn.ReLU(),
            torch.nn.MaxPool2d(3, 2))
        self.classifier = torch.nn.Sequential(
            torch.nn.Flatten(), torch.nn.Linear(512 * 6 * 6, 4096), torch.nn.ReLU(),
            torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1000))

    def forward(self, x):
        return self.classifier(self.features(x))


class Encoder(torch.nn.Module):
    """A BERT-style encoder: token embedding + learned positions, then post-norm
    TransformerEncoderLayers (GELU), then a pooled dense head."""

    def __init__(self, vocab=1000, dim=256, heads=4, layers=2, seq=128):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, dim) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, activation="gelu",
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(dim, 2)

    def forward(self, ids):
        h = self.encoder(self.embed(ids) + self.pos[:, : ids.shape[1]])
        return self.head(h[:, 0])


def conv_bn_relu(cin, cout, kernel, stride=1, padding=0, groups=1):
    return [torch.nn.Conv2d(cin, cout, kernel, stride, padding, groups=groups, bias=False),
            torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]


class DsCnn(torch.nn.Module):
    """MLPerf Tiny keyword spotting: DS-CNN on 49x10 MFCC features, 12 classes."""

    def __init__(self):
        super().__init__()
        layers = conv_bn_relu(1, 64, (10, 4), 2, (5, 1))
        for _ in range(4):
            layers += conv_bn_relu(64, 64, 3, 1, 1, groups=64) + conv_bn_relu(64, 64, 1)
        self.features = torch.nn.Sequential(*layers, torch.nn.AvgPool2d((25, 5)), torch.nn.Flatten())
        self.fc = torch.nn.Linear(64, 12)

    def forward(self, x):
        return torch.softmax(self.fc(self.features(x)), dim=1)


class MobileNetV1Vww(torch.nn.Module):
    """MLPerf Tiny visual wake words: MobileNetV1 with width 0.25 on 96x96 RGB, 2 classes."""

    def __init__(self):
        super().__init__()
        blocks = [(8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2)] + \
                 [(128, 128, 1)] * 5 + [(128, 256, 2), (256, 256, 1)]
        layers = conv_bn_relu(3, 8, 3, 2, 1)
        for cin, cout, stride in blocks:
            layers += conv_bn_relu(cin, cin, 3, stride, 1, groups=cin) + conv_bn_relu(cin, cout, 1)
        self.features = torch.nn.Sequential(*layers, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.fc = torch.nn.Linear(256, 2)

    def forward(self, x):
        return torch.softmax(self.fc(self.features(x)), dim=1)


class ResidualBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = torch.nn.Sequential(*conv_bn_relu(cin, cout, 3, stride, 1)[:2], torch.nn.ReLU(),
                                        torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(cout))
        self.shortcut = torch.nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else torch.nn.Identity()

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet8(torch.nn.Module):
    """MLPerf Tiny image classification: ResNet-8 on 32x32 CIFAR-10 images, 10 classes."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            *conv_bn_relu(3, 16, 3, 1, 1), ResidualBlock(16, 16, 1), ResidualBlock(16, 32, 2),
            ResidualBlock(32, 64, 2), torch.nn.AvgPool2d(8), torch.nn.Flatten())
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.fc(self.features(x)), dim=1)


class FcAutoencoder(torch.nn.Module):
    """MLPerf Tiny anomaly detection: the fully connected autoencoder on 640 log-mel features
    (128-wide layers, an 8-wide bottleneck)."""

    def __init__(self):
        super().__init__()
        widths = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
        layers = []
        for a, b in zip(widths, widths[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.BatchNorm1d(b), torch.nn.ReLU()]
        self.net = torch.nn.Sequential(*layers, torch.nn.Linear(128, 640))

    def forward(self, x):
        return self.net(x)


def features(*shape):
    return lambda: torch.from_numpy(np.random.default_rng(1).standard_normal(shape, dtype=np.float32))


def image(batch=1, size=224):
    return torch.from_numpy(np.random.default_rng(1).standard_normal((batch, 3, size, size), dtype=np.float32))


# name: (model factory, input factory, opset). torchvision's models take NCHW float32 images.
NETWORKS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), image, 13),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), image, 13),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), image, 13),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), image, 13),
    "vgg19": (lambda: torchvision.models.vgg19(weights=None), image, 13),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), image, 13),
    "zfnet512": (ZFNet512, image, 13),
    # The shapes of the MLPerf Tiny benchmark, for microcontrollers (nnvmc --target c-standalone).
    "ds_cnn": (DsCnn, features(1, 1, 49, 10), 13),
    "mobilenet_v1_025_vww": (MobileNetV1Vww, features(1, 3, 96, 96), 13),
    "resnet8": (ResNet8, features(1, 3, 32, 32), 13),
    "fc_autoencoder": (FcAutoencoder, features(1, 640), 13),
    "encoder": (Encoder, lambda: torch.from_numpy(np.random.default_rng(1).integers(0, 1000, (1, 128))), 13),
}


def export(name, out_root):
    make_model, make_input, opset = NETWORKS[name]
    out_dir = os.path.join(out_root, name)
    onnx_path = os.path.join(out_dir, "model.onnx")
    if os.path.exists(onnx_path):
        print(f"{onnx_path}: present")
        return
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = randomize_batch_norms(make_model()).eval()
    x = make_input()
    with torch.no_grad():
        y = model(x)
    tmp_path = onnx_path + ".tmp"
    torch.onnx.export(model, x, tmp_path, opset_version=opset, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    # Beside the model, and again as an ONNX-backend-style case (`nnvmc check OUT_DIR/NAME`).
    data_set = os.path.join(out_dir, "test_data_set_0")
    os.makedirs(data_set, exist_ok=True)
    for folder in (out_dir, data_set):
        np.save(os.path.join(folder, "input_0.npy"), x.numpy())
        np.save(os.path.join(folder, "output_0.npy"), y.numpy())
    os.replace(tmp_path, onnx_path)
    print(f"exported {onnx_path}: input {tuple(x.shape)}, output {tuple(y.shape)}")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: export_models.py OUT_DIR [NAME ...]; names: " + " ".join(NETWORKS))
    names = sys.argv[2:] or list(NETWORKS)
    unknown = [n for n in names if n not in NETWORKS]
    if unknown:
        sys.exit(f"unknown network(s) {unknown}; known: {' '.join(NETWORKS)}")
    for name in names:
        export(name, sys.argv[1])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Makes the Core ML test models in tests/models/coreml and the outputs nnvm must reproduce.

Core ML itself runs only on Apple systems, so the reference outputs come from the framework a
model was converted from: PyTorch (1.13, Debian's python3-torch) for the models coremltools 9
converts, and a plain numpy implementation of the layer's documented formula for the models
written layer by layer with coremltools' NeuralNetworkBuilder (the activation kinds, padding,
upsampling and unary functions no PyTorch conversion emits). Neither involves nnvm.

Run from the repository root with a Python that has torch 1.13 and coremltools 9:
    /usr/bin/python3 -m venv --system-site-packages /work/venv-coreml
    /work/venv-coreml/bin/pip install coremltools==9.0
    /work/venv-coreml/bin/python scripts/models/coreml/make_coreml_models.py
Fixed seeds, fixed package identifiers and no conversion date: a rerun writes the same bytes.

Each model NAME has NAME.mlmodel or NAME.mlpackage beside NAME/input.npy and NAME/output<k>.npy
(float32, C order), output k being the model's k-th output as listed in its description.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
import coremltools as ct
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "models", "coreml")


def clean_spec(spec):
    """Removes what differs between runs (the conversion date) from a model's metadata."""
    ud = spec.description.metadata.userDefined
    if "com.github.apple.coremltools.conversion_date" in ud:
        del ud["com.github.apple.coremltools.conversion_date"]


def write_spec(spec, path):
    clean_spec(spec)
    with open(path, "wb") as f:
        f.write(spec.SerializeToString(deterministic=True))


def save_reference(name, x, outputs):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "input.npy"), np.ascontiguousarray(x, dtype=np.float32))
    for k, y in enumerate(outputs):
        np.save(os.path.join(d, "output%d.npy" % k), np.ascontiguousarray(y, dtype=np.float32))


def save_mlpackage(mlmodel, name):
    """Saves an ML Program package with fixed item identifiers (coremltools draws random UUIDs)."""
    path = os.path.join(OUT, name + ".mlpackage")
    shutil.rmtree(path, ignore_errors=True)
    mlmodel.save(path)
    spec_path = os.path.join(path, "Data", "com.apple.CoreML", "model.mlmodel")
    spec = ct.utils.load_spec(spec_path)
    write_spec(spec, spec_path)
    manifest = {
        "fileFormatVersion": "1.0.0",
        "itemInfoEntries": {
            "00000000-0000-0000-0000-000000000001": {
                "author": "com.apple.CoreML", "description": "CoreML Model Specification",
                "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"},
            "00000000-0000-0000-0000-000000000002": {
                "author": "com.apple.CoreML", "description": "CoreML Model Weights",
                "name": "weights", "path": "com.apple.CoreML/weights"},
        },
        "rootModelIdentifier": "00000000-0000-0000-0000-000000000001",
    }
    with open(os.path.join(path, "Manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


# ---- models converted from PyTorch ------------------------------------------------------------

class Cnn(torch.nn.Module):
    """conv, relu, max pool, residual add, batch norm (after the add, so it is not folded into a
    conv), concat, average pool, flatten, linear, softmax."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c3 = torch.nn.Conv2d(8, 4, 1)
        self.fc = torch.nn.Linear(12 * 4 * 4, 10)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        z = self.bn(self.c2(y) + y)
        z = torch.cat([z, self.c3(z)], 1)
        z = torch.nn.functional.avg_pool2d(z, 2)
        return torch.softmax(self.fc(torch.flatten(z, 1)), 1)


class MilNet(Cnn):
    """The CNN, then reshape, transpose, matmul and reduce_mean on the way to two outputs: the
    probabilities and the logits."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16 + 12, 10)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        z = self.bn(self.c2(y) + y)
        z = torch.cat([z, self.c3(z)], 1)
        z = torch.nn.functional.avg_pool2d(z, 2)               # (1, 12, 4, 4)
        u = z.reshape(1, 12, 16)
        t = z.permute(0, 2, 3, 1).reshape(1, 16, 12)            # a transpose no matmul absorbs
        r = torch.matmul(t, u).mean(dim=2) / 12                 # (1, 16)
        g = z.mean(dim=(2, 3))                                  # (1, 12)
        logits = self.fc(torch.cat([r, g], 1))
        return torch.softmax(logits, 1), logits


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 16)
        self.l2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.l2(torch.relu(self.l1(x))), 1)


def randomize_batchnorm(m, rng):
    """Random running statistics and affine parameters, so batch norm is not the identity."""
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            c = mod.num_features
            mod.running_mean.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, c).astype(np.float32)))
            mod.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 2.0, c).astype(np.float32)))
            mod.weight.data.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, c).astype(np.float32)))
            mod.bias.data.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, c).astype(np.float32)))


def traced(module, shape, seed):
    torch.manual_seed(seed)
    m = module().eval()
    randomize_batchnorm(m, np.random.RandomState(seed))
    x = torch.from_numpy(np.random.RandomState(seed + 1).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        y = m(x)
    outs = [t.numpy() for t in (y if isinstance(y, tuple) else (y,))]
    return torch.jit.trace(m, x), x.numpy(), outs


def make_nn_cnn():
    tr, x, outs = traced(Cnn, (1, 3, 16, 16), 1)
    m = ct.convert(tr, inputs=[ct.TensorType(name="x", shape=x.shape)], convert_to="neuralnetwork")
    write_spec(m.get_spec(), os.path.join(OUT, "nn_cnn.mlmodel"))
    save_reference("nn_cnn", x, outs)


def make_nn_classifier():
    tr, x, outs = traced(Mlp, (1, 8), 2)
    m = ct.convert(tr, inputs=[ct.TensorType(name="x", shape=x.shape)], convert_to="neuralnetwork",
                   classifier_config=ct.ClassifierConfig(["cat", "dog", "bird", "fish"]))
    write_spec(m.get_spec(), os.path.join(OUT, "nn_classifier.mlmodel"))
    # The probabilities, in class order; the label output ("classLabel") is not read by nnvm.
    save_reference("nn_classifier", x, outs)


def make_mil(precision, name, seed):
    tr, x, outs = traced(MilNet, (1, 3, 16, 16), seed)
    m = ct.convert(tr, inputs=[ct.TensorType(name="x", shape=x.shape)], convert_to="mlprogram",
                   compute_precision=precision, minimum_deployment_target=ct.target.iOS15)
    save_mlpackage(m, name)
    save_reference(name, x, outs)


# ---- NeuralNetwork written layer by layer (rank-5 mapping, as Core ML 1 models) -----------------

def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def softplus(v):
    return np.log1p(np.exp(v))


def bilinear(x, sh, sw, align_corners):
    """Core ML's bilinear upsampling of NCHW x by integer factors: grid points i*(in-1)/(out-1)
    (ALIGN_CORNERS_TRUE and DEFAULT) or (i+0.5)*in/out-0.5 clamped into [0, in-1] (FALSE)."""
    n, c, h, w = x.shape
    def grid(size, s):
        out = size * s
        if align_corners:
            return np.arange(out) * ((size - 1) / (out - 1))
        return np.clip((np.arange(out) + 0.5) * (size / out) - 0.5, 0, size - 1)
    gy, gx = grid(h, sh), grid(w, sw)
    y0 = np.floor(gy).astype(int); y1 = np.minimum(y0 + 1, h - 1); fy = gy - y0
    x0 = np.floor(gx).astype(int); x1 = np.minimum(x0 + 1, w - 1); fx = gx - x0
    top = x[:, :, y0, :] * (1 - fy)[None, None, :, None] + x[:, :, y1, :] * fy[None, None, :, None]
    return top[:, :, :, x0] * (1 - fx) + top[:, :, :, x1] * fx


def conv2d(x, w, b, pad):
    """Cross-correlation of NCHW x with w (O, C, kh, kw), stride 1, symmetric zero padding."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    o, c, kh, kw = w.shape
    n, _, h, wd = x.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + out.shape[2], j:j + out.shape[3]], w[:, :, i, j])
    return out + b[None, :, None, None]


def make_nn_layers():
    rng = np.random.RandomState(3)
    C, H, W = 3, 6, 6
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    xd = x.astype(np.float64)
    layers = []  # (output name, builder call, reference)

    prelu_a = rng.uniform(0.1, 0.4, C).astype(np.float32)
    ps_a = rng.uniform(0.5, 1.5, C).astype(np.float32)
    ps_b = rng.uniform(0.5, 1.5, C).astype(np.float32)
    cv = lambda a: a[None, :, None, None]
    acts = [
        ("linear", "LINEAR", [0.5, -0.25], 0.5 * xd - 0.25),
        ("relu", "RELU", None, np.maximum(xd, 0)),
        ("leaky_relu", "LEAKYRELU", [0.1], np.where(xd > 0, xd, 0.1 * xd)),
        ("thresholded_relu", "THRESHOLDEDRELU", 0.3, np.where(xd > 0.3, xd, 0)),
        ("prelu", "PRELU", prelu_a, np.where(xd > 0, xd, cv(prelu_a) * xd)),
        ("tanh", "TANH", None, np.tanh(xd)),
        ("scaled_tanh", "SCALED_TANH", [1.5, 0.7], 1.5 * np.tanh(0.7 * xd)),
        ("sigmoid", "SIGMOID", None, sigmoid(xd)),
        ("sigmoid_hard", "SIGMOID_HARD", [0.3, 0.4], np.clip(0.3 * xd + 0.4, 0, 1)),
        ("elu", "ELU", 0.8, np.where(xd > 0, xd, 0.8 * (np.exp(xd) - 1))),
        ("softsign", "SOFTSIGN", None, xd / (1 + np.abs(xd))),
        ("softplus", "SOFTPLUS", None, softplus(xd)),
        ("parametric_softplus", "PARAMETRICSOFTPLUS", [ps_a, ps_b], cv(ps_a) * softplus(cv(ps_b) * xd)),
    ]
    outputs = [a[0] for a in acts]
    pads = [("pad_constant", "constant", np.pad(xd, ((0, 0), (0, 0), (2, 0), (1, 2)), constant_values=0.5)),
            ("pad_reflection", "reflection", np.pad(xd, ((0, 0), (0, 0), (2, 0), (1, 2)), mode="reflect")),
            ("pad_replication", "replication", np.pad(xd, ((0, 0), (0, 0), (2, 0), (1, 2)), mode="edge"))]
    outputs += [p[0] for p in pads]
    ups = [("upsample_nn", "NN", "DEFAULT", np.repeat(np.repeat(xd, 2, axis=2), 3, axis=3)),
           ("upsample_bilinear", "BILINEAR", "DEFAULT", bilinear(xd, 2, 3, True)),
           ("upsample_align_false", "BILINEAR", "ALIGN_CORNERS_FALSE", bilinear(xd, 2, 3, False))]
    outputs += [u[0] for u in ups]
    # Unary functions of scale*x + shift; positive where the function needs it.
    s = 0.5 * xd + 2.0
    unaries = [("sqrt", {}, np.sqrt(s)), ("rsqrt", {"epsilon": 1e-4}, 1 / np.sqrt(s + 1e-4)),
               ("inverse", {"epsilon": 1e-4}, 1 / (s + 1e-4)), ("power", {"alpha": 1.5}, s ** 1.5),
               ("exp", {}, np.exp(s)), ("log", {"epsilon": 1e-3}, np.log(s + 1e-3)), ("abs", {}, np.abs(s)),
               ("threshold", {"alpha": 2.2}, np.maximum(s, 2.2))]
    outputs += ["unary_" + u[0] for u in unaries]
    # A small network: conv, batchnorm, max pool, add/multiply/concat, global average pool,
    # flatten, inner product, softmax, reshape.
    cw = rng.uniform(-0.5, 0.5, (4, C, 3, 3)).astype(np.float32)
    cb = rng.uniform(-0.1, 0.1, 4).astype(np.float32)
    g, be = rng.uniform(0.5, 1.5, 4).astype(np.float32), rng.uniform(-0.5, 0.5, 4).astype(np.float32)
    mu, var = rng.uniform(-0.5, 0.5, 4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)
    fw = rng.uniform(-0.5, 0.5, (5, 4 + C)).astype(np.float32)
    fb = rng.uniform(-0.1, 0.1, 5).astype(np.float32)
    conv = conv2d(xd, cw.astype(np.float64), cb, 1)
    bn = cv(g) * (conv - cv(mu)) / np.sqrt(cv(var) + 1e-5) + cv(be)
    mp = bn.reshape(1, 4, 3, 2, 3, 2).max(axis=(3, 5))                  # 2x2 max pool
    added = mp + mp * mp + mp                                          # add of three, multiply
    scaled = 0.5 * mp                                                  # multiply with alpha alone
    cat = np.concatenate([added, xd[:, :, ::2, ::2]], axis=1)          # (1, 7, 3, 3)
    gap = cat.mean(axis=(2, 3))                                        # global average pool
    fc = gap @ fw.T.astype(np.float64) + fb
    sm = np.exp(fc - fc.max()) / np.exp(fc - fc.max()).sum()
    flat = cat.reshape(1, -1)
    resh = cat.reshape(1, 7, 9, 1)
    outputs += ["scaled", "probabilities", "flat", "reshaped"]

    b = NeuralNetworkBuilder([("data", datatypes.Array(C, H, W))], [(o, None) for o in outputs])
    for name, kind, params, _ in acts:
        b.add_activation(name, kind, "data", name, params=params)
    for name, mode, _ in pads:
        b.add_padding(name, left=1, right=2, top=2, bottom=0, value=0.5, input_name="data", output_name=name,
                      padding_type=mode)
    for name, mode, lin, _ in ups:
        b.add_upsample(name, 2, 3, "data", name, mode=mode, linear_upsample_mode=lin)
    for name, kw, _ in unaries:
        b.add_unary("unary_" + name, "data", "unary_" + name, name, scale=0.5, shift=2.0, **kw)
    b.add_convolution("conv", C, 4, 3, 3, 1, 1, "same", 1, cw.transpose(2, 3, 1, 0), cb, True,
                      input_name="data", output_name="conv")
    b.add_batchnorm("bn", 4, g, be, mu, var, "conv", "bn", epsilon=1e-5)
    b.add_pooling("pool", 2, 2, 2, 2, "MAX", "VALID", "bn", "pool")
    b.add_elementwise("square", ["pool", "pool"], "square", "MULTIPLY")
    b.add_elementwise("added", ["pool", "square", "pool"], "added", "ADD")
    b.add_elementwise("scaled", ["pool"], "scaled", "MULTIPLY", alpha=0.5)
    b.add_pooling("sub", 1, 1, 2, 2, "MAX", "VALID", "data", "sub")
    b.add_elementwise("cat", ["added", "sub"], "cat", "CONCAT")
    b.add_pooling("gap", 1, 1, 1, 1, "AVERAGE", "VALID", "cat", "gap", is_global=True)
    b.add_inner_product("fc", fw, fb, 4 + C, 5, True, "gap", "fc")
    b.add_softmax("probabilities", "fc", "probabilities")
    b.add_flatten("flat", 0, "cat", "flat")
    b.add_reshape("reshaped", "cat", "reshaped", (7, 9, 1), 0)
    spec = b.spec
    # Declare the outputs' shapes as Core ML 1 models do (C, H, W or C): nnvm gives each output
    # the batch axis, then the declared shape.
    refs = [a[3] for a in acts] + [p[2] for p in pads] + [u[3] for u in ups] + [u[2] for u in unaries]
    refs += [scaled, sm, flat, resh]
    for o, r in zip(spec.description.output, refs):
        o.type.multiArrayType.dataType = ct.proto.FeatureTypes_pb2.ArrayFeatureType.FLOAT32
        o.type.multiArrayType.shape.extend(list(r.shape[1:]))
    write_spec(spec, os.path.join(OUT, "nn_layers.mlmodel"))
    save_reference("nn_layers", x, refs)


# ---- NeuralNetwork of the exact array mapping (specification 4 on), written layer by layer ----

def make_nn_exact_layers():
    """The element-wise, shape and normalization layers coremltools writes for today's
    NeuralNetworks, on a rank-4 input kept as (N, C, H, W)."""
    rng = np.random.RandomState(5)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    xd = x.astype(np.float64)
    cv = lambda a: a.astype(np.float64)[None, :, None, None]
    s, sb = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    bb = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    wm, wb = rng.uniform(-0.5, 0.5, (4, 5)).astype(np.float32), rng.uniform(-0.1, 0.1, 5).astype(np.float32)
    k = rng.uniform(-1, 1, (1, 3, 1, 4)).astype(np.float32)
    g, be = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    scaled = xd * cv(s) + cv(sb)
    clipped = np.clip(xd, -0.5, 0.7)
    mean = xd.mean(axis=(2, 3), keepdims=True)
    padded = np.pad(xd, ((0, 0), (0, 0), (1, 2), (0, 1)), constant_values=0.25)
    inorm = (xd - mean) / np.sqrt(xd.var(axis=(2, 3), keepdims=True) + 1e-5) * cv(g) + cv(be)
    # 3x3 max pooling, stride 2, SAME (bottom-right heavy): one row and column of padding after.
    pp = np.pad(xd, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=-np.inf)
    pooled = np.stack([np.stack([pp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3)) for j in range(2)], -1)
                       for i in range(2)], -2)
    e = np.exp(xd - xd.max(axis=2, keepdims=True))
    refs = [
        ("scale", scaled),
        ("bias", xd + cv(bb)),
        ("clip", clipped),
        ("clamped_relu", np.minimum(0.6, np.where(xd >= 0, xd, 0.1 * xd))),
        ("average", (xd + scaled) / 2),
        ("maximum", np.maximum(xd, scaled)),
        ("minimum", np.minimum(xd, scaled)),
        ("transpose", xd.transpose(0, 2, 3, 1)),
        ("concat_nd", np.concatenate([xd, clipped], axis=3)),
        ("flatten_2d", xd.reshape(3, 16)),
        ("constant_pad", padded),
        ("reduce_mean", mean),
        ("squeeze", mean.reshape(1, 3)),
        ("expand_dims", mean.reshape(1, 3, 1)),
        ("matmul", xd @ wm.astype(np.float64) + wb),
        ("sub", xd - k),
        ("div", xd / (np.abs(k) + 1)),
        ("max_broadcast", np.maximum(xd, k)),
        ("softmax_nd", e / e.sum(axis=2, keepdims=True)),
        ("pool_same", pooled),
        ("instance_norm", inorm),
        ("flatten_last", xd.transpose(0, 2, 3, 1).reshape(1, 48, 1, 1)),
    ]
    b = NeuralNetworkBuilder([("x", datatypes.Array(1, 3, 4, 4))], [(n, None) for n, _ in refs],
                             disable_rank5_shape_mapping=True)
    b.add_scale("scale", s, sb, True, "x", "scale", shape_scale=[3, 1, 1], shape_bias=[3, 1, 1])
    b.add_bias("bias", bb, "x", "bias", shape_bias=[3, 1, 1])
    b.add_clip("clip", "x", "clip", -0.5, 0.7)
    b.add_clamped_relu("clamped_relu", "x", "clamped_relu", 0.1, 0.6)
    b.add_elementwise("average", ["x", "scale"], "average", "AVE")
    b.add_elementwise("maximum", ["x", "scale"], "maximum", "MAX")
    b.add_elementwise("minimum", ["x", "scale"], "minimum", "MIN")
    b.add_transpose("transpose", (0, 2, 3, 1), "x", "transpose")
    b.add_concat_nd("concat_nd", ["x", "clip"], "concat_nd", 3)
    b.add_flatten_to_2d("flatten_2d", "x", "flatten_2d", 2)
    b.add_constant_pad("constant_pad", ["x"], "constant_pad", 0.25, pad_amounts=[0, 0, 0, 0, 1, 2, 0, 1])
    b.add_reduce_mean("reduce_mean", "x", "reduce_mean", axes=[2, 3], keepdims=True)
    b.add_squeeze("squeeze", "reduce_mean", "squeeze", axes=[2, 3])
    b.add_expand_dims("expand_dims", "squeeze", "expand_dims", axes=[-1])
    b.add_batched_mat_mul("matmul", ["x"], "matmul", weight_matrix_rows=4, weight_matrix_columns=5, W=wm, bias=wb)
    b.add_load_constant_nd("k", "k", k, k.shape)
    b.add_load_constant_nd("k1", "k1", np.abs(k) + 1, k.shape)
    b.add_subtract_broadcastable("sub", ["x", "k"], "sub")
    b.add_divide_broadcastable("div", ["x", "k1"], "div")
    b.add_max_broadcastable("max_broadcast", ["x", "k"], "max_broadcast")
    b.add_softmax_nd("softmax_nd", "x", "softmax_nd", 2)
    b.add_pooling("pool_same", 3, 3, 2, 2, "MAX", "SAME", "x", "pool_same")
    b.add_batchnorm("instance_norm", 3, g, be, None, None, "x", "instance_norm", compute_mean_var=True,
                    instance_normalization=True, epsilon=1e-5)
    b.add_flatten("flatten_last", 1, "transpose", "flatten_last_t")
    spec = b.spec
    # flatten CHANNEL_LAST of x: fed the NCHW input directly.
    layer = spec.neuralNetwork.layers[-1]
    layer.input[0] = "x"
    layer.output[0] = "flatten_last"
    for o in spec.description.output:
        o.type.multiArrayType.dataType = ct.proto.FeatureTypes_pb2.ArrayFeatureType.FLOAT32
    write_spec(spec, os.path.join(OUT, "nn_exact_layers.mlmodel"))
    save_reference("nn_exact_layers", x, [r for _, r in refs])


# ---- ML Program written op by op with coremltools' MIL builder ----------------------------------

def make_mil_ops():
    """The element-wise and reduction MIL ops no converted network above holds, against numpy."""
    from coremltools.converters.mil import Builder as mb
    rng = np.random.RandomState(6)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    y = rng.uniform(0.5, 1.5, (1, 3, 1, 4)).astype(np.float32)
    xd, yd = x.astype(np.float64), y.astype(np.float64)

    @mb.program(input_specs=[mb.TensorSpec(shape=x.shape)], opset_version=ct.target.iOS15)
    def prog(x):
        k = mb.const(val=y)
        return (mb.sigmoid(x=x), mb.tanh(x=x), mb.softplus(x=x), mb.softsign(x=x), mb.exp(x=x),
                mb.sqrt(x=mb.abs(x=x)), mb.leaky_relu(x=x, alpha=0.2), mb.elu(x=x, alpha=0.7),
                mb.clip(x=x, alpha=-0.3, beta=0.4), mb.sub(x=x, y=k), mb.real_div(x=x, y=k),
                mb.maximum(x=x, y=k), mb.minimum(x=x, y=k), mb.pow(x=k, y=x),
                mb.reduce_sum(x=x, axes=[1], keep_dims=False), mb.reduce_max(x=x, axes=[2, 3], keep_dims=True),
                mb.identity(x=x))

    m = ct.convert(prog, convert_to="mlprogram", compute_precision=ct.precision.FLOAT32)
    save_mlpackage(m, "mil_ops")
    refs = [1 / (1 + np.exp(-xd)), np.tanh(xd), np.log1p(np.exp(xd)), xd / (1 + np.abs(xd)), np.exp(xd),
            np.sqrt(np.abs(xd)), np.where(xd > 0, xd, 0.2 * xd), np.where(xd > 0, xd, 0.7 * (np.exp(xd) - 1)),
            np.clip(xd, -0.3, 0.4), xd - yd, xd / yd, np.maximum(xd, yd), np.minimum(xd, yd), yd ** xd,
            xd.sum(axis=1), xd.max(axis=(2, 3), keepdims=True), xd]
    save_reference("mil_ops", x, refs)


def main():
    os.makedirs(OUT, exist_ok=True)
    make_nn_cnn()
    make_nn_classifier()
    make_nn_layers()
    make_nn_exact_layers()
    make_mil(ct.precision.FLOAT32, "mil_cnn_fp32", 4)
    make_mil(ct.precision.FLOAT16, "mil_cnn_fp16", 4)
    make_mil_ops()


if __name__ == "__main__":
    main()

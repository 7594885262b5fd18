#!/usr/bin/env python3
"""Makes real MXNet models and their reference outputs for nnvm's MXNet importer tests.

Development-only: nothing in the build or CI runs it; its output for --set small is committed
under tests/models/mxnet/. It needs MXNet 1.9.1 from PyPI in a venv with numpy<1.24 (MXNet 1.9
uses np.bool and friends, removed in numpy 1.24), plus GluonCV's source for cifar_resnet20_v1
(MXNet's own model zoo has no CIFAR ResNet; only gluoncv/model_zoo/cifarresnet.py is loaded,
so GluonCV's dependencies are not needed):

  /usr/bin/python3.11 -m venv /work/venv-mxnet
  /work/venv-mxnet/bin/pip install mxnet==1.9.1 'numpy<1.24'
  /work/venv-mxnet/bin/pip install --no-deps gluoncv==0.10.5.post0
  /work/venv-mxnet/bin/python scripts/models/mxnet/make_mxnet_models.py tests/models/mxnet --set small
  /work/venv-mxnet/bin/python scripts/models/mxnet/make_mxnet_models.py /work/mxnet-zoo --set zoo

Usage: make_mxnet_models.py OUT_DIR --set small|zoo

For each model it writes OUT_DIR/<name>/:
  <name>-symbol.json    the graph (Gluon: net.export; symbol API: mx.model.save_checkpoint)
  <name>-0000.params    the weights, keys "arg:NAME" / "aux:NAME"
  reference.params      mx.nd.save of {'data': input, ..., 'output0': out0, 'output1': ...}:
                        the inputs under the graph's input names and the outputs of a forward
                        pass in inference mode (is_train=False), float32, computed from the
                        two files above as they were written
and for symbol_cnn also the same graph respelled as older MXNet versions wrote it:
  legacy-symbol.json       MXNet 0.8 ("param" + "attr", "backward_source_id", 2-element
                           inputs, no node_row_ptr/attrs, BatchNorm without aux inputs)
  legacy-attr-symbol.json  MXNet 0.9.5 ("attr", mxnet_version 905)
Both are checked: mx.sym.load of each gives the same arguments and the same outputs.

Weights are random (Xavier, fixed seeds) and every BatchNorm's gamma/beta/mean/var is
randomised too, so a wrong or skipped batch norm changes the outputs.
"""
import argparse
import copy
import importlib.util
import json
import os
import re
import sys

import numpy as np
import mxnet as mx

SEED = 20240607


def seed_all(offset):
    mx.random.seed(SEED + offset)
    np.random.seed(SEED + offset)


def rand_uniform(lo, hi, shape):
    return mx.nd.array(np.random.uniform(lo, hi, shape).astype(np.float32))


def rand_normal(scale, shape):
    return mx.nd.array((np.random.standard_normal(shape) * scale).astype(np.float32))


def randomize_named(name, shape, is_prelu=False):
    """Random value for a non-weight parameter, by MXNet's naming convention (None: not one)."""
    if name.endswith("running_var") or name.endswith("moving_var"):
        return rand_uniform(0.5, 1.5, shape)
    if name.endswith("running_mean") or name.endswith("moving_mean"):
        return rand_normal(0.1, shape)
    if name.endswith("gamma"):
        # PReLU's gamma is the negative slope: keep it well away from 1 (identity).
        return rand_uniform(0.05, 0.3, shape) if is_prelu else rand_uniform(0.5, 1.5, shape)
    if name.endswith("beta"):
        return rand_normal(0.1, shape)
    if name.endswith("bias"):
        return rand_normal(0.1, shape)
    return None


# ----------------------------------------------------------------------------------------------
# Gluon models


def load_gluoncv_cifarresnet():
    """gluoncv/model_zoo/cifarresnet.py only, without importing the gluoncv package."""
    spec = importlib.util.find_spec("gluoncv")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("cifar_resnet20_v1 needs GluonCV's source: pip install --no-deps "
                 "gluoncv==0.10.5.post0")
    path = os.path.join(list(spec.submodule_search_locations)[0], "model_zoo", "cifarresnet.py")
    mspec = importlib.util.spec_from_file_location("gluoncv_cifarresnet", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return mod


def gluon_net(zoo_name, classes):
    if zoo_name == "cifar_resnet20_v1":
        return load_gluoncv_cifarresnet().cifar_resnet20_v1(classes=classes)
    from mxnet.gluon.model_zoo import vision
    return vision.get_model(zoo_name, pretrained=False, classes=classes)


def make_gluon(out_dir, name, zoo_name, classes, in_shape, seed):
    seed_all(seed)
    net = gluon_net(zoo_name, classes)
    net.initialize(mx.init.Xavier())
    x = rand_normal(1.0, in_shape)
    net(x)  # materialise deferred shapes
    for pname, p in net.collect_params().items():
        v = randomize_named(pname, p.shape)
        if v is not None:
            p.set_data(v)
    net.hybridize()
    y_gluon = net(x)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    prefix = os.path.join(d, name)
    net.export(prefix, epoch=0)
    outs = forward_files(prefix, {"data": x})
    ys = y_gluon if isinstance(y_gluon, (list, tuple)) else [y_gluon]
    for a, b in zip(outs, ys):
        diff = float(np.abs(a.asnumpy() - b.asnumpy()).max())
        assert diff <= 1e-4 * max(1.0, float(np.abs(b.asnumpy()).max())), (name, diff)
    write_reference(d, {"data": x}, outs)
    return d


# ----------------------------------------------------------------------------------------------
# Symbol-API models


def init_symbol_params(sym, input_shapes):
    """Random arg/aux params for every argument of sym that is not an input or a label."""
    arg_shapes, _, aux_shapes = sym.infer_shape(**input_shapes)
    xavier = mx.init.Xavier()
    attrs = sym.attr_dict()
    args, auxs = {}, {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name in input_shapes or name.endswith("_label"):
            continue
        is_prelu = attrs.get(name, {}).get("act_type") == "prelu"
        v = randomize_named(name, shape, is_prelu)
        if v is None:
            v = mx.nd.zeros(shape)
            xavier(mx.init.InitDesc(name), v)
        args[name] = v
    for name, shape in zip(sym.list_auxiliary_states(), aux_shapes):
        auxs[name] = randomize_named(name, shape)
    return args, auxs


def symbol_text():
    S = mx.sym
    data = S.var("data")                                              # (2, 8) token ids
    emb = S.Embedding(data, input_dim=50, output_dim=16, name="embed")  # (2, 8, 16)
    h = S.FullyConnected(emb, num_hidden=16, flatten=False, name="proj")
    h = S.LayerNorm(h, axis=-1, eps=1e-5, name="ln1")
    q = S.FullyConnected(h, num_hidden=16, flatten=False, name="q")
    k = S.FullyConnected(h, num_hidden=16, flatten=False, name="k")
    v = S.FullyConnected(h, num_hidden=16, flatten=False, no_bias=True, name="v")
    scores = S.batch_dot(q, k, transpose_b=True, name="scores") / 4     # _div_scalar
    att = S.softmax(scores, axis=-1, name="att")                        # (2, 8, 8)
    ctx = S.batch_dot(att, v, name="ctx")                               # (2, 8, 16)
    # heads: every special Reshape code (0, -1, -2, -3, -4), back to (2, 8, 16)
    r1 = S.Reshape(ctx, shape=(0, 0, -4, 4, -1), name="split_heads")    # (2, 8, 4, 4)
    t1 = S.transpose(r1, axes=(0, 2, 1, 3), name="t1")                  # (2, 4, 8, 4)
    r2 = S.Reshape(t1, shape=(-3, -2), name="merge_batch")              # (8, 8, 4)
    r3 = S.Reshape(r2, shape=(-4, 2, -1, -2), name="split_batch")       # (2, 4, 8, 4)
    t2 = S.transpose(r3, axes=(0, 2, 1, 3), name="t2")                  # (2, 8, 4, 4)
    r4 = S.Reshape(t2, shape=(0, 0, -3), name="merge_heads")            # (2, 8, 16)
    res = h + S.Dropout(r4, p=0.1, name="drop")                         # elemwise_add
    x = S.identity(res, name="copy")                                    # _copy
    a = (x + 1) * 2                   # _plus_scalar, _mul_scalar
    b = 2 - a                         # _rminus_scalar
    c = b - 0.5                       # _minus_scalar
    d = c / 3                         # _div_scalar
    den = S.clip(x, -1.0, 1.0, name="clip") * 0.25 + 1   # in [0.75, 1.25]
    e = 3 / den                       # _rdiv_scalar
    s1 = S.slice_axis(e, axis=1, begin=1, end=7, name="s1")                       # (2, 6, 16)
    s2 = S.slice(s1, begin=(None, None, 4), end=(None, None, 12), name="s2")      # (2, 6, 8)
    s3 = S.slice(d, begin=(None, 1, None), end=(None, 7, 8), name="s3")           # (2, 6, 8)
    m = S.mean(s2, axis=1, keepdims=True, name="m")                               # (2, 1, 8)
    su = S.sum(s3, axis=2, keepdims=True, name="su")                              # (2, 6, 1)
    ba = S.broadcast_add(s2, m, name="badd")
    bm = S.broadcast_mul(s3, su, name="bmul")
    em = ba * bm                                                                  # elemwise_mul
    cat = S.Concat(ba, em, dim=2, name="cat")                                     # (2, 6, 16)
    out0 = S.FullyConnected(cat, num_hidden=5, flatten=True, name="head")        # (2, 5)
    out1 = S.sum(cat, axis=(1,), keepdims=False, name="pool") / 6                 # (2, 16)
    return S.Group([out0, out1]), {"data": (2, 8)}


def symbol_cnn():
    S = mx.sym
    data = S.var("data")                                                          # (1, 3, 16, 16)
    c1 = S.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=8, name="conv1")
    b1 = S.BatchNorm(c1, fix_gamma=True, name="bn1")
    a1 = S.Activation(b1, act_type="relu", name="relu1")                          # (8, 16, 16)
    c2 = S.Convolution(a1, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=8,
                       no_bias=True, name="conv2")                                # (8, 8, 8)
    b2 = S.BatchNorm(c2, fix_gamma=False, eps=1e-5, name="bn2")
    l2 = S.LeakyReLU(b2, act_type="leaky", slope=0.1, name="leaky2")
    c3 = S.Convolution(a1, kernel=(3, 3), stride=(2, 2), pad=(2, 2), dilate=(2, 2),
                       num_group=4, num_filter=8, name="conv3")                   # (8, 8, 8)
    b3 = S.BatchNorm(c3, fix_gamma=False, use_global_stats=True, name="bn3")
    s3 = S.Activation(b3, act_type="sigmoid", name="sig3")
    msum = l2 + s3                                                                # elemwise_add
    mmul = l2 * s3                                                                # elemwise_mul
    t = S.Activation(msum, act_type="tanh", name="tanh")
    sr = S.Activation(mmul, act_type="softrelu", name="softrelu")
    ss = S.Activation(msum - mmul, act_type="softsign", name="softsign")          # elemwise_sub
    e = S.LeakyReLU(t, act_type="elu", slope=0.5, name="elu")
    p = S.LeakyReLU(sr, act_type="prelu", name="prelu")
    se = S.LeakyReLU(ss, act_type="selu", name="selu")
    ge = S.LeakyReLU(msum, act_type="gelu", name="gelu")
    cat = S.Concat(e, p, se, ge, dim=1, name="cat1")                              # (32, 8, 8)
    c4 = S.Convolution(cat, kernel=(1, 1), num_filter=8, name="conv4")            # (8, 8, 8)
    d1 = S.Deconvolution(c4, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
                         num_filter=4, no_bias=False, name="deconv1")             # (4, 16, 16)
    # (target_shape would be the other way to size it, but MXNet 1.9.1's oneDNN Deconvolution
    # fails on it: "could not create a descriptor for a dilated deconvolution")
    d2 = S.Deconvolution(c4, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=4,
                         name="deconv2")                                          # (4, 16, 16)
    cat2 = S.Concat(d1 + d2, a1, dim=1, name="cat2")                              # (12, 16, 16)
    p1 = S.Pooling(cat2, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max",
                   pooling_convention="valid", name="pool1")                      # (12, 8, 8)
    p2 = S.Pooling(cat2, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                   pooling_convention="full", count_include_pad=False, name="pool2")  # (12, 9, 9)
    p3 = S.Pooling(p1, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool3")    # (12, 4, 4)
    p4 = S.Pooling(p2, kernel=(3, 3), stride=(2, 2), pool_type="max",
                   pooling_convention="full", name="pool4")                       # (12, 4, 4)
    p5 = S.Pooling(p1, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg",
                   name="pool5")                                                  # (12, 8, 8)
    g1 = S.Pooling(p3 + p4, kernel=(1, 1), global_pool=True, pool_type="avg", name="gap")
    g2 = S.Pooling(p5, kernel=(1, 1), global_pool=True, pool_type="max", name="gmp")
    feat = S.Flatten(S.Concat(g1, g2, dim=1, name="cat3"), name="flatten")        # (1, 24)
    fc = S.FullyConnected(feat, num_hidden=10, name="fc")
    sm = S.SoftmaxOutput(fc, name="softmax")
    return S.Group([sm, feat]), {"data": (1, 3, 16, 16)}


def make_symbol(out_dir, name, builder, seed):
    seed_all(seed)
    sym, input_shapes = builder()
    args, auxs = init_symbol_params(sym, input_shapes)
    inputs = {}
    for iname, shape in input_shapes.items():
        if name == "symbol_text":
            inputs[iname] = mx.nd.array(np.random.randint(0, 50, shape).astype(np.float32))
        else:
            inputs[iname] = rand_normal(1.0, shape)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    prefix = os.path.join(d, name)
    mx.model.save_checkpoint(prefix, 0, sym, args, auxs)
    outs = forward_files(prefix, inputs)
    write_reference(d, inputs, outs)
    return d


# ----------------------------------------------------------------------------------------------
# Forward pass from the written files, reference file


def load_checkpoint(prefix, json_path=None):
    sym = mx.sym.load(json_path or prefix + "-symbol.json")
    saved = mx.nd.load(prefix + "-0000.params")
    args = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
    auxs = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
    assert len(args) + len(auxs) == len(saved)
    return sym, args, auxs


def forward_files(prefix, inputs, json_path=None):
    """Inference-mode outputs of the written graph + params (json_path: another graph file)."""
    sym, args, auxs = load_checkpoint(prefix, json_path)
    shapes = {k: v.shape for k, v in inputs.items()}
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    bind_args = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name in inputs:
            bind_args[name] = inputs[name]
        elif name in args:
            bind_args[name] = args[name]
        else:  # a label (SoftmaxOutput): unused in inference
            assert name.endswith("_label"), name
            bind_args[name] = mx.nd.zeros(shape)
    assert sorted(auxs) == sorted(sym.list_auxiliary_states()), (sorted(auxs),)
    exe = sym.bind(mx.cpu(), bind_args, aux_states={k: v.copy() for k, v in auxs.items()},
                   grad_req="null")
    outs = exe.forward(is_train=False)
    return [o.copy() for o in outs]


def write_reference(d, inputs, outs):
    ref = dict(inputs)
    for i, o in enumerate(outs):
        assert o.dtype == np.float32
        a = o.asnumpy()
        assert np.isfinite(a).all()
        ref["output%d" % i] = o
    mx.nd.save(os.path.join(d, "reference.params"), ref)


# ----------------------------------------------------------------------------------------------
# Legacy JSON spellings

# Parameters (with MXNet 0.8's spelling of their defaults) that 0.8 wrote for every node of
# these ops, whether set or not: its JSON held the whole parameter struct.
LEGACY08_DEFAULTS = {
    "Convolution": {"stride": "(1,1)", "dilate": "(1,1)", "pad": "(0,0)", "num_group": "1",
                    "workspace": "1024", "no_bias": "False", "cudnn_tune": "off",
                    "cudnn_off": "False"},
    "Deconvolution": {"stride": "(1,1)", "pad": "(0,0)", "adj": "(0,0)", "num_group": "1",
                      "workspace": "512", "no_bias": "True"},
    "BatchNorm": {"eps": "0.001", "momentum": "0.9", "fix_gamma": "True",
                  "use_global_stats": "False"},
    "Pooling": {"pool_type": "max", "global_pool": "False", "pooling_convention": "valid",
                "stride": "(1,1)", "pad": "(0,0)"},
    "FullyConnected": {"no_bias": "False"},
    "LeakyReLU": {"act_type": "leaky", "slope": "0.25", "lower_bound": "0.125",
                  "upper_bound": "0.334"},
    "SoftmaxOutput": {"grad_scale": "1", "ignore_label": "-1", "multi_output": "False",
                      "normalization": "null", "out_grad": "False", "preserve_shape": "False",
                      "use_ignore": "False"},
    "Concat": {"dim": "1"},
}


def legacy08_value(v):
    # 0.8 printed tuples without blanks: "(3,3)"
    return re.sub(r",\s+", ",", v) if v.startswith("(") else v


def to_legacy_08(doc, hidden=None):
    """MXNet 0.8 spelling: per node "op", "param" (all op parameters), "name", "inputs" as
    [node, output] pairs, "backward_source_id": -1 and "attr" only for user attributes;
    no "node_row_ptr" and no graph "attrs" (so the loader takes it for 0.8.0 and upgrades it);
    BatchNorm's moving_mean/moving_var are not nodes (0.8 kept aux states out of the graph:
    the loader recreates them as NAME_moving_mean / NAME_moving_var)."""
    hidden = hidden or {}
    nodes = doc["nodes"]
    drop = set()
    for n in nodes:
        if n["op"] == "BatchNorm":
            for e in n["inputs"][3:]:
                drop.add(e[0])
    new_id, out_nodes = {}, []
    for i, n in enumerate(nodes):
        if i in drop:
            continue
        new_id[i] = len(out_nodes)
        node = {"op": n["op"]}
        if n["op"] == "null":
            node["param"] = {}
        else:
            param = dict(LEGACY08_DEFAULTS.get(n["op"], {}))
            for k, v in n.get("attrs", {}).items():
                if not (k.startswith("__") and k.endswith("__")):
                    param[k] = legacy08_value(v)
            if n["op"] == "Concat":
                param["num_args"] = str(len(n["inputs"]))
            node["param"] = dict(sorted(param.items()))
        node["name"] = n["name"]
        inputs = n["inputs"][:3] if n["op"] == "BatchNorm" else n["inputs"]
        node["inputs"] = [[new_id[e[0]], e[1]] for e in inputs]
        node["backward_source_id"] = -1
        if n["name"] in hidden:
            node["attr"] = hidden[n["name"]]
        out_nodes.append(node)
    arg_nodes = [i for i, n in enumerate(out_nodes) if n["op"] == "null"]
    heads = [[new_id[h[0]], h[1]] for h in doc["heads"]]
    return {"nodes": out_nodes, "arg_nodes": arg_nodes, "heads": heads}


def to_legacy_attr(doc, version=905):
    """MXNet 0.9.x spelling: node key "attr" instead of "attrs", mxnet_version 905."""
    out = copy.deepcopy(doc)
    for n in out["nodes"]:
        if "attrs" in n:
            n["attr"] = n.pop("attrs")
            # keep MXNet's key order: op, name, attr, inputs
            n_inputs = n.pop("inputs")
            n["inputs"] = n_inputs
    out["attrs"] = {"mxnet_version": ["int", version]}
    return out


def dmlc_json(v, indent=0, key=None):
    """JSON laid out as dmlc's JSONWriter (and so MXNet 0.x) wrote it: objects and the long
    lists multi-line with 2-space indents and ", " + newline between items, one-key objects
    and short lists (a node's inputs, a head, arg_nodes) on one line."""
    pad, pad1 = " " * indent, " " * (indent + 2)
    if isinstance(v, dict):
        if not v:
            return "{}"
        if len(v) == 1:
            (k, x), = v.items()
            if not isinstance(x, (dict, list)) or (isinstance(x, list) and key != "nodes"
                                                   and all(not isinstance(e, (dict, list))
                                                           for e in x)):
                return "{%s: %s}" % (json.dumps(k), dmlc_json(x, indent, k))
        items = ["%s%s: %s" % (pad1, json.dumps(k), dmlc_json(x, indent + 2, k))
                 for k, x in v.items()]
        return "{\n" + ", \n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if not v:
            return "[]"
        if key == "nodes" or key == "node_row_ptr":
            items = [pad1 + dmlc_json(x, indent + 2) for x in v]
            return "[\n" + ", \n".join(items) + "\n" + pad + "]"
        return "[" + ", ".join(dmlc_json(x, indent) for x in v) + "]"
    return json.dumps(v)


def dump_legacy(path, doc):
    with open(path, "w") as f:
        f.write(dmlc_json(doc) + "\n")


def make_legacy(d, name):
    prefix = os.path.join(d, name)
    with open(prefix + "-symbol.json") as f:
        doc = json.load(f)
    ref = mx.nd.load(os.path.join(d, "reference.params"))
    inputs = {k: v for k, v in ref.items() if not k.startswith("output")}
    outs = [ref["output%d" % i] for i in range(len(ref) - len(inputs))]
    sym0 = mx.sym.load(prefix + "-symbol.json")
    # User attributes as 0.8 files carry them: bare ctx_group/lr_mult/wd_mult keys, and
    # ARG_lr_mult on an op node (the loader moves it to the op's input ARG as __lr_mult__).
    hidden = {"data": {"ctx_group": "stage1"},
              "conv1_weight": {"lr_mult": "1.0", "wd_mult": "1.0"},
              "conv1": {"ctx_group": "stage1", "weight_lr_mult": "1.0"},
              "fc": {"bias_wd_mult": "0.0"}}
    for fname, legacy in (("legacy-symbol.json", to_legacy_08(doc, hidden)),
                          ("legacy-attr-symbol.json", to_legacy_attr(doc))):
        path = os.path.join(d, fname)
        dump_legacy(path, legacy)
        sym = mx.sym.load(path)
        assert sym.list_arguments() == sym0.list_arguments(), (fname, sym.list_arguments())
        assert sym.list_auxiliary_states() == sym0.list_auxiliary_states(), fname
        assert sym.list_outputs() == sym0.list_outputs(), fname
        got = forward_files(prefix, inputs, json_path=path)
        for a, b in zip(got, outs):
            assert np.array_equal(a.asnumpy(), b.asnumpy()), (fname, np.abs(a - b).max())
        print("  %s: mx.sym.load OK, outputs identical" % fname)


# ----------------------------------------------------------------------------------------------


def op_list(json_path):
    with open(json_path) as f:
        doc = json.load(f)
    ops = []
    for n in doc["nodes"]:
        if n["op"] != "null" and n["op"] not in ops:
            ops.append(n["op"])
    return sorted(ops)


def report(d, name):
    print("%s:" % name)
    print("  ops: %s" % ", ".join(op_list(os.path.join(d, name + "-symbol.json"))))
    ref = mx.nd.load(os.path.join(d, "reference.params"))
    for k in sorted(ref):
        a = ref[k].asnumpy()
        print("  %-8s %-16s min %+.4g max %+.4g std %.4g" % (k, a.shape, a.min(), a.max(),
                                                            a.std()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--set", choices=["small", "zoo"], required=True)
    opts = ap.parse_args()
    out = opts.out_dir
    os.makedirs(out, exist_ok=True)
    print("mxnet %s, numpy %s" % (mx.__version__, np.__version__))
    made = []
    if opts.set == "small":
        made.append(make_gluon(out, "cifar_resnet20_v1", "cifar_resnet20_v1", 10,
                               (1, 3, 32, 32), 1))
        made.append(make_gluon(out, "mobilenetv2_0.25", "mobilenetv2_0.25", 10,
                               (1, 3, 64, 64), 2))
        made.append(make_symbol(out, "symbol_text", symbol_text, 3))
        made.append(make_symbol(out, "symbol_cnn", symbol_cnn, 4))
    else:
        made.append(make_gluon(out, "resnet18_v1", "resnet18_v1", 1000, (1, 3, 224, 224), 11))
        made.append(make_gluon(out, "mobilenetv2_1.0", "mobilenetv2_1.0", 1000,
                               (1, 3, 224, 224), 12))
        made.append(make_gluon(out, "squeezenet1.1", "squeezenet1.1", 1000, (1, 3, 224, 224),
                               13))
    for d in made:
        report(d, os.path.basename(d))
    if opts.set == "small":
        make_legacy(os.path.join(out, "symbol_cnn"), "symbol_cnn")
    total = 0
    for d in made:
        for fn in sorted(os.listdir(d)):
            size = os.path.getsize(os.path.join(d, fn))
            total += size
            print("  %9d  %s" % (size, os.path.join(os.path.basename(d), fn)))
    print("  %9d  total (%.2f MiB)" % (total, total / 2.0**20))


if __name__ == "__main__":
    main()

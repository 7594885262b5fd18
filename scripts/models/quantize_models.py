#!/usr/bin/env python3
"""Quantizes exported networks to int8 with ONNX Runtime's static quantization tool; ORT's int8
output is the reference nnvm's is checked against.

Usage: quantize_models.py MODELS_DIR [NAME ...]     (default: resnet18 mobilenet_v2)

Reads MODELS_DIR/NAME (written by export_models.py: model.onnx, input_0.npy) and writes
MODELS_DIR/NAME_int8/{model.onnx, input_0.npy, output_0.npy, test_data_set_0/}, a case
`nnvmc check` runs. The model is in QDQ form (QuantizeLinear/DequantizeLinear pairs around
float Conv, MatMul, Gemm, Add, ...), which is what ORT's tool writes by default and what other
exporters (PyTorch's, TensorFlow's) also write; output_0.npy is ONNX Runtime's own result
for input_0.npy, computed by its int8 kernels.

Calibration: 8 random inputs drawn with a fixed seed (MinMax), so reruns give the same file.
The two networks use the two integer forms x86 has instructions for:
  resnet18      uint8 activations x int8 weights, per output channel (u8 x s8, `vpmaddubsw`/VNNI);
                weights in 7 bits (reduce_range), as ORT advises for x86 without VNNI: there
                `vpmaddubsw` adds two u8 x s8 products in int16, which 8-bit weights can
                overflow, and ORT's result would then depend on the machine that made it
  mobilenet_v2  int8 activations x int8 weights, per tensor (s8 x s8)
Needs PyPI's onnxruntime and onnx (development and test-model generation only; nnvm does not).
"""
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

FORMS = {
    "resnet18": dict(activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True),
    "mobilenet_v2": dict(activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=False),
}


class RandomCalibration(CalibrationDataReader):
    def __init__(self, input_name, shape, count=8, seed=0):
        rng = np.random.default_rng(seed)
        self.batches = iter([{input_name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)])

    def get_next(self):
        return next(self.batches, None)


def write_pb(array, path):
    with open(path, "wb") as f:
        f.write(onnx.numpy_helper.from_array(array).SerializeToString())


def quantize(models_dir, name):
    src = os.path.join(models_dir, name)
    dst = os.path.join(models_dir, name + "_int8")
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    x = np.load(os.path.join(src, "input_0.npy"))
    model = onnx.load(os.path.join(src, "model.onnx"))
    input_name = model.graph.input[0].name

    prepared = os.path.join(dst, "prepared.onnx")
    quant_pre_process(os.path.join(src, "model.onnx"), prepared)
    staged = os.path.join(dst, "model.onnx.tmp")
    quantize_static(prepared, staged, RandomCalibration(input_name, x.shape), quant_format=QuantFormat.QDQ,
                    **FORMS[name])
    os.remove(prepared)

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(staged, so, providers=["CPUExecutionProvider"])
    y = sess.run(None, {input_name: x})[0]
    np.save(os.path.join(dst, "input_0.npy"), x)
    np.save(os.path.join(dst, "output_0.npy"), y)
    write_pb(x, os.path.join(dst, "test_data_set_0", "input_0.pb"))
    write_pb(y, os.path.join(dst, "test_data_set_0", "output_0.pb"))
    os.replace(staged, os.path.join(dst, "model.onnx"))
    print(f"{name}_int8: {FORMS[name]['activation_type'].name} x {FORMS[name]['weight_type'].name}, "
          f"{'per channel' if FORMS[name]['per_channel'] else 'per tensor'}"
          f"{', 7-bit weights' if FORMS[name].get('reduce_range') else ''}; ORT output range "
          f"[{y.min():.3g}, {y.max():.3g}]")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name in sys.argv[2:] or list(FORMS):
        quantize(sys.argv[1], name)

#!/usr/bin/env python3
"""Rewrites an ONNX model into the operator forms of an early opset (1 to 6).

Usage: legacy_opset.py IN.onnx OUT.onnx OPSET

ONNX's version converter cannot go that far down (it has no Relu 13 -> 12 step), so this writes
the early forms itself, the way 2017's exporters (Caffe2, PyTorch 0.2-0.3) did: Conv's bias as a
separate Add with broadcast = 1 on axis 1, Gemm with broadcast = 1, BatchNormalization and
Dropout with is_test = 1, consumed_inputs before opset 6, Concat without an axis (1) before 4,
Reshape's shape as an attribute before 5, Pad's pads (paddings before 2) and Clip's min and max
as attributes, Softmax only on 2-D rows, and IR version 3 with every initializer also listed as a
graph input. An op it cannot express at OPSET (a MaxPool with ceil_mode, say) stops it with a
message.

It checks nnvm's version adapters on real networks, against the framework's output:

    legacy_opset.py models/resnet18/model.onnx /tmp/resnet18_6.onnx 6
    nnvmc run /tmp/resnet18_6.onnx -i models/resnet18/input_0.npy --save-outputs /tmp/out
    compare_outputs.py models/resnet18/output_0.npy /tmp/out/output_0.npy

Development use only; needs the onnx package (pip install onnx), which nnvm itself does not.
"""
import sys

import onnx
from onnx import helper, numpy_helper, shape_inference

ALL_INPUTS_CONSUMED = {"Relu", "Add", "Sub", "Mul", "Div", "Sum", "Max", "Min", "Mean", "Abs", "Neg",
                       "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Clip", "LeakyRelu", "Elu", "Dropout"}


def fail(node, why):
    sys.exit(f"legacy_opset.py: node '{node.name or node.output[0]}' ({node.op_type}): {why}")


class Rewriter:
    def __init__(self, model, opset):
        self.opset = opset
        graph = model.graph
        self.constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        for n in graph.node:
            if n.op_type == "Constant" and n.attribute[0].name == "value":
                self.constants[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        inferred = shape_inference.infer_shapes(model).graph
        self.shapes = {}  # extents, None where unknown
        for v in list(inferred.value_info) + list(inferred.input) + list(inferred.output):
            if v.type.tensor_type.HasField("shape"):
                self.shapes[v.name] = [d.dim_value if d.HasField("dim_value") else None
                                       for d in v.type.tensor_type.shape.dim]
        for name, value in self.constants.items():
            self.shapes[name] = list(value.shape)
        self.nodes = []

    def constant(self, node, name):
        if name not in self.constants:
            fail(node, f"input '{name}' must be a constant to become an attribute")
        return self.constants[name]

    def emit(self, node):
        if self.opset < 6 and node.op_type in ALL_INPUTS_CONSUMED:
            node.attribute.append(helper.make_attribute("consumed_inputs", [0] * len(node.input)))
        self.nodes.append(node)

    def attrs(self, node):
        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def rewrite(self, node):
        op, a = node.op_type, self.attrs(node)
        if op == "Conv" and len(node.input) == 3 and node.input[2]:
            conv_out = node.output[0] + "_nobias"
            self.emit(helper.make_node("Conv", node.input[:2], [conv_out], node.name, **a))
            add = helper.make_node("Add", [conv_out, node.input[2]], list(node.output), node.name + "_bias",
                                   broadcast=1, axis=1)
            return self.emit(add)
        if op in ("MaxPool", "AveragePool"):
            if a.pop("ceil_mode", 0) or any(d != 1 for d in a.pop("dilations", [])):
                fail(node, "ceil_mode and dilations exist from opset 10")
            if op == "AveragePool" and a.pop("count_include_pad", 0) and self.opset < 7:
                fail(node, "count_include_pad exists from opset 7")
            return self.emit(helper.make_node(op, node.input, node.output, node.name, **a))
        if op == "Gemm":
            return self.emit(helper.make_node(op, node.input, node.output, node.name, broadcast=1, **a))
        if op in ("Add", "Sub", "Mul", "Div", "Pow"):
            sa, sb = self.shapes.get(node.input[0]), self.shapes.get(node.input[1])
            if sa is None or sb is None or len(sb) > len(sa):
                fail(node, "broadcasting before opset 7 needs B's rank known and at most A's")
            if sa == sb and None not in sa:
                return self.emit(node)
            return self.emit(helper.make_node(op, node.input, node.output, node.name, broadcast=1, **a))
        if op == "BatchNormalization":
            if self.opset < 6:
                a["consumed_inputs"] = [0, 0, 0, 1, 1]
            return self.emit(helper.make_node(op, node.input, node.output, node.name, is_test=1, **a))
        if op == "Dropout":
            a.pop("seed", None)
            return self.emit(helper.make_node(op, node.input[:1], node.output[:1], node.name, is_test=1, **a))
        if op == "Concat" and self.opset < 4 and a.get("axis") == 1:
            return self.emit(helper.make_node(op, node.input, node.output, node.name))
        if op == "Reshape" and self.opset < 5:
            shape = [int(v) for v in self.constant(node, node.input[1])]
            return self.emit(helper.make_node(op, node.input[:1], node.output, node.name, shape=shape))
        if op == "Clip":
            bounds = {}
            for name, k in (("min", 1), ("max", 2)):
                if len(node.input) > k and node.input[k]:
                    bounds[name] = float(self.constant(node, node.input[k]))
            return self.emit(helper.make_node(op, node.input[:1], node.output, node.name, **bounds))
        if op == "Pad":
            pads = [int(v) for v in self.constant(node, node.input[1])]
            value = float(self.constant(node, node.input[2])) if len(node.input) > 2 and node.input[2] else 0.0
            key = "paddings" if self.opset < 2 else "pads"
            return self.emit(helper.make_node(op, node.input[:1], node.output, node.name,
                                              mode=a.get("mode", "constant"), value=value, **{key: pads}))
        if op == "Softmax":
            if len(self.shapes.get(node.input[0], [])) != 2 or a.get("axis", -1) not in (1, -1):
                fail(node, "Softmax before opset 13 normalizes flattened rows; only 2-D inputs keep their meaning")
            return self.emit(helper.make_node(op, node.input, node.output, node.name))
        if op in ("Concat", "Constant", "Conv", "Flatten", "GlobalAveragePool", "Identity", "LRN", "Relu", "Sigmoid",
                  "Tanh", "Transpose"):
            return self.emit(node)
        fail(node, f"no rewrite to opset {self.opset} here")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    opset = int(sys.argv[3])
    if not 1 <= opset <= 6:
        sys.exit("legacy_opset.py: OPSET must be 1 to 6")
    r = Rewriter(model, opset)
    for node in model.graph.node:
        r.rewrite(node)
    graph = model.graph
    # Constants read only as attributes now are left out, the rest stay.
    read = {name for n in r.nodes for name in n.input}
    del graph.node[:]
    graph.node.extend(n for n in r.nodes if not (n.op_type == "Constant" and n.output[0] not in read))
    kept = [t for t in graph.initializer if t.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    listed = {v.name for v in graph.input}
    for t in kept:
        if t.name not in listed:
            graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    del graph.value_info[:]
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", opset))
    model.ir_version = 3
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()

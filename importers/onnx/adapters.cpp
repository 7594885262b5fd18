#include "adapters.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <map>

#include "nnvm/onnx/importer.hpp"
#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

ops::Attrs without(const ops::Attrs& attrs, std::string_view name) {
  ops::Attrs out;
  for (auto& [k, v] : attrs.values())
    if (k != name) out.set(k, v);
  return out;
}

void set_input(NodeBuild& n, size_t position, graph::Value v) {
  if (n.inputs.size() <= position) n.inputs.resize(position + 1);
  n.inputs[position] = v;
}

void ints_to_input(NodeBuild& n, BuildContext& ctx, const std::string& name, size_t position) {
  if (!n.attrs.has(name)) return;
  std::vector<int64_t> v = n.attrs.get_ints(name);
  n.attrs = without(n.attrs, name);
  set_input(n, position, ctx.constant(name, NDArray::from(v, {int64_t(v.size())})));
}

void float_to_input(NodeBuild& n, BuildContext& ctx, const std::string& name, size_t position, DataType dtype) {
  if (!n.attrs.has(name)) return;
  double v = n.attrs.get_float(name);
  n.attrs = without(n.attrs, name);
  set_input(n, position, ctx.constant(name, scalar(dtype, v)));
}

VersionAdapter dropping(std::string op, int64_t below, std::vector<std::string> attrs) {
  return {.op_type = std::move(op), .below = below, .rewrite = [attrs](NodeBuild& n, BuildContext&) {
            for (auto& a : attrs) n.attrs = without(n.attrs, a);
            return std::vector<graph::Value>{};
          }};
}

std::string refuse_int(const ::onnx::NodeProto& node, const std::string& name, int64_t value, const std::string& why) {
  for (auto& a : node.attribute())
    if (a.name() == name && a.i() == value) return why;
  return "";
}

void require_equal_shapes(const NodeBuild& n, BuildContext& ctx, const std::string& why) {
  std::vector<ir::Expr> first;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (!n.inputs[k].defined()) continue;
    std::vector<ir::Expr> shape = ctx.type(n.inputs[k]).shape;
    if (k == 0) first = shape;
    bool same = shape.size() == first.size();
    for (size_t d = 0; same && d < shape.size(); ++d) same = ops::same_extent(shape[d], first[d]);
    if (!same)
      throw UserError("nnvm.onnx.shape", str_cat(why, "; input 0 has shape ", ops::detail::shape_string(first),
                                                 " and input ", k, " has shape ", ops::detail::shape_string(shape)));
  }
}

namespace {

VersionAdapter axes_to_input(std::string op, int64_t below) {
  return {.op_type = op, .below = below, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
            ints_to_input(n, ctx, "axes", 1);
            return std::vector<graph::Value>{};
          }};
}

// Softmax, LogSoftmax and Hardmax before 13 flatten the input to 2-D at `axis` (default 1) and
// normalize each row. When axis is the last one that is the same as the new operator on the last
// axis; otherwise the rewrite is Flatten -> op(axis 1) -> Reshape back to Shape(input), which
// needs onnx:Flatten, onnx:Shape and onnx:Reshape (looked up only in that case) and a static
// input shape.
VersionAdapter flattening_normalizer(std::string op) {
  return {.op_type = op, .below = 13, .rewrite = [op](NodeBuild& n, BuildContext& ctx) {
            graph::Value x = n.inputs.at(0);
            int64_t rank = int64_t(ctx.type(x).shape.size());
            int64_t axis = n.attrs.get_int("axis", 1);
            if (axis < 0) axis += rank;
            n.attrs.set_int("axis", axis);
            if (rank == 0 || axis == rank - 1) return std::vector<graph::Value>{};
            ops::Attrs rest = without(n.attrs, "axis");
            graph::Value flat = ctx.op("Flatten", {x}, ops::Attrs().set_int("axis", axis), "flatten").at(0);
            graph::Value rows = ctx.op(op, {flat}, rest.set_int("axis", 1), "rows").at(0);
            graph::Value shape = ctx.op("Shape", {x}, {}, "shape").at(0);
            return ctx.op("Reshape", {rows, shape}, {}, "reshape");
          }};
}

// Resize before 11, and Upsample, scale with the asymmetric coordinate mapping; nearest rounds down.
void resize_10_attrs(NodeBuild& n) {
  std::string mode = n.attrs.get_string("mode", "nearest");
  n.attrs.set_string("mode", mode).set_string("coordinate_transformation_mode", "asymmetric");
  if (mode == "nearest") n.attrs.set_string("nearest_mode", "floor");
}

// Max/Min/Sum/Mean take any number of inputs, an op a fixed most (8 for the built-in ones), so
// a longer node becomes a left fold in chunks: the first chunk, then the running result with the
// next inputs. Mean sums that way (onnx:Sum) and divides by the input count (onnx:Div).
VersionAdapter variadic(std::string op) {
  return {.op_type = op, .below = always, .rewrite = [op](NodeBuild& n, BuildContext& ctx) {
            if (n.inputs.size() <= ctx.max_inputs(op)) return std::vector<graph::Value>{};
            bool mean = op == "Mean";
            std::string fold = mean ? "Sum" : op;
            size_t most = ctx.max_inputs(fold);
            if (most < 2)
              throw ImportError("nnvm.onnx.unsupported",
                                str_cat(op, " with ", n.inputs.size(), " inputs needs an onnx:", fold,
                                        " op taking at least 2 inputs"));
            graph::Value acc;
            for (size_t k = 0, part = 0; k < n.inputs.size(); ++part) {
              std::vector<graph::Value> chunk;
              if (acc.defined()) chunk.push_back(acc);
              while (chunk.size() < most && k < n.inputs.size()) chunk.push_back(n.inputs[k++]);
              acc = ctx.op(fold, chunk, n.attrs, str_cat("part", part)).at(0);
            }
            if (mean) {
              graph::Value count = ctx.constant("count", scalar(ctx.type(acc).dtype, double(n.inputs.size())));
              acc = ctx.op("Div", {acc, count}, {}, "mean").at(0);
            }
            return std::vector<graph::Value>{acc};
          }};
}

// The steps out of opsets 7 and later: families first, then one row per operator, by name.
std::vector<VersionAdapter> later_adapters() {
  std::vector<VersionAdapter> t;
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    t.push_back(axes_to_input(op, 18));
  for (const char* op : {"ReduceSum", "Squeeze", "Unsqueeze"}) t.push_back(axes_to_input(op, 13));
  for (const char* op : {"Hardmax", "LogSoftmax", "Softmax"}) t.push_back(flattening_normalizer(op));
  // Before 8 these took inputs of one shape; 8 made them broadcast.
  for (const char* op : {"Max", "Mean", "Min", "Sum"}) {
    t.push_back({.op_type = op, .below = 8, .rewrite = [op = std::string(op)](NodeBuild& n, BuildContext& ctx) {
                   require_equal_shapes(n, ctx, op + " before opset 8 takes inputs of one shape");
                   return std::vector<graph::Value>{};
                 }});
    t.push_back(variadic(op));
  }
  // Version 7 had `spatial`; spatial = 1 (the default) is what version 9 and later always do.
  t.push_back({.op_type = "BatchNormalization", .below = 9,
               .unsupported =
                   [](const ::onnx::NodeProto& node) {
                     return refuse_int(node, "spatial", 0,
                                       "BatchNormalization before opset 9 with spatial = 0 is not supported");
                   },
               .rewrite = [](NodeBuild& n, BuildContext&) {
                 n.attrs = without(n.attrs, "spatial");
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Clip", .below = 11, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 DataType d = ctx.type(n.inputs.at(0)).dtype;
                 float_to_input(n, ctx, "min", 1, d);
                 float_to_input(n, ctx, "max", 2, d);
                 return std::vector<graph::Value>{};
               }});
  // DFT's axis became a scalar input in 20, whose default (-2) differs from the attribute's (1).
  t.push_back({.op_type = "DFT", .below = 20, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 int64_t axis = n.attrs.get_int("axis", 1);
                 n.attrs = without(n.attrs, "axis");
                 set_input(n, 2, ctx.constant("axis", NDArray::from(std::vector<int64_t>{axis}, {})));
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Dropout", .below = 12, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 float_to_input(n, ctx, "ratio", 1, dtype::float32);
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "GroupNormalization", .below = 21,
               .unsupported = [](const ::onnx::NodeProto&) -> std::string {
                 return "GroupNormalization before opset 21 scales per group; nnvm implements version 21 (per channel)";
               }});
  t.push_back({.op_type = "Pad", .below = 11, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 DataType d = ctx.type(n.inputs.at(0)).dtype;
                 ints_to_input(n, ctx, "pads", 1);
                 float_to_input(n, ctx, "value", 2, d);
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Resize", .below = 11, .rewrite = [](NodeBuild& n, BuildContext&) {
                 resize_10_attrs(n);
                 if (n.inputs.size() > 1) n.inputs = {n.inputs[0], graph::Value{}, n.inputs[1]};
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Scatter", .below = always, .becomes = "ScatterElements",
               .rewrite = [](NodeBuild& n, BuildContext&) {
                 n.op_type = "ScatterElements";
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Slice", .below = 10, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 ints_to_input(n, ctx, "starts", 1);
                 ints_to_input(n, ctx, "ends", 2);
                 ints_to_input(n, ctx, "axes", 3);
                 return std::vector<graph::Value>{};
               }});
  // Split before 13 had the sizes as an attribute; before 18 no `num_outputs` existed and a split
  // without sizes meant equal parts, one per declared output.
  t.push_back({.op_type = "Split", .below = 18, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 ints_to_input(n, ctx, "split", 1);
                 bool sized = n.inputs.size() > 1 && n.inputs[1].defined();
                 if (!sized && !n.attrs.has("num_outputs")) n.attrs.set_int("num_outputs", int64_t(n.num_outputs));
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "TopK", .below = 10, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 if (n.attrs.has("k")) {
                   int64_t k = n.attrs.get_int("k");
                   n.attrs = without(n.attrs, "k");
                   set_input(n, 1, ctx.constant("k", NDArray::from(std::vector<int64_t>{k}, {1})));
                 }
                 return std::vector<graph::Value>{};
               }});
  // Upsample (deprecated in 10): scales was an attribute before 9, then input 1; Resize takes
  // (X, roi, scales).
  t.push_back({.op_type = "Upsample", .below = always, .becomes = "Resize",
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 n.op_type = "Resize";
                 resize_10_attrs(n);
                 if (n.attrs.has("scales")) {
                   std::vector<double> s = n.attrs.get_floats("scales");
                   n.attrs = without(n.attrs, "scales");
                   std::vector<float> f(s.begin(), s.end());
                   set_input(n, 1, ctx.constant("scales", NDArray::from(f, {int64_t(f.size())})));
                 }
                 if (n.inputs.size() > 1) n.inputs = {n.inputs[0], graph::Value{}, n.inputs[1]};
                 return std::vector<graph::Value>{};
               }});
  return t;
}

// Every op type's steps, oldest first (rows with the same `below` keep their table order).
std::map<std::string, std::vector<VersionAdapter>> make_index() {
  std::map<std::string, std::vector<VersionAdapter>> index;
  for (auto* era : {legacy_adapters, later_adapters, composite_ops, constant_ops, domain_ops})
    for (VersionAdapter& a : era()) index[a.op_type].push_back(std::move(a));
  for (auto& [op, steps] : index)
    std::stable_sort(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.below < b.below; });
  return index;
}

}  // namespace

std::vector<const VersionAdapter*> find_adapters(const std::string& op_type, int64_t opset) {
  static const std::map<std::string, std::vector<VersionAdapter>> index = make_index();
  std::vector<const VersionAdapter*> out;
  if (auto it = index.find(op_type); it != index.end())
    for (auto& a : it->second)
      if (opset < a.below) out.push_back(&a);
  return out;
}

std::string adapted_op_type(const std::string& op_type, const std::vector<const VersionAdapter*>& steps) {
  std::string out = op_type;
  for (auto* a : steps)
    if (!a->becomes.empty()) out = a->becomes;
  return out;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE

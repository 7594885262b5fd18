// The version steps out of ONNX's first opsets (1 to 6, 2017): each row takes a node to the
// version its `below` names, at most 7; adapters.cpp's rows take it on from there. Families
// first, then one row per operator, by name.
//
// Steps that need no rewrite have no row: AveragePool 7 added count_include_pad (default 0, the
// old behaviour), Split 2 gave axis the default of 0 that nnvm's Split assumes, and the other
// version-6 changes only widened the types an op accepts.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "adapters.hpp"
#include "nnvm/ops/broadcast/broadcast.hpp"
#include "tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

const ::onnx::AttributeProto* attribute(const ::onnx::NodeProto& node, const std::string& name) {
  for (auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool one_element(const std::vector<ir::Expr>& shape) {
  return std::all_of(shape.begin(), shape.end(), [](auto& e) { return ir::is_const_int(ir::simplify(e), 1); });
}

// Appends `count` extents of 1 to input `position` (Unsqueeze), so that numpy-style broadcasting
// aligns its last axis `count` axes before the other input's last.
void pad_right(NodeBuild& n, BuildContext& ctx, size_t position, size_t count) {
  size_t rank = ctx.type(n.inputs[position]).shape.size();
  std::vector<int64_t> axes;
  for (size_t k = 0; k < count; ++k) axes.push_back(int64_t(rank + k));
  graph::Value axes_value = ctx.constant("axes", NDArray::from(axes, {int64_t(count)}));
  n.inputs[position] = ctx.op("Unsqueeze", {n.inputs[position], axes_value}, {}, "align").at(0);
}

// Before 7 the binary ops broadcast only with broadcast = 1: then B (of rank at most A's) lines up
// with A's axes from `axis` on (default: B's last axis with A's last, as numpy-style broadcasting
// also does), or holds one element; without it both shapes are equal. From 7 on they broadcast
// numpy-style, so a B that `axis` places before A's last axes gets trailing extents of 1.
VersionAdapter legacy_broadcast(std::string op) {
  return {.op_type = op, .below = 7, .rewrite = [op](NodeBuild& n, BuildContext& ctx) {
            bool broadcast = n.attrs.get_int("broadcast", 0) != 0;
            std::optional<int64_t> axis;
            if (n.attrs.has("axis")) axis = n.attrs.get_int("axis");
            n.attrs = without(without(n.attrs, "broadcast"), "axis");
            if (!broadcast) {
              require_equal_shapes(n, ctx, op + " before opset 7 without broadcast = 1 takes inputs of one shape");
              return std::vector<graph::Value>{};
            }
            auto rank_a = int64_t(ctx.type(n.inputs.at(0)).shape.size());
            std::vector<ir::Expr> b = ctx.type(n.inputs.at(1)).shape;
            auto rank_b = int64_t(b.size());
            if (rank_b > rank_a)
              throw UserError("nnvm.onnx.shape", str_cat(op, " before opset 7 broadcasts B to the shape of A, but B ",
                                                         ops::detail::shape_string(b), " has more axes than A (",
                                                         rank_a, ")"));
            if (!axis) return std::vector<graph::Value>{};
            int64_t start = *axis < 0 ? *axis + rank_a : *axis;
            if (start < 0 || start + rank_b > rank_a)
              throw UserError("nnvm.onnx.attribute",
                              str_cat("axis ", *axis, " does not place B ", ops::detail::shape_string(b),
                                      " within the ", rank_a, " axes of A"),
                              {"attribute axis"});
            if (start + rank_b < rank_a && !one_element(b)) pad_right(n, ctx, 1, size_t(rank_a - start - rank_b));
            return std::vector<graph::Value>{};
          }};
}

// Before 7, is_test = 1 asked for inference; 7 dropped the flag. nnvm computes inference only, so
// an explicit is_test = 0 (training) is refused, as ONNX's own version converter does.
VersionAdapter inference_only(std::string op) {
  VersionAdapter a = dropping(op, 7, {"is_test"});
  a.unsupported = [op](const ::onnx::NodeProto& node) {
    return refuse_int(node, "is_test", 0, op + " before opset 7 with is_test = 0 (training) is not supported");
  };
  return a;
}

// Version 1 of the Lp pools took p as a float; 2 made it an integer, which is what nnvm takes.
VersionAdapter integer_p(std::string op) {
  return {.op_type = op, .below = 2,
          .unsupported =
              [op](const ::onnx::NodeProto& node) -> std::string {
                const ::onnx::AttributeProto* p = attribute(node, "p");
                if (!p || !p->has_f() || (p->f() == std::floor(p->f()) && std::abs(p->f()) < 1e9)) return "";
                return str_cat(op, " before opset 2 with p = ", p->f(), " is not supported (only integer p is)");
              },
          .rewrite = [](NodeBuild& n, BuildContext&) {
            if (n.attrs.has("p")) n.attrs.set_int("p", int64_t(n.attrs.get_float("p")));
            return std::vector<graph::Value>{};
          }};
}

// Cast before 6 named its target type ("FLOAT"); the code it names, or nullopt.
std::optional<int64_t> legacy_type_code(std::string name) {
  for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
  ::onnx::TensorProto_DataType code;
  if (!::onnx::TensorProto_DataType_Parse(name, &code) || code == ::onnx::TensorProto::UNDEFINED) return std::nullopt;
  return code;
}

// The one number held by a constant input of Tile-1 (`what`), as an integer.
int64_t constant_count(BuildContext& ctx, const graph::Value& v, const std::string& what) {
  const NDArray* data = ctx.data(v);
  if (!data)
    throw UserError("nnvm.onnx.unsupported", str_cat("Tile before opset 6 needs a constant ", what,
                                                     " (nnvm repeats by counts known when compiling)"));
  if (data->numel() != 1)
    throw UserError("nnvm.onnx.shape", str_cat("Tile's ", what, " holds ", data->numel(), " values, not one"));
  ops::AttrValue value = values_as_attr(*data);
  if (auto* ints = std::get_if<std::vector<int64_t>>(&value)) return ints->front();
  double f = std::get<std::vector<double>>(value).front();
  if (f != std::floor(f) || std::abs(f) > 1e15)
    throw UserError("nnvm.onnx.shape", str_cat("Tile's ", what, " is ", f, ", not an integer"));
  return int64_t(f);
}

}  // namespace

std::vector<VersionAdapter> legacy_adapters() {
  std::vector<VersionAdapter> t;
  // Version 1 of these ops carried `consumed_inputs`, a hint for running in place that version 6
  // dropped (Reshape's row below drops it at 5).
  for (const char* op : {"Abs", "Add", "BatchNormalization", "Ceil", "Clip", "Div", "Dropout", "Elu", "Exp", "Floor",
                         "HardSigmoid", "InstanceNormalization", "LeakyRelu", "Log", "Max", "Mean", "Min", "Mul", "Neg",
                         "PRelu", "Reciprocal", "Relu", "Selu", "Sigmoid", "Sqrt", "Sub", "Sum", "Tanh"})
    t.push_back(dropping(op, 6, {"consumed_inputs"}));
  for (const char* op : {"Add", "And", "Div", "Equal", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor"})
    t.push_back(legacy_broadcast(op));
  for (const char* op : {"BatchNormalization", "Dropout"}) t.push_back(inference_only(op));
  for (const char* op : {"GlobalLpPool", "LpPool"}) t.push_back(integer_p(op));
  t.push_back({.op_type = "Cast", .below = 6,
               .unsupported =
                   [](const ::onnx::NodeProto& node) -> std::string {
                     const ::onnx::AttributeProto* to = attribute(node, "to");
                     if (!to || !to->has_s()) return "";
                     std::optional<int64_t> code = legacy_type_code(to->s());
                     if (!code) return str_cat("Cast to '", to->s(), "', which is no TensorProto data type name");
                     if (std::string why = unsupported_dtype(*code); !why.empty()) return "Cast to " + why;
                     return "";
                   },
               .rewrite = [](NodeBuild& n, BuildContext&) {
                 if (auto* to = n.attrs.find("to"); to && std::holds_alternative<std::string>(*to)) {
                   std::optional<int64_t> code = legacy_type_code(std::get<std::string>(*to));
                   if (!code)
                     throw UserError("nnvm.onnx.attribute",
                                     str_cat("'", std::get<std::string>(*to), "' is no TensorProto data type name"),
                                     {"attribute to"});
                   n.attrs.set_int("to", *code);
                 }
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Concat", .below = 4, .rewrite = [](NodeBuild& n, BuildContext&) {
                 if (!n.attrs.has("axis")) n.attrs.set_int("axis", 1);
                 return std::vector<graph::Value>{};
               }});
  // Before 7 `broadcast` = 1 let C stretch to (M, N); without it C is (M, N). 7 always broadcasts.
  t.push_back({.op_type = "Gemm", .below = 7, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 bool broadcast = n.attrs.get_int("broadcast", 0) != 0;
                 n.attrs = without(n.attrs, "broadcast");
                 if (broadcast || n.inputs.size() < 3 || !n.inputs[2].defined()) return std::vector<graph::Value>{};
                 std::vector<ir::Expr> a = ctx.type(n.inputs[0]).shape, b = ctx.type(n.inputs[1]).shape,
                                       c = ctx.type(n.inputs[2]).shape;
                 if (a.size() != 2 || b.size() != 2) return std::vector<graph::Value>{};  // the op refuses them
                 ir::Expr m = a[n.attrs.get_int("transA", 0) ? 1 : 0], cols = b[n.attrs.get_int("transB", 0) ? 0 : 1];
                 std::vector<ir::Expr> mn{m, cols};
                 if (c.size() != 2 || !ops::same_extent(c[0], mn[0]) || !ops::same_extent(c[1], mn[1]))
                   throw UserError("nnvm.onnx.shape",
                                   str_cat("Gemm before opset 7 without broadcast = 1 takes C of shape (M, N) = ",
                                           ops::detail::shape_string(mn), ", not ", ops::detail::shape_string(c)));
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Pad", .below = 2, .rewrite = [](NodeBuild& n, BuildContext&) {
                 if (n.attrs.has("paddings")) {
                   n.attrs.set_ints("pads", n.attrs.get_ints("paddings"));
                   n.attrs = without(n.attrs, "paddings");
                 }
                 return std::vector<graph::Value>{};
               }});
  // Before 7 a slope of C values applied per channel (axis 1, as in Caffe2); 7 broadcasts it
  // numpy-style, so it gets trailing extents of 1.
  t.push_back({.op_type = "PRelu", .below = 7, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 size_t rank = ctx.type(n.inputs.at(0)).shape.size();
                 std::vector<ir::Expr> slope = ctx.type(n.inputs.at(1)).shape;
                 if (slope.size() == 1 && rank > 2 && !one_element(slope)) pad_right(n, ctx, 1, rank - 2);
                 return std::vector<graph::Value>{};
               }});
  t.push_back({.op_type = "Reshape", .below = 5, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 n.attrs = without(n.attrs, "consumed_inputs");
                 ints_to_input(n, ctx, "shape", 1);
                 return std::vector<graph::Value>{};
               }});
  // Version 1's defaults were the constants rounded to 5 digits.
  t.push_back({.op_type = "Selu", .below = 6, .rewrite = [](NodeBuild& n, BuildContext&) {
                 if (!n.attrs.has("alpha")) n.attrs.set_float("alpha", double(1.6732f));
                 if (!n.attrs.has("gamma")) n.attrs.set_float("gamma", double(1.0507f));
                 return std::vector<graph::Value>{};
               }});
  // Version 1 repeated along one axis: (input, tiles, axis) with one number each; 6 takes a count
  // per axis.
  t.push_back({.op_type = "Tile", .below = 6, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 if (n.inputs.size() != 3) return std::vector<graph::Value>{};  // the op refuses it
                 auto rank = int64_t(ctx.type(n.inputs[0]).shape.size());
                 int64_t tiles = constant_count(ctx, n.inputs[1], "tiles");
                 int64_t axis = constant_count(ctx, n.inputs[2], "axis");
                 if (axis < -rank || axis >= rank)
                   throw UserError("nnvm.onnx.shape",
                                   str_cat("Tile's axis is ", axis, " but the input has rank ", rank));
                 std::vector<int64_t> repeats(size_t(rank), 1);
                 repeats[size_t(axis < 0 ? axis + rank : axis)] = tiles;
                 n.inputs = {n.inputs[0], ctx.constant("repeats", NDArray::from(repeats, {rank}))};
                 return std::vector<graph::Value>{};
               }});
  // Version 1 scaled the last two axes of an (N, C, H, W) input; 7 takes a scale per axis and
  // calls bilinear "linear".
  t.push_back({.op_type = "Upsample", .below = 7, .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 size_t rank = ctx.type(n.inputs.at(0)).shape.size();
                 if (rank != 4)
                   throw UserError("nnvm.onnx.shape",
                                   str_cat("Upsample before opset 7 takes an (N, C, H, W) input, not rank ", rank));
                 double h = n.attrs.get_float("height_scale"), w = n.attrs.get_float("width_scale");
                 n.attrs = without(without(n.attrs, "height_scale"), "width_scale");
                 n.attrs.set_floats("scales", {1.0, 1.0, h, w});
                 if (n.attrs.get_string("mode", "nearest") == "bilinear") n.attrs.set_string("mode", "linear");
                 return std::vector<graph::Value>{};
               }});
  return t;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE

// group_norm: ONNX GroupNormalization (opset 21 meaning: scale and bias per channel). The C
// channels of X (N, C, D1, ...) form num_groups groups of C / num_groups consecutive channels;
// each (n, group) is normalized over its channels and spatial axes, with statistics in
// stash_type (default float32): Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c].
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor group_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias, int64_t groups,
                             double epsilon, DataType st, const std::string& name = "group_norm") {
  check_rank(x, "X", 2, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "scale");
  check_norm_float(bias, "bias");
  check_channel_param(scale, "scale", x.shape()[1]);
  check_channel_param(bias, "bias", x.shape()[1]);
  std::optional<int64_t> c = ir::simplified_const_int(x.shape()[1]);
  if (!c) throw UserError("nnvm.ops.input_shape", "input X needs a constant channel count (axis 1)", {"input X"});
  if (groups <= 0 || *c % groups != 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'num_groups' is ", groups, " but must be positive and divide the ", *c,
                            " channels of X"),
                    {"attribute num_groups"});
  int64_t per = *c / groups;
  // Statistics over (channel in group, spatial...): the view X as (N, G, C/G, D1, ...).
  std::vector<ir::Expr> view = {x.shape()[0], ir::Expr(groups), ir::Expr(per)};
  view.insert(view.end(), x.shape().begin() + 2, x.shape().end());
  std::vector<bool> reduced(view.size(), true);
  reduced[0] = reduced[1] = false;
  auto read_view = [&](const std::vector<ir::Expr>& i) {
    std::vector<ir::Expr> idx = {i[0], i[1] * ir::Expr(per) + i[2]};
    idx.insert(idx.end(), i.begin() + 3, i.end());
    return ir::cast(st, x(idx));
  };
  te::Tensor mean = mean_over(view, reduced, st, read_view, name + "_mean");
  te::Tensor var = mean_over(
      view, reduced, st,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> m(view.size(), ir::Expr(int64_t(0)));
        m[0] = i[0];
        m[1] = i[1];
        ir::Expr dev = read_view(i) - mean(m);
        return dev * dev;
      },
      name + "_var");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> m(view.size(), ir::Expr(int64_t(0)));
        m[0] = v[0];
        m[1] = v[1] / ir::Expr(per);
        ir::Expr inv = ir::make_const(st, 1.0) / ir::call(ir::CallOp::sqrt, var(m) + ir::make_const(st, epsilon));
        ir::Expr n = (ir::cast(st, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(m)) * inv;
        return ir::cast(t, ir::cast(ct, n) * ir::cast(ct, scale(v[1])) + ir::cast(ct, bias(v[1])));
      },
      name);
}

inline OpDef group_norm_def() {
  return OpDef{
      .name = "group_norm",
      .importer_names = {"onnx:GroupNormalization"},
      .input_names = {"X", "scale", "bias"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{group_norm(in[0], in[1], in[2], attrs.get_int("num_groups"),
                                                      attrs.get_float("epsilon", 1e-5), stash_dtype(attrs))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "normalize X over channel groups (attribute num_groups) and spatial axes, then * scale[c] + bias[c]",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE

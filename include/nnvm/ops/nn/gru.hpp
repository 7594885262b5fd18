// gru: ONNX GRU (opsets 7, 14, 22), gates z, r, h in that order along W's, R's and B's rows:
//   z = f(clip(X_t Wz^T + H_{t-1} Rz^T + Wbz + Rbz))                       f default Sigmoid
//   r = f(clip(X_t Wr^T + H_{t-1} Rr^T + Wbr + Rbr))
//   h = g(clip(X_t Wh^T + (r . H_{t-1}) Rh^T + Rbh + Wbh))                 g default Tanh
//   h = g(clip(X_t Wh^T + r . (H_{t-1} Rh^T + Rbh) + Wbh))                 linear_before_reset
//   H_t = (1 - z) . h + z . H_{t-1}
// Inputs X, W, R, B, sequence_lens, initial_h; outputs Y, Y_h. Shapes, layouts, directions,
// sequence_lens and the unrolled time loop: recurrent_common.hpp.
#pragma once

#include "nnvm/ops/nn/recurrent_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Stages: "<name>_xw", "<name>_h_init", then per step s "<name>_rec<s>" (H_{s-1} R^T over the
// z and r rows, and the h rows with linear_before_reset), without linear_before_reset
// "<name>_rh<s>" (r . H_{s-1}) and "<name>_rech<s>" ((r . H_{s-1}) Rh^T), then "<name>_h<s>";
// outputs "<name>_Y" and "<name>_Y_h".
inline std::vector<te::Tensor> gru(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                   const std::string& name = "gru") {
  if (attrs.has("input_forget")) recurrent_detail::bad_attr("input_forget", "is LSTM's; GRU has none");
  Recurrence r(in, attrs, 3, {"Sigmoid", "Tanh"}, name);
  const bool lbr = r.p.linear_before_reset;
  const ir::Expr H = r.H;
  te::Tensor h = r.initial_state(r.initial_h, name + "_h_init");
  std::vector<te::Tensor> hs;
  for (int64_t s = 0; s < r.T; ++s) {
    ir::Expr step(s);
    te::Tensor rec = r.recurrent_product(h, 0, lbr ? 3 : 2, str_cat(name, "_rec", s));
    auto gate = [&](int64_t g, const ir::Expr& d, const ir::Expr& b, const ir::Expr& j) {
      ir::Expr row = j + ir::Expr(g) * H;
      return r.act(0, d, r.clip(r.xw(d, step, b, row) + rec(d, b, row) + r.bias(d, row)));
    };
    te::Tensor rech;
    if (!lbr) {
      te::Tensor rh = te::compute(
          r.state_shape(),
          [&](const std::vector<ir::Var>& v) { return gate(1, v[0], v[1], v[2]) * h(v[0], v[1], v[2]); },
          str_cat(name, "_rh", s));
      rech = r.recurrent_product(rh, 2, 1, str_cat(name, "_rech", s));
    }
    h = te::compute(
        r.state_shape(),
        [&](const std::vector<ir::Var>& v) {
          ir::Expr d = v[0], b = v[1], j = v[2], row = j + H * int64_t(2);
          ir::Expr pre =
              lbr ? r.xw(d, step, b, row) + gate(1, d, b, j) * (rec(d, b, row) + r.bias_r(d, row)) + r.bias_w(d, row)
                  : r.xw(d, step, b, row) + rech(d, b, j) + r.bias(d, row);
          ir::Expr hh = r.act(1, d, r.clip(pre)), z = gate(0, d, b, j), prev = h(d, b, j);
          return r.keep(d, s, b, (ir::make_const(r.ct, 1.0) - z) * hh + z * prev, prev);
        },
        str_cat(name, "_h", s));
    hs.push_back(h);
  }
  return {r.output_y(hs), r.output_state(h, name + "_Y_h")};
}

inline OpDef gru_def() {
  return OpDef{
      .name = "gru",
      .importer_names = {"onnx:GRU"},
      .input_names = {"X", "W", "R", "B", "sequence_lens", "initial_h"},
      .optional_inputs = 3,
      .pattern = OpPattern::opaque,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs& attrs) { return gru(in, attrs); },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { schedule_stages(s, out, t); },
      .doc =
          "GRU (gates z, r, h; linear_before_reset), any direction, layout 0/1, sequence_lens; the time loop "
          "unrolled (T <= 512); outputs Y, Y_h",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE

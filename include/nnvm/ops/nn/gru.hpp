// gru: ONNX GRU (opsets 7, 14, 22), gates z, r, h in that order along W's, R's and B's rows:
//   z = f(clip(X_t Wz^T + H_{t-1} Rz^T + Wbz + Rbz))                       f default Sigmoid
//   r = f(clip(X_t Wr^T + H_{t-1} Rr^T + Wbr + Rbr))
//   h = g(clip(X_t Wh^T + (r . H_{t-1}) Rh^T + Rbh + Wbh))                 g default Tanh
//   h = g(clip(X_t Wh^T + r . (H_{t-1} Rh^T + Rbh) + Wbh))                 linear_before_reset
//   H_t = (1 - z) . h + z . H_{t-1}
// Inputs X, W, R, B, sequence_lens, initial_h; outputs Y, Y_h. Shapes, layouts, directions,
// sequence_lens and the time loop (one te::scan): recurrent_common.hpp.
#pragma once

#include "nnvm/ops/nn/recurrent_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Stages: "<name>_xw" (X W^T for all steps), "<name>_h_init" (row 0), per step "<name>_rec"
// (h_{u-1} R^T over the z and r rows, and the h rows with linear_before_reset), without
// linear_before_reset "<name>_rh" (r . h_{u-1}) and "<name>_rech" ((r . h_{u-1}) Rh^T), then
// "<name>_h_next"; the scan "<name>_h" [T + 1, D, N, H]; outputs "<name>_Y" and "<name>_Y_h".
inline std::vector<te::Tensor> gru(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                   const std::string& name = "gru") {
  if (attrs.has("input_forget")) recurrent_detail::bad_attr("input_forget", "is LSTM's; GRU has none");
  Recurrence r(in, attrs, 3, {"Sigmoid", "Tanh"}, name);
  const bool lbr = r.p.linear_before_reset;
  const ir::Expr H = r.H;
  te::Tensor h = r.state(name + "_h.state");
  te::Tensor rec = r.recurrent_product(h, 1, 0, lbr ? 3 : 2, name + "_rec");
  auto gate = [&](int64_t g, const ir::Expr& u, const ir::Expr& d, const ir::Expr& b, const ir::Expr& j) {
    ir::Expr row = j + ir::Expr(g) * H;
    return r.act(0, d, r.clip(r.xw_at(d, u, b, row) + rec(u, d, b, row) + r.bias(d, row)));
  };
  te::Tensor rech;
  if (!lbr) {
    te::Tensor rh = te::compute(
        r.scan_shape(H),
        [&](const std::vector<ir::Var>& v) {
          return gate(1, v[0], v[1], v[2], v[3]) * h(v[0] - int64_t(1), v[1], v[2], v[3]);
        },
        name + "_rh");
    rech = r.recurrent_product(rh, 0, 2, 1, name + "_rech");
  }
  te::Tensor next = te::compute(
      r.scan_shape(H),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr u = v[0], d = v[1], b = v[2], j = v[3], row = j + H * int64_t(2);
        ir::Expr pre = lbr ? r.xw_at(d, u, b, row) + gate(1, u, d, b, j) * (rec(u, d, b, row) + r.bias_r(d, row)) +
                                 r.bias_w(d, row)
                           : r.xw_at(d, u, b, row) + rech(u, d, b, j) + r.bias(d, row);
        ir::Expr hh = r.act(1, d, r.clip(pre)), z = gate(0, u, d, b, j), prev = h(u - int64_t(1), d, b, j);
        return r.keep(d, u, b, (ir::make_const(r.ct, 1.0) - z) * hh + z * prev, prev);
      },
      name + "_h_next");
  te::Tensor hs = te::scan(r.initial_state(r.initial_h, name + "_h_init"), next, h, name + "_h");
  return {r.output_y(hs), r.output_state(hs, name + "_Y_h")};
}

inline OpDef gru_def() {
  return OpDef{
      .name = "gru",
      .importer_names = {"onnx:GRU"},
      .input_names = {"X", "W", "R", "B", "sequence_lens", "initial_h"},
      .optional_inputs = 3,
      .pattern = OpPattern::opaque,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs& attrs) { return gru(in, attrs); },
      .cpu_schedule = schedule_recurrent,
      .doc =
          "GRU (gates z, r, h; linear_before_reset), any direction, layout 0/1, sequence_lens; the time loop "
          "one scan; outputs Y, Y_h",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE

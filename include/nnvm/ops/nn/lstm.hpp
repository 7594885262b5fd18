// lstm: ONNX LSTM (opsets 7, 14, 22), gates i, o, f, c in that order along W's, R's and B's rows,
// peepholes P = [Pi, Po, Pf]:
//   i = f(clip(X_t Wi^T + H_{t-1} Ri^T + Pi . C_{t-1} + Wbi + Rbi))        f default Sigmoid
//   f = f(clip(X_t Wf^T + H_{t-1} Rf^T + Pf . C_{t-1} + Wbf + Rbf))        1 - i with input_forget
//   c = g(clip(X_t Wc^T + H_{t-1} Rc^T + Wbc + Rbc))                       g default Tanh
//   C_t = f . C_{t-1} + i . c
//   o = f(clip(X_t Wo^T + H_{t-1} Ro^T + Po . C_t + Wbo + Rbo))
//   H_t = o . h(C_t)                                                       h default Tanh
// Inputs X, W, R, B, sequence_lens, initial_h, initial_c, P; outputs Y, Y_h, Y_c. Shapes,
// layouts, directions, sequence_lens and the time loop (one te::scan of h and c):
// recurrent_common.hpp.
#pragma once

#include "nnvm/ops/nn/recurrent_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Stages: "<name>_xw" (X W^T for all steps), "<name>_h_init" and "<name>_c_init" (row 0), per
// step "<name>_rec" (h_{u-1} R^T), "<name>_c_next" (C_u) and "<name>_h_next" (H_u, which reads
// C_u); one scan of the states h and c, "<name>_h" and "<name>_c" [T + 1, D, N, H]; outputs
// "<name>_Y", "<name>_Y_h" and "<name>_Y_c".
inline std::vector<te::Tensor> lstm(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                    const std::string& name = "lstm") {
  if (attrs.has("linear_before_reset")) recurrent_detail::bad_attr("linear_before_reset", "is GRU's; LSTM has none");
  Recurrence r(in, attrs, 4, {"Sigmoid", "Tanh", "Tanh"}, name);
  te::Tensor initial_c = in.size() > 6 ? in[6] : te::Tensor(), P = in.size() > 7 ? in[7] : te::Tensor();
  r.check_state(initial_c, "initial_c");
  if (P.defined()) {
    check_same_dtype(r.X, "X", P, "P");
    if (P.rank() != 2 || !same_extent(P.shape()[0], ir::Expr(r.D)) ||
        !same_extent(P.shape()[1], ir::simplify(r.H * int64_t(3))))
      recurrent_detail::bad_shape("P", str_cat("(tensor ", P.name(), ") must have shape [", r.D, ", ",
                                               ir::to_string(ir::simplify(r.H * int64_t(3))), "]"));
  }
  const ir::Expr H = r.H;
  // Peephole weight of gate k (0 i, 1 o, 2 f) times the cell state c.
  auto peep = [&](int64_t k, const ir::Expr& d, const ir::Expr& j, const ir::Expr& c) {
    return P.defined() ? ir::cast(r.ct, P(d, j + ir::Expr(k) * H)) * c : ir::make_zero(r.ct);
  };
  te::Tensor h = r.state(name + "_h.state"), c = r.state(name + "_c.state");
  te::Tensor rec = r.recurrent_product(h, 1, 0, 4, name + "_rec");
  // The pre-activation of gate g (0 i, 1 o, 2 f, 3 c), before peepholes.
  auto pre = [&](int64_t g, const ir::Expr& u, const ir::Expr& d, const ir::Expr& b, const ir::Expr& j) {
    ir::Expr row = j + ir::Expr(g) * H;
    return r.xw_at(d, u, b, row) + rec(u, d, b, row) + r.bias(d, row);
  };
  te::Tensor cn = te::compute(
      r.scan_shape(H),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr u = v[0], d = v[1], b = v[2], j = v[3], prev = c(u - int64_t(1), d, b, j);
        ir::Expr i = r.act(0, d, r.clip(pre(0, u, d, b, j) + peep(0, d, j, prev)));
        ir::Expr f = r.p.input_forget ? ir::make_const(r.ct, 1.0) - i
                                      : r.act(0, d, r.clip(pre(2, u, d, b, j) + peep(2, d, j, prev)));
        ir::Expr g = r.act(1, d, r.clip(pre(3, u, d, b, j)));
        return r.keep(d, u, b, f * prev + i * g, prev);
      },
      name + "_c_next");
  te::Tensor hn = te::compute(
      r.scan_shape(H),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr u = v[0], d = v[1], b = v[2], j = v[3], ct = cn(u, d, b, j);
        ir::Expr o = r.act(0, d, r.clip(pre(1, u, d, b, j) + peep(1, d, j, ct)));
        return r.keep(d, u, b, o * r.act(2, d, ct), h(u - int64_t(1), d, b, j));
      },
      name + "_h_next");
  std::vector<te::Tensor> hc = te::scan({r.initial_state(r.initial_h, name + "_h_init"), r.initial_state(initial_c, name + "_c_init")},
                                        {hn, cn}, {h, c}, {name + "_h", name + "_c"});
  return {r.output_y(hc[0]), r.output_state(hc[0], name + "_Y_h"), r.output_state(hc[1], name + "_Y_c")};
}

inline OpDef lstm_def() {
  return OpDef{
      .name = "lstm",
      .importer_names = {"onnx:LSTM"},
      .input_names = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"},
      .optional_inputs = 5,
      .pattern = OpPattern::opaque,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs& attrs) { return lstm(in, attrs); },
      .cpu_schedule = schedule_recurrent,
      .doc =
          "LSTM (gates i, o, f, c; peepholes, input_forget), any direction, layout 0/1, sequence_lens; the time "
          "loop one scan of h and c; outputs Y, Y_h, Y_c",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE

// rnn: ONNX RNN (opsets 7, 14, 22), the simple (Elman) recurrence, per direction:
//   H_t = f(clip(X_t W^T + H_{t-1} R^T + Wb + Rb))        f default Tanh
// Inputs X, W, R, B, sequence_lens, initial_h; outputs Y, Y_h. Shapes, layouts, directions,
// sequence_lens and the time loop (one te::scan): recurrent_common.hpp.
#pragma once

#include "nnvm/ops/nn/recurrent_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Stages: "<name>_xw" (X W^T for all steps), "<name>_h_init" (row 0), per step "<name>_rec"
// (h_{u-1} R^T) and "<name>_h_next"; the scan "<name>_h" [T + 1, D, N, H]; outputs "<name>_Y"
// and "<name>_Y_h".
inline std::vector<te::Tensor> rnn(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                   const std::string& name = "rnn") {
  if (attrs.has("linear_before_reset")) recurrent_detail::bad_attr("linear_before_reset", "is GRU's; RNN has none");
  if (attrs.has("input_forget")) recurrent_detail::bad_attr("input_forget", "is LSTM's; RNN has none");
  Recurrence r(in, attrs, 1, {"Tanh"}, name);
  te::Tensor h = r.state(name + "_h.state");
  te::Tensor rec = r.recurrent_product(h, 1, 0, 1, name + "_rec");
  te::Tensor next = te::compute(
      r.scan_shape(r.H),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr u = v[0], d = v[1], b = v[2], j = v[3];
        ir::Expr pre = r.xw_at(d, u, b, j) + rec(u, d, b, j) + r.bias(d, j);
        return r.keep(d, u, b, r.act(0, d, r.clip(pre)), h(u - int64_t(1), d, b, j));
      },
      name + "_h_next");
  te::Tensor hs = te::scan(r.initial_state(r.initial_h, name + "_h_init"), next, h, name + "_h");
  return {r.output_y(hs), r.output_state(hs, name + "_Y_h")};
}

inline OpDef rnn_def() {
  return OpDef{
      .name = "rnn",
      .importer_names = {"onnx:RNN"},
      .input_names = {"X", "W", "R", "B", "sequence_lens", "initial_h"},
      .optional_inputs = 3,
      .pattern = OpPattern::opaque,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs& attrs) { return rnn(in, attrs); },
      .cpu_schedule = schedule_recurrent,
      .doc =
          "Elman RNN H_t = f(X_t W^T + H_{t-1} R^T + b), any direction, layout 0/1, sequence_lens; the time loop "
          "one scan; outputs Y, Y_h",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE

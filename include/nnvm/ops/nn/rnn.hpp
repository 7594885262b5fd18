// rnn: ONNX RNN (opsets 7, 14, 22), the simple (Elman) recurrence, per direction:
//   H_t = f(clip(X_t W^T + H_{t-1} R^T + Wb + Rb))        f default Tanh
// Inputs X, W, R, B, sequence_lens, initial_h; outputs Y, Y_h. Shapes, layouts, directions,
// sequence_lens and the unrolled time loop: recurrent_common.hpp.
#pragma once

#include "nnvm/ops/nn/recurrent_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Stages: "<name>_xw", "<name>_h_init", then per step s "<name>_rec<s>" (H_{s-1} R^T) and
// "<name>_h<s>"; outputs "<name>_Y" and "<name>_Y_h".
inline std::vector<te::Tensor> rnn(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                   const std::string& name = "rnn") {
  if (attrs.has("linear_before_reset")) recurrent_detail::bad_attr("linear_before_reset", "is GRU's; RNN has none");
  if (attrs.has("input_forget")) recurrent_detail::bad_attr("input_forget", "is LSTM's; RNN has none");
  Recurrence r(in, attrs, 1, {"Tanh"}, name);
  te::Tensor h = r.initial_state(r.initial_h, name + "_h_init");
  std::vector<te::Tensor> hs;
  for (int64_t s = 0; s < r.T; ++s) {
    te::Tensor rec = r.recurrent_product(h, 0, 1, str_cat(name, "_rec", s));
    h = te::compute(
        r.state_shape(),
        [&](const std::vector<ir::Var>& v) {
          ir::Expr d = v[0], b = v[1], j = v[2];
          ir::Expr pre = r.xw(d, ir::Expr(s), b, j) + rec(d, b, j) + r.bias(d, j);
          return r.keep(d, s, b, r.act(0, d, r.clip(pre)), h(d, b, j));
        },
        str_cat(name, "_h", s));
    hs.push_back(h);
  }
  return {r.output_y(hs), r.output_state(h, name + "_Y_h")};
}

inline OpDef rnn_def() {
  return OpDef{
      .name = "rnn",
      .importer_names = {"onnx:RNN"},
      .input_names = {"X", "W", "R", "B", "sequence_lens", "initial_h"},
      .optional_inputs = 3,
      .pattern = OpPattern::opaque,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs& attrs) { return rnn(in, attrs); },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { schedule_stages(s, out, t); },
      .doc =
          "Elman RNN H_t = f(X_t W^T + H_{t-1} R^T + b), any direction, layout 0/1, sequence_lens; the time loop "
          "unrolled (T <= 512); outputs Y, Y_h",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE

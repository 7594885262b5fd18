// Sequence layers: MultiHeadAttention, and the recurrent layers LSTM, GRU and SimpleRNN. The
// recurrent layers are unrolled over their static sequence length (nnvm's graph has no loop
// yet): the input projection of every step is one matmul, then each step is a small chain of
// ops on the previous step's state. Masks and initial states passed in are not supported.
#include <cmath>

#include "convert.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {


graph::Value transpose(LayerContext& c, const graph::Value& x, const std::vector<int64_t>& perm, const std::string& suffix) {
  return c.op("transpose", {x}, ops::Attrs().set_ints("perm", perm), suffix);
}

// Columns [begin, end) of a 2-D float32 array, or entries [begin, end) of a 1-D one.
NDArray columns(const LayerContext& c, const NDArray& a, int64_t begin, int64_t end) {
  if (a.dtype() != dtype::float32) c.unsupported("", "recurrent weights other than float32 are not supported");
  const auto s = a.shape();
  const int64_t rows = s.size() == 2 ? s[0] : 1, cols = s.back();
  if (end > cols) throw ImportError("nnvm.keras.weights", str_cat("a weight has ", cols, " columns; ", end, " are needed"), c.where());
  NDArray out(dtype::float32, s.size() == 2 ? std::vector<int64_t>{rows, end - begin} : std::vector<int64_t>{end - begin});
  auto src = a.values<float>();
  auto dst = out.values<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = begin; k < end; ++k) dst[size_t(r * (end - begin) + k - begin)] = src[size_t(r * cols + k)];
  return out;
}

// The gate slice [k * units, (k + 1) * units) of a (B, G) value.
graph::Value gate(LayerContext& c, const graph::Value& z, int64_t k, int64_t units, const std::string& suffix) {
  return c.op("slice", {z, c.int64s({k * units}, suffix + "_start"), c.int64s({(k + 1) * units}, suffix + "_end"),
                        c.int64s({1}, suffix + "_axis")},
              {}, suffix);
}

void refuse_masks_and_states(const LayerContext& c) {
  if (c.num_inputs() > 1 || c.tensor_kwarg("initial_state") || !c.kwarg("initial_state").is_null())
    c.unsupported("initial_state", "an initial state passed to a recurrent layer is not supported");
  if (c.tensor_kwarg("mask")) c.unsupported("mask", "masked sequences are not supported");
  if (c.flag("stateful", false)) c.unsupported("stateful", "stateful recurrent layers are not supported");
  if (c.flag("time_major", false)) c.unsupported("time_major", "time-major input is not supported");
}

// What every recurrent layer shares: the input (B, T, F), the per-step input projections
// x_t W + b (B, G) in processing order, and how the outputs are put together.
struct Unrolled {
  int64_t batch = 0, steps = 0, units = 0;
  std::vector<graph::Value> projected;  // per processed step
  std::vector<graph::Value> outputs;    // h after each processed step
};

Unrolled project(LayerContext& c, const NDArray& kernel, const graph::Value* bias, int64_t units) {
  refuse_masks_and_states(c);
  graph::Value x = c.input(0);
  std::vector<int64_t> shape = c.shape(x);
  if (shape.size() != 3) c.bad_attribute("inputs", "a recurrent layer needs a (batch, time, features) input");
  Unrolled u{shape[0], shape[1], units, {}, {}};
  if (u.steps == 0) c.bad_attribute("inputs", "the sequence is empty");
  graph::Value xw = c.op("matmul", {x, c.weight_constant(kernel, "kernel")}, {}, "input_projection");
  if (bias) xw = c.op("add", {xw, *bias}, {}, "input_bias");
  const bool backwards = c.flag("go_backwards", false);
  for (int64_t s = 0; s < u.steps; ++s) {
    const int64_t t = backwards ? u.steps - 1 - s : s;
    u.projected.push_back(c.op("gather", {xw, c.constant(NDArray::from(std::vector<int64_t>{t}, {}), str_cat("t", t))},
                               ops::Attrs().set_int("axis", 1), str_cat("x", s)));
  }
  return u;
}

graph::Value zeros(LayerContext& c, int64_t batch, int64_t units, const std::string& suffix) {
  NDArray z(dtype::float32, {batch, units});
  for (float& v : z.values<float>()) v = 0.0f;
  return c.constant(std::move(z), suffix);
}

// The layer's results: the sequence of states (B, T, units) in processing order, as Keras
// returns it (go_backwards keeps the reversed order), or the last state; then the final
// states when return_state asks for them.
Values results(LayerContext& c, const Unrolled& u, const std::vector<graph::Value>& final_states) {
  Values out;
  if (c.flag("return_sequences", false)) {
    Values steps;
    for (size_t s = 0; s < u.outputs.size(); ++s)
      steps.push_back(c.op("unsqueeze", {u.outputs[s], c.int64s({1}, str_cat("axis", s))}, {}, str_cat("h", s, "_seq")));
    out.push_back(c.op("concat", steps, ops::Attrs().set_int("axis", 1)));
  } else {
    out.push_back(u.outputs.back());
  }
  if (c.flag("return_state", false)) out.insert(out.end(), final_states.begin(), final_states.end());
  return out;
}

int64_t positive_units(const LayerContext& c) {
  const int64_t units = c.integer("units", 0);
  if (units <= 0) c.bad_attribute("units", "must be positive");
  return units;
}

// LSTM's and SimpleRNN's start: the cell's kernel, recurrent kernel and bias (one vector), the
// projected steps, and the recurrent kernel as a constant.
std::pair<Unrolled, graph::Value> start_recurrent(LayerContext& c) {
  const int64_t units = positive_units(c);
  const bool use_bias = c.flag("use_bias", true);
  auto w = c.weights(use_bias ? 3 : 2, {"cell"});
  graph::Value bias;
  if (use_bias) bias = c.weight_constant(w[2], "bias");
  return {project(c, w[0], use_bias ? &bias : nullptr, units), c.weight_constant(w[1], "recurrent_kernel")};
}

Values lstm(LayerContext& c) {
  auto [u, recurrent] = start_recurrent(c);
  const int64_t units = u.units;
  const std::string act = c.text("activation", "tanh"), rec = c.text("recurrent_activation", "sigmoid");
  graph::Value h = zeros(c, u.batch, units, "h0"), cell = zeros(c, u.batch, units, "c0");
  for (int64_t s = 0; s < u.steps; ++s) {
    const std::string p = str_cat("step", s, "/");
    graph::Value z = c.op("add", {u.projected[size_t(s)], c.op("matmul", {h, recurrent}, {}, p + "hu")}, {}, p + "z");
    graph::Value i = c.activation(gate(c, z, 0, units, p + "zi"), rec, p + "i");
    graph::Value f = c.activation(gate(c, z, 1, units, p + "zf"), rec, p + "f");
    graph::Value g = c.activation(gate(c, z, 2, units, p + "zc"), act, p + "g");
    graph::Value o = c.activation(gate(c, z, 3, units, p + "zo"), rec, p + "o");
    cell = c.op("add", {c.op("mul", {f, cell}, {}, p + "fc"), c.op("mul", {i, g}, {}, p + "ig")}, {}, p + "c");
    h = c.op("mul", {o, c.activation(cell, act, p + "act_c")}, {}, p + "h");
    u.outputs.push_back(h);
  }
  return results(c, u, {h, cell});
}

// GRU, Keras' gate order z, r, h. reset_after (Keras 3's default, cuDNN's form) applies the
// reset gate after the recurrent matmul and has separate input and recurrent biases.
Values gru(LayerContext& c) {
  const int64_t units = positive_units(c);
  const bool use_bias = c.flag("use_bias", true), reset_after = c.flag("reset_after", true);
  auto w = c.weights(use_bias ? 3 : 2, {"cell"});
  graph::Value input_bias, recurrent_bias;
  if (use_bias) {
    const NDArray& b = w[2];
    if (reset_after) {
      if (b.shape() != std::vector<int64_t>{2, 3 * units})
        throw ImportError("nnvm.keras.weights", "a reset_after GRU's bias must be (2, 3 * units)", c.where());
      NDArray flat(dtype::float32, {6 * units});
      std::copy(b.values<float>().begin(), b.values<float>().end(), flat.values<float>().begin());
      input_bias = c.weight_constant(columns(c, flat, 0, 3 * units), "input_bias");
      recurrent_bias = c.weight_constant(columns(c, flat, 3 * units, 6 * units), "recurrent_bias");
    } else {
      input_bias = c.weight_constant(b, "bias");
    }
  }
  Unrolled u = project(c, w[0], use_bias ? &input_bias : nullptr, units);
  const std::string act = c.text("activation", "tanh"), rec = c.text("recurrent_activation", "sigmoid");
  const NDArray& U = w[1];
  graph::Value u_all = c.weight_constant(U, "recurrent_kernel");
  graph::Value u_zr = c.weight_constant(columns(c, U, 0, 2 * units), "recurrent_kernel_zr");
  graph::Value u_h = c.weight_constant(columns(c, U, 2 * units, 3 * units), "recurrent_kernel_h");
  graph::Value h = zeros(c, u.batch, units, "h0");
  for (int64_t s = 0; s < u.steps; ++s) {
    const std::string p = str_cat("step", s, "/");
    const graph::Value& x = u.projected[size_t(s)];
    graph::Value hz, hr, hh;
    if (reset_after) {
      graph::Value hu = c.op("matmul", {h, u_all}, {}, p + "hu");
      if (use_bias) hu = c.op("add", {hu, recurrent_bias}, {}, p + "hu_bias");
      hz = gate(c, hu, 0, units, p + "hz");
      hr = gate(c, hu, 1, units, p + "hr");
      hh = gate(c, hu, 2, units, p + "hh");
    } else {
      graph::Value hu = c.op("matmul", {h, u_zr}, {}, p + "hu");
      hz = gate(c, hu, 0, units, p + "hz");
      hr = gate(c, hu, 1, units, p + "hr");
    }
    graph::Value z = c.activation(c.op("add", {gate(c, x, 0, units, p + "xz"), hz}, {}, p + "zsum"), rec, p + "z");
    graph::Value r = c.activation(c.op("add", {gate(c, x, 1, units, p + "xr"), hr}, {}, p + "rsum"), rec, p + "r");
    graph::Value candidate_in = reset_after ? c.op("mul", {r, hh}, {}, p + "rh")
                                            : c.op("matmul", {c.op("mul", {r, h}, {}, p + "rh_in"), u_h}, {}, p + "rh");
    graph::Value candidate =
        c.activation(c.op("add", {gate(c, x, 2, units, p + "xh"), candidate_in}, {}, p + "hsum"), act, p + "candidate");
    // h = z * h + (1 - z) * candidate = candidate + z * (h - candidate)
    h = c.op("add", {candidate, c.op("mul", {z, c.op("sub", {h, candidate}, {}, p + "diff")}, {}, p + "keep")}, {}, p + "h");
    u.outputs.push_back(h);
  }
  return results(c, u, {h});
}

Values simple_rnn(LayerContext& c) {
  auto [u, recurrent] = start_recurrent(c);
  const std::string act = c.text("activation", "tanh");
  graph::Value h = zeros(c, u.batch, u.units, "h0");
  for (int64_t s = 0; s < u.steps; ++s) {
    const std::string p = str_cat("step", s, "/");
    graph::Value z = c.op("add", {u.projected[size_t(s)], c.op("matmul", {h, recurrent}, {}, p + "hu")}, {}, p + "z");
    h = c.activation(z, act, p + "h");
    u.outputs.push_back(h);
  }
  return results(c, u, {h});
}

// MultiHeadAttention over axis 1 of (B, T, dim) inputs: per-head projections (Keras' einsum
// kernels (dim, heads, key_dim) as (dim, heads * key_dim) matmuls), softmax(q k^T / sqrt(key_dim)
// [+ causal mask]) v, and the output projection.
Values multi_head_attention(LayerContext& c) {
  const int64_t heads = c.integer("num_heads", 0), key_dim = c.integer("key_dim", 0);
  const int64_t value_dim = c.integer("value_dim", key_dim);
  if (heads <= 0 || key_dim <= 0 || value_dim <= 0) c.bad_attribute("num_heads", "heads and dims must be positive");
  if (c.flag("use_gate", false)) c.unsupported("use_gate", "gated attention is not supported");
  if (c.has("sliding_window")) c.unsupported("sliding_window", "sliding-window attention is not supported");
  if (c.has("attention_axes")) {
    std::vector<int64_t> axes = c.int_list("attention_axes");
    if (axes != std::vector<int64_t>{1} && axes != std::vector<int64_t>{-2})
      c.unsupported("attention_axes", "attention over axes other than the sequence axis of (B, T, dim) is not supported");
  }
  if (c.tensor_kwarg("attention_mask") || !c.kwarg("attention_mask").is_null())
    c.unsupported("attention_mask", "an attention mask passed to the layer is not supported");
  if (c.kwarg("return_attention_scores") == Json(true))
    c.unsupported("return_attention_scores", "returning the attention scores is not supported");
  const bool causal = c.kwarg("use_causal_mask") == Json(true);
  graph::Value query = c.input(0);
  graph::Value value = c.num_inputs() > 1 ? c.input(1) : (c.tensor_kwarg("value") ? *c.tensor_kwarg("value") : query);
  graph::Value key = c.num_inputs() > 2 ? c.input(2) : (c.tensor_kwarg("key") ? *c.tensor_kwarg("key") : value);
  std::vector<int64_t> qs = c.shape(query), vs = c.shape(value);
  if (qs.size() != 3 || vs.size() != 3 || c.shape(key).size() != 3)
    c.bad_attribute("inputs", "query, key and value must be (batch, time, dim)");
  const int64_t B = qs[0], T = qs[1], S = vs[1];
  const bool bias = c.flag("use_bias", true);
  const size_t per = bias ? 2 : 1;
  auto w = c.weights(4 * per, {"query_dense", "key_dense", "value_dense", "output_dense"});
  auto project = [&](const graph::Value& x, size_t k, int64_t dim, const char* name) {
    const std::string n = name;
    graph::Value kernel = c.reshape(c.weight_constant(w[k * per], n + "_kernel"), {-1, heads * dim}, n + "_kernel2d");
    graph::Value y = c.op("matmul", {x, kernel}, {}, n + "_proj");
    if (bias) y = c.op("add", {y, c.reshape(c.weight_constant(w[k * per + 1], n + "_bias"), {heads * dim}, n + "_bias1d")}, {}, n + "_biased");
    return c.reshape(y, {B, c.shape(x)[1], heads, dim}, n + "_heads");
  };
  graph::Value q = transpose(c, project(query, 0, key_dim, "query"), {0, 2, 1, 3}, "q");  // (B, H, T, K)
  graph::Value kt = transpose(c, project(key, 1, key_dim, "key"), {0, 2, 3, 1}, "kt");    // (B, H, K, S)
  graph::Value v = transpose(c, project(value, 2, value_dim, "value"), {0, 2, 1, 3}, "v");  // (B, H, S, V)
  q = c.op("mul", {q, c.scalar_like(1.0 / std::sqrt(double(key_dim)), q, "scale")}, {}, "q_scaled");
  graph::Value scores = c.op("matmul", {q, kt}, {}, "scores");
  if (causal) {
    // Keras adds (1 - mask) * -1e9 where a query may not see a later position.
    NDArray mask(dtype::float32, {T, S});
    auto m = mask.values<float>();
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < S; ++j) m[size_t(i * S + j)] = j <= i ? 0.0f : -1e9f;
    scores = c.op("add", {scores, c.constant(std::move(mask), "causal_mask")}, {}, "masked_scores");
  }
  graph::Value probs = c.op("softmax", {scores}, ops::Attrs().set_int("axis", -1), "probs");
  graph::Value attended = c.op("matmul", {probs, v}, {}, "attended");  // (B, H, T, V)
  graph::Value merged = c.reshape(transpose(c, attended, {0, 2, 1, 3}, "attended_t"), {B, T, heads * value_dim}, "merged");
  const NDArray& wo = w[3 * per];
  const int64_t out_dim = wo.shape().back();
  if (wo.shape().size() != 3) c.unsupported("output_shape", "an output shape of more than one axis is not supported");
  graph::Value out_kernel = c.reshape(c.weight_constant(wo, "output_kernel"), {heads * value_dim, out_dim}, "output_kernel2d");
  graph::Value y = c.op("matmul", {merged, out_kernel}, {}, "output_proj");
  if (bias) y = c.op("add", {y, c.weight_constant(w[3 * per + 1], "output_bias")}, {}, "output_biased");
  return {y};
}

// Bidirectional(LSTM/GRU/SimpleRNN): the wrapped layer forward and backward (its backward twin
// from the configuration, else the same layer with go_backwards flipped), the backward
// sequence flipped back into time order as Keras does, then merged (concat on the features,
// sum, mul, ave; none returns both).
Values bidirectional(LayerContext& c) {
  auto spec = [&](const Json& j, const char* key) {
    if (!j.is_object() || !j.contains("class_name") || !j["class_name"].is_string() || !j.contains("config") ||
        !j["config"].is_object())
      c.bad_attribute(key, "is not a layer configuration");
    LayerSpec l;
    l.class_name = j["class_name"].get<std::string>();
    l.config = j["config"];
    l.name = l.config.contains("name") && l.config["name"].is_string() ? l.config["name"].get<std::string>() : key;
    if (l.class_name != "LSTM" && l.class_name != "GRU" && l.class_name != "SimpleRNN")
      c.unsupported(key, str_cat("Bidirectional around ", printable(l.class_name), " is not supported"));
    return l;
  };
  LayerSpec forward = spec(c.raw("layer"), "layer");
  LayerSpec backward;
  if (c.has("backward_layer")) {
    backward = spec(c.raw("backward_layer"), "backward_layer");
  } else {
    backward = forward;
    backward.name = "backward_" + forward.name;
    const bool back = forward.config.contains("go_backwards") && forward.config["go_backwards"] == Json(true);
    backward.config["go_backwards"] = !back;
  }
  LayerContext fc = c.wrapped(forward, c.layer_weights().wrapped("forward_layer", 0, 2));
  LayerContext bc = c.wrapped(backward, c.layer_weights().wrapped("backward_layer", 1, 2));
  Values f = converters().at(forward.class_name)(fc), b = converters().at(backward.class_name)(bc);
  const bool sequences = fc.flag("return_sequences", false);
  if (sequences) {
    const int64_t steps = c.shape(b[0]).at(1);
    std::vector<int64_t> reversed;
    for (int64_t t = steps; t-- > 0;) reversed.push_back(t);
    b[0] = c.op("gather", {b[0], c.int64s(reversed, "time_reversed")}, ops::Attrs().set_int("axis", 1), "backward_in_time");
  }
  // merge_mode: null returns both directions; absent is Keras' default, concat.
  const bool merged = !c.layer().config.contains("merge_mode") || !c.layer().config["merge_mode"].is_null();
  const std::string mode = merged ? c.text("merge_mode", "concat") : "none";
  Values out;
  if (mode == "none") {
    out = {f[0], b[0]};
  } else if (mode == "concat") {
    out = {c.op("concat", {f[0], b[0]}, ops::Attrs().set_int("axis", -1))};
  } else if (mode == "sum" || mode == "mul") {
    out = {c.op(mode == "sum" ? "add" : "mul", {f[0], b[0]})};
  } else if (mode == "ave") {
    out = {c.op("mul", {c.op("add", {f[0], b[0]}, {}, "sum"), c.scalar_like(0.5, f[0], "half")})};
  } else {
    c.bad_attribute("merge_mode", str_cat("'", printable(mode), "' is not concat, sum, mul, ave or None"));
  }
  out.insert(out.end(), f.begin() + 1, f.end());  // return_state: the forward states, then the backward ones
  out.insert(out.end(), b.begin() + 1, b.end());
  return out;
}

}  // namespace

void add_sequence_converters(std::map<std::string, Converter>& t) {
  t["LSTM"] = lstm;
  t["GRU"] = gru;
  t["SimpleRNN"] = simple_rnn;
  t["Bidirectional"] = bidirectional;
  t["MultiHeadAttention"] = multi_head_attention;
}

}  // namespace keras_import
NNVM_END_NAMESPACE

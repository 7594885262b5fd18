// Operators of ONNX's other domains that are arithmetic on tensors, built from default-domain
// ops: the optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum; one update step of
// one or more parameter tensors), ai.onnx.preview's FlexAttention, and ai.onnx.ml's Binarizer
// and ArrayFeatureExtractor; ai.onnx.ml's TreeEnsemble goes to nnvm's tree_ensemble op. Rows are
// keyed "domain:OpType" (see qualified_op_type).
#include "adapters.hpp"

#include <cmath>

#include "nnvm/ir/op.hpp"
#include "nnvm/onnx/dtype_codes.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

using graph::Value;

// Builds elementwise arithmetic for one node; every value gets a readable suffix.
struct Arith {
  BuildContext& ctx;
  DataType t;  // the parameters' float type; scalars are made in it

  Value op(const char* type, std::vector<Value> in, const std::string& name) {
    return ctx.op(type, std::move(in), {}, name).at(0);
  }
  Value c(double v, const std::string& name) { return ctx.constant(name, scalar(t, v)); }
  Value add(Value a, Value b, const std::string& n) { return op("Add", {a, b}, n); }
  Value sub(Value a, Value b, const std::string& n) { return op("Sub", {a, b}, n); }
  Value mul(Value a, Value b, const std::string& n) { return op("Mul", {a, b}, n); }
  Value div(Value a, Value b, const std::string& n) { return op("Div", {a, b}, n); }
  // The gradient plus the L2 regularization term's: norm_coefficient * x + g (every optimizer).
  Value regularized(Value x, Value g, double norm) {
    return add(mul(c(norm, "norm_coefficient"), x, "x_norm"), g, "g_regularized");
  }
  Value as_t(Value v, const std::string& n) {
    return ctx.type(v).dtype == t ? v : ctx.op("Cast", {v}, ops::Attrs().set_dtype("to", t), n).at(0);
  }
};

// The optimizers' inputs: R (learning rate), T (update count), then `groups` lists of n tensors
// each (X..., G..., and the optimizer's states); outputs: X_new..., then each state's new values.
size_t parameter_count(const NodeBuild& n, size_t groups, const char* op) {
  size_t rest = n.inputs.size() < 2 ? 0 : n.inputs.size() - 2;
  if (rest == 0 || rest % groups != 0)
    throw UserError("nnvm.onnx.graph", str_cat(op, " takes R, T and ", groups, " tensors per parameter; it has ",
                                              n.inputs.size(), " inputs"));
  return rest / groups;
}

Arith arith_for(const NodeBuild& n, BuildContext& ctx) {
  DataType t = ctx.type(n.inputs.at(2)).dtype;
  if (!t.is_float() || t.is_storage_only())
    throw UserError("nnvm.onnx.dtype", str_cat("the optimizers update float32 or float64 tensors; X is ", t));
  return Arith{ctx, t};
}

std::vector<Value> adagrad(NodeBuild& n, BuildContext& ctx) {
  size_t count = parameter_count(n, 3, "Adagrad");
  Arith a = arith_for(n, ctx);
  double decay = n.attrs.get_float("decay_factor", 0), eps = n.attrs.get_float("epsilon", 0),
         norm = n.attrs.get_float("norm_coefficient", 0);
  Value r = a.as_t(n.inputs[0], "r"), t = a.as_t(n.inputs[1], "t");
  // r / (1 + t * decay_factor): the learning rate, decayed.
  Value rate = a.div(r, a.add(a.c(1, "one"), a.mul(t, a.c(decay, "decay_factor"), "t_decay"), "decay_divisor"), "rate");
  std::vector<Value> xs, hs;
  for (size_t i = 0; i < count; ++i) {
    Value x = n.inputs[2 + i], g = n.inputs[2 + count + i], h = n.inputs[2 + 2 * count + i];
    Value g_reg = a.regularized(x, g, norm);
    Value h_new = a.add(h, a.mul(g_reg, g_reg, "g_squared"), "h_new");
    Value scale = a.add(a.op("Sqrt", {h_new}, "h_sqrt"), a.c(eps, "epsilon"), "h_sqrt_eps");
    xs.push_back(a.sub(x, a.div(a.mul(rate, g_reg, "step"), scale, "scaled_step"), "x_new"));
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Value> adam(NodeBuild& n, BuildContext& ctx) {
  size_t count = parameter_count(n, 4, "Adam");
  Arith a = arith_for(n, ctx);
  double alpha = n.attrs.get_float("alpha", 0.9), beta = n.attrs.get_float("beta", 0.999),
         eps = n.attrs.get_float("epsilon", 0), norm = n.attrs.get_float("norm_coefficient", 0),
         post = n.attrs.get_float("norm_coefficient_post", 0);
  Value r = a.as_t(n.inputs[0], "r"), t = a.as_t(n.inputs[1], "t");
  // After the first step the rate carries the bias correction sqrt(1 - beta^t) / (1 - alpha^t).
  Value corr = a.div(a.op("Sqrt", {a.sub(a.c(1, "one"), a.op("Pow", {a.c(beta, "beta"), t}, "beta_t"), "beta_gap")}, "beta_root"),
                     a.sub(a.c(1, "one"), a.op("Pow", {a.c(alpha, "alpha"), t}, "alpha_t"), "alpha_gap"), "correction");
  Value started = a.op("Greater", {t, a.c(0, "zero")}, "started");
  Value rate = a.op("Where", {started, a.mul(r, corr, "corrected_rate"), r}, "rate");
  std::vector<Value> xs, vs, hs;
  for (size_t i = 0; i < count; ++i) {
    Value x = n.inputs[2 + i], g = n.inputs[2 + count + i], v = n.inputs[2 + 2 * count + i],
          h = n.inputs[2 + 3 * count + i];
    Value g_reg = a.regularized(x, g, norm);
    Value v_new = a.add(a.mul(a.c(alpha, "alpha"), v, "v_kept"), a.mul(a.c(1 - alpha, "one_minus_alpha"), g_reg, "v_added"), "v_new");
    Value h_new = a.add(a.mul(a.c(beta, "beta"), h, "h_kept"),
                        a.mul(a.c(1 - beta, "one_minus_beta"), a.mul(g_reg, g_reg, "g_squared"), "h_added"), "h_new");
    Value scale = a.add(a.op("Sqrt", {h_new}, "h_sqrt"), a.c(eps, "epsilon"), "h_sqrt_eps");
    Value x_new = a.sub(x, a.mul(rate, a.div(v_new, scale, "v_scaled"), "step"), "x_stepped");
    xs.push_back(a.mul(a.c(1 - post, "post_decay"), x_new, "x_new"));
    vs.push_back(v_new);
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Value> momentum(NodeBuild& n, BuildContext& ctx) {
  size_t count = parameter_count(n, 3, "Momentum");
  Arith a = arith_for(n, ctx);
  double alpha = n.attrs.get_float("alpha", 0), beta = n.attrs.get_float("beta", 0),
         norm = n.attrs.get_float("norm_coefficient", 0);
  std::string mode = n.attrs.get_string("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    throw UserError("nnvm.onnx.attribute", str_cat("Momentum's mode is '", mode, "'; it must be standard or nesterov"),
                    {"attribute mode"});
  Value r = a.as_t(n.inputs[0], "r"), t = a.as_t(n.inputs[1], "t");
  // The gradient's coefficient is 1 on the first step (t = 0), beta after.
  Value coeff = a.op("Where", {a.op("Greater", {t, a.c(0, "zero")}, "started"), a.c(beta, "beta"), a.c(1, "one")}, "beta_adjusted");
  std::vector<Value> xs, vs;
  for (size_t i = 0; i < count; ++i) {
    Value x = n.inputs[2 + i], g = n.inputs[2 + count + i], v = n.inputs[2 + 2 * count + i];
    Value g_reg = a.regularized(x, g, norm);
    Value v_new = a.add(a.mul(a.c(alpha, "alpha"), v, "v_kept"), a.mul(coeff, g_reg, "v_added"), "v_new");
    Value step = mode == "standard" ? v_new : a.add(g_reg, a.mul(a.c(alpha, "alpha"), v_new, "lookahead"), "nesterov_step");
    xs.push_back(a.sub(x, a.mul(r, step, "step"), "x_new"));
    vs.push_back(v_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

// Y = (X > threshold) in X's type.
std::vector<Value> binarizer(NodeBuild& n, BuildContext& ctx) {
  Value x = n.inputs.at(0);
  DataType t = ctx.type(x).dtype;
  Value above = ctx.op("Greater", {x, ctx.constant("threshold", scalar(t, n.attrs.get_float("threshold", 0)))}, {},
                       "above").at(0);
  return ctx.op("Cast", {above}, ops::Attrs().set_dtype("to", t), "binary");
}

// The elements of X's last axis at the given indices (all of them, flattened): shape
// X.shape[:-1] + [count], and (1, count) for a 1-D X (as ONNX Runtime does).
std::vector<Value> array_feature_extractor(NodeBuild& n, BuildContext& ctx) {
  Value x = n.inputs.at(0), idx = n.inputs.at(1);
  int64_t count = 1;
  for (auto& e : ctx.type(idx).shape) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) throw UserError("nnvm.onnx.shape", "ArrayFeatureExtractor's indices need a static shape");
    count *= *c;
  }
  auto shape_const = [&](const std::string& name, std::vector<int64_t> s) {
    int64_t rank = int64_t(s.size());
    return ctx.constant(name, NDArray::from(s, {rank}));
  };
  Value flat = ctx.op("Reshape", {idx, shape_const("flat", {count})}, {}, "indices").at(0);
  Value picked = ctx.op("Gather", {x, flat}, ops::Attrs().set_int("axis", -1), "picked").at(0);
  if (ctx.type(x).shape.size() != 1) return {picked};
  return ctx.op("Reshape", {picked, shape_const("row", {1, count})}, {}, "row");
}

// TreeEnsemble (opset 5) is nnvm's tree_ensemble, which answers to onnx:ai.onnx.ml.TreeEnsemble
// (a name no default-domain node has); its attributes pass through. A float16 or bfloat16 X runs
// in float32 and the result is rounded back once.
std::vector<Value> tree_ensemble(NodeBuild& n, BuildContext& ctx) {
  Value x = n.inputs.at(0);
  DataType t = ctx.type(x).dtype;
  if (!t.is_storage_only()) return ctx.op("ai.onnx.ml.TreeEnsemble", {x}, n.attrs, "tree_ensemble");
  Value wide = ctx.op("Cast", {x}, ops::Attrs().set_dtype("to", dtype::float32), "x_float32").at(0);
  Value y = ctx.op("ai.onnx.ml.TreeEnsemble", {wide}, n.attrs, "tree_ensemble").at(0);
  return ctx.op("Cast", {y}, ops::Attrs().set_dtype("to", t), "y");
}

// FlexAttention (ai.onnx.preview): softmax(mod(Q K^T * scale)) V over rank-4 (batch, heads, seq,
// head size) inputs, with K and V repeated across query heads for grouped-query attention. Q and
// K are each pre-scaled by sqrt(scale); the scores, softmax and product with V run in the
// softmax type (float32 for float16 inputs); the optional score_mod and prob_mod subgraphs map
// the scores and the probabilities elementwise and are imported in place.
std::vector<Value> flex_attention(NodeBuild& n, BuildContext& ctx) {
  Value q = n.inputs.at(0), k = n.inputs.at(1), v = n.inputs.at(2);
  auto shape_of = [&](const Value& x, const char* what) {
    std::vector<int64_t> out;
    for (auto& e : ctx.type(x).shape) {
      const int64_t* c = ir::as_const_int(e);
      if (!c) throw UserError("nnvm.onnx.shape", str_cat("FlexAttention's ", what, " needs a static shape"));
      out.push_back(*c);
    }
    if (out.size() != 4)
      throw UserError("nnvm.onnx.shape", str_cat("FlexAttention's ", what, " must be rank 4 (batch, heads, sequence, "
                                                                         "head size); it has rank ", out.size()));
    return out;
  };
  std::vector<int64_t> qs = shape_of(q, "Q"), ks = shape_of(k, "K"), vs = shape_of(v, "V");
  if (ks[1] != vs[1] || ks[2] != vs[2] || ks[3] != qs[3] || ks[0] != qs[0] || vs[0] != qs[0] || qs[1] % ks[1] != 0)
    throw UserError("nnvm.onnx.shape", "FlexAttention's K and V share batch, heads and length, K's head size is Q's, "
                                       "and Q's head count is a multiple of K's");
  DataType t = ctx.type(q).dtype;
  if (!t.is_float()) throw UserError("nnvm.onnx.dtype", str_cat("FlexAttention takes float inputs; Q is ", t));
  DataType soft = t.is_storage_only() ? dtype::float32 : t;
  if (n.attrs.has("softmax_precision")) {
    std::optional<DataType> p = dtype_of_code(n.attrs.get_int("softmax_precision"));
    if (!p || (*p != dtype::float32 && *p != dtype::float64))
      throw UserError("nnvm.onnx.attribute", "FlexAttention's softmax_precision must be float or double here",
                      {"attribute softmax_precision"});
    soft = *p;
  }
  auto shape_const = [&](const std::string& name, std::vector<int64_t> s) {
    int64_t rank = int64_t(s.size());
    return ctx.constant(name, NDArray::from(s, {rank}));
  };
  // Each KV head serves `repeat` consecutive query heads (numpy's repeat along axis 1).
  auto repeated = [&](Value x, std::vector<int64_t> s, const std::string& name) {
    int64_t repeat = qs[1] / s[1];
    if (repeat == 1) return x;
    Value five = ctx.op("Reshape", {x, shape_const(name + "_5d", {s[0], s[1], 1, s[2], s[3]})}, {}, name + "_5d").at(0);
    Value wide = ctx.op("Expand", {five, shape_const(name + "_wide", {s[0], s[1], repeat, s[2], s[3]})}, {}, name + "_wide").at(0);
    return ctx.op("Reshape", {wide, shape_const(name + "_heads", {s[0], qs[1], s[2], s[3]})}, {}, name + "_heads").at(0);
  };
  auto matmul = [&](Value a, Value b, const std::string& name) {
    NodeBuild mm{.op_type = "MatMul", .inputs = {a, b}};
    std::vector<Value> w = in_float32(mm, ctx, "MatMul");
    return w.empty() ? ctx.op("MatMul", {a, b}, {}, name).at(0) : w[0];
  };
  auto cast = [&](Value x, DataType to, const std::string& name) {
    return ctx.type(x).dtype == to ? x : ctx.op("Cast", {x}, ops::Attrs().set_dtype("to", to), name).at(0);
  };
  auto mod = [&](const char* attr, Value x) {
    const ::onnx::AttributeProto* g = nullptr;
    for (auto& a : n.proto->attribute())
      if (a.name() == attr && a.has_g()) g = &a;
    if (!g) return x;
    std::vector<Value> out = ctx.inline_graph(g->g(), {x}, str_cat("attribute ", attr));
    if (out.size() != 1) throw UserError("nnvm.onnx.graph", str_cat("FlexAttention's ", attr, " must have one output"));
    return cast(out[0], soft, str_cat(attr, "_cast"));
  };
  double scale = n.attrs.get_float("scale", 1.0 / std::sqrt(double(qs[3])));
  Value root = ctx.constant("sqrt_scale", scalar(t, std::sqrt(float(scale))));
  Value qk = ctx.op("Mul", {q, root}, {}, "q_scaled").at(0);
  Value kk = ctx.op("Mul", {repeated(k, ks, "k"), root}, {}, "k_scaled").at(0);
  Value kt = ctx.op("Transpose", {kk}, ops::Attrs().set_ints("perm", {0, 1, 3, 2}), "k_transposed").at(0);
  Value scores = mod("score_mod", cast(matmul(qk, kt, "scores"), soft, "scores_cast"));
  Value probs = mod("prob_mod", ctx.op("Softmax", {scores}, ops::Attrs().set_int("axis", -1), "probs").at(0));
  Value out = matmul(probs, cast(repeated(v, vs, "v"), soft, "v_cast"), "attended");
  return {cast(out, ctx.type(v).dtype, "output")};
}

}  // namespace

std::vector<VersionAdapter> domain_ops() {
  const std::vector<std::string> arith{"Add", "Sub", "Mul", "Div", "Sqrt", "Cast"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), arith.begin(), arith.end());
    return more;
  };
  std::vector<VersionAdapter> t;
  t.push_back({.op_type = "ai.onnx.ml:ArrayFeatureExtractor", .below = always, .builds = true,
               .also_needs = {"Reshape", "Gather"}, .rewrite = array_feature_extractor});
  t.push_back({.op_type = "ai.onnx.ml:Binarizer", .below = always, .builds = true, .also_needs = {"Greater", "Cast"},
               .rewrite = binarizer});
  t.push_back({.op_type = "ai.onnx.ml:TreeEnsemble", .below = always, .builds = true,
               .also_needs = {"ai.onnx.ml.TreeEnsemble", "Cast"}, .rewrite = tree_ensemble});
  t.push_back({.op_type = "ai.onnx.preview:FlexAttention", .below = always, .builds = true,
               .also_needs = {"Reshape", "Expand", "Mul", "Transpose", "MatMul", "Softmax", "Cast"},
               .rewrite = flex_attention});
  t.push_back({.op_type = "ai.onnx.preview.training:Adagrad", .below = always, .builds = true, .also_needs = arith,
               .rewrite = adagrad});
  t.push_back({.op_type = "ai.onnx.preview.training:Adam", .below = always, .builds = true,
               .also_needs = with({"Pow", "Greater", "Where"}), .rewrite = adam});
  t.push_back({.op_type = "ai.onnx.preview.training:Momentum", .below = always, .builds = true,
               .also_needs = with({"Greater", "Where"}), .rewrite = momentum});
  return t;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE

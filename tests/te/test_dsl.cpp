#include "support/pch.hpp"

#include <bit>
#include <cmath>
#include <functional>
#include <unordered_map>

namespace te_dsl {

using namespace nnvm;

namespace {

// Structural equality of IR up to renaming: variables and tensors correspond one to one
// (established where they are bound: compute axes, reduce axes, placeholders).
struct IrEq {
  std::unordered_map<const ir::VarNode*, const ir::VarNode*> vars;
  std::unordered_map<const ir::ProducerNode*, const ir::ProducerNode*> tensors;

  bool var(const ir::VarNode* a, const ir::VarNode* b) {
    auto [it, fresh] = vars.emplace(a, b);
    return it->second == b && a->name == b->name && a->dtype == b->dtype;
  }
  bool iter_var(const ir::IterVar& a, const ir::IterVar& b) {
    return a->kind == b->kind && var(a.var().get(), b.var().get()) && expr(a->dom.min, b->dom.min) &&
           expr(a->dom.extent, b->dom.extent);
  }
  template <class V>
  bool all(const std::vector<V>& a, const std::vector<V>& b, bool (IrEq::*eq)(const V&, const V&)) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(this->*eq)(a[i], b[i])) return false;
    return true;
  }
  bool tensor(const ir::ProducerNode* a, const ir::ProducerNode* b) {
    if (auto it = tensors.find(a); it != tensors.end()) return it->second == b;
    tensors.emplace(a, b);
    const te::OperationNode &oa = *te::as_tensor(a)->op, &ob = *te::as_tensor(b)->op;
    return a->name == b->name && a->dtype == b->dtype && all(a->shape, b->shape, &IrEq::expr) &&
           oa.kind == ob.kind && all(oa.axis, ob.axis, &IrEq::iter_var) &&
           all(oa.reduce_axes, ob.reduce_axes, &IrEq::iter_var) && expr(oa.body, ob.body);
  }
  template <class N>
  static const N* as(const ir::Expr& e) {
    return e.as<N>();
  }
  bool expr(const ir::Expr& a, const ir::Expr& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    switch (a.kind()) {
      case ir::ExprKind::IntImm: return as<ir::IntImm>(a)->value == as<ir::IntImm>(b)->value;
      case ir::ExprKind::UIntImm: return as<ir::UIntImm>(a)->value == as<ir::UIntImm>(b)->value;
      case ir::ExprKind::FloatImm: return as<ir::FloatImm>(a)->value == as<ir::FloatImm>(b)->value;
      case ir::ExprKind::Var: return var(as<ir::VarNode>(a), as<ir::VarNode>(b));
#define NNVM_TEST_BINARY(N) \
  case ir::ExprKind::N: return expr(as<ir::N>(a)->a, as<ir::N>(b)->a) && expr(as<ir::N>(a)->b, as<ir::N>(b)->b);
        NNVM_FOR_EACH_BINARY(NNVM_TEST_BINARY)
#undef NNVM_TEST_BINARY
      case ir::ExprKind::Not: return expr(as<ir::Not>(a)->a, as<ir::Not>(b)->a);
      case ir::ExprKind::Select: {
        auto *x = as<ir::Select>(a), *y = as<ir::Select>(b);
        return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
               expr(x->false_value, y->false_value);
      }
      case ir::ExprKind::Cast: return expr(as<ir::Cast>(a)->value, as<ir::Cast>(b)->value);
      case ir::ExprKind::BitCast: return expr(as<ir::BitCast>(a)->value, as<ir::BitCast>(b)->value);
      case ir::ExprKind::Call:
        return as<ir::Call>(a)->op == as<ir::Call>(b)->op && all(as<ir::Call>(a)->args, as<ir::Call>(b)->args, &IrEq::expr);
      case ir::ExprKind::Reduce: {
        auto *x = as<ir::Reduce>(a), *y = as<ir::Reduce>(b);
        return x->combiner == y->combiner && all(x->axes, y->axes, &IrEq::iter_var) && expr(x->source, y->source) &&
               expr(x->init, y->init) && expr(x->condition, y->condition);
      }
      case ir::ExprKind::ProducerLoad: {
        auto *x = as<ir::ProducerLoad>(a), *y = as<ir::ProducerLoad>(b);
        return tensor(x->tensor.get(), y->tensor.get()) && all(x->indices, y->indices, &IrEq::expr);
      }
      default: return false;  // lowered-IR nodes never come out of compute
    }
  }
};

bool same_ir(const te::Tensor& typed, const te::Tensor& untyped) {
  return IrEq().tensor(typed.get(), untyped.get());
}

// A tiny reference evaluator for compute bodies (doubles throughout): placeholders read the
// given arrays (row-major); compute stages are evaluated on demand at each point.
struct Eval {
  std::unordered_map<const ir::ProducerNode*, const std::vector<double>*> inputs;
  std::unordered_map<const ir::VarNode*, double> env;

  void bind(const te::Tensor& t, const std::vector<double>& data) { inputs[t.get()] = &data; }
  void bind(const ir::Var& v, double value) { env[v.get()] = value; }

  double at(const te::Tensor& t, std::vector<int64_t> idx) { return at(t.get(), idx); }
  double at(const ir::ProducerNode* producer, const std::vector<int64_t>& idx) {
    const te::TensorNode* t = te::as_tensor(producer);
    if (t->op->kind == te::OpKind::placeholder) {
      int64_t flat = 0;
      for (size_t d = 0; d < idx.size(); ++d) {
        int64_t extent = int64_t(eval(t->shape[d]));
        REQUIRE((idx[d] >= 0 && idx[d] < extent));
        flat = flat * extent + idx[d];
      }
      return inputs.at(t)->at(size_t(flat));
    }
    auto saved = env;
    for (size_t d = 0; d < idx.size(); ++d) env[t->op->axis[d].var().get()] = double(idx[d]);
    double v = eval(t->op->body);
    env = saved;
    return v;
  }
  static double convert(DataType t, double v) {
    if (t.is_bool()) return v != 0;
    if (t.is_integer()) return std::trunc(v);
    if (t == dtype::float16) return float(float16(float(v)));
    if (t == dtype::float32) return float(v);
    return v;
  }
  // float32 <-> int32/uint32 and float64 <-> int64/uint64, the bit casts ir::BitCast makes.
  static double bit_cast(DataType from, DataType to, double v) {
    uint64_t bits = from == dtype::float32   ? std::bit_cast<uint32_t>(float(v))
                    : from == dtype::float64 ? std::bit_cast<uint64_t>(v)
                    : from.is_int()          ? uint64_t(int64_t(v))
                                             : uint64_t(v);
    if (to == dtype::float32) return std::bit_cast<float>(uint32_t(bits));
    if (to == dtype::float64) return std::bit_cast<double>(bits);
    if (to == dtype::int32) return double(int32_t(uint32_t(bits)));
    if (to == dtype::uint32) return double(uint32_t(bits));
    return to.is_int() ? double(int64_t(bits)) : double(bits);
  }
  double call(ir::CallOp op, const std::vector<double>& a) {
    switch (op) {
      case ir::CallOp::exp: return std::exp(a[0]);
      case ir::CallOp::sqrt: return std::sqrt(a[0]);
      case ir::CallOp::abs: return std::fabs(a[0]);
      case ir::CallOp::tanh: return std::tanh(a[0]);
      case ir::CallOp::sigmoid: return 1 / (1 + std::exp(-a[0]));
      case ir::CallOp::pow: return std::pow(a[0], a[1]);
      case ir::CallOp::isnan: return std::isnan(a[0]);
      case ir::CallOp::floor: return std::floor(a[0]);
      default: FAIL("evaluator lacks " << ir::call_op_name(op)); return 0;
    }
  }
  double eval(const ir::Expr& e) {
    using K = ir::ExprKind;
    auto bin = [&](auto* n, auto f) { return f(eval(n->a), eval(n->b)); };
    bool is_int = e.dtype().is_integer();
    switch (e.kind()) {
      case K::IntImm: return double(e.as<ir::IntImm>()->value);
      case K::UIntImm: return double(e.as<ir::UIntImm>()->value);
      case K::FloatImm: return e.as<ir::FloatImm>()->value;
      case K::Var: return env.at(e.as<ir::VarNode>());
      case K::Add: return convert(e.dtype(), bin(e.as<ir::Add>(), std::plus<>()));
      case K::Sub: return convert(e.dtype(), bin(e.as<ir::Sub>(), std::minus<>()));
      case K::Mul: return convert(e.dtype(), bin(e.as<ir::Mul>(), std::multiplies<>()));
      case K::Div: return convert(e.dtype(), bin(e.as<ir::Div>(), std::divides<>()));
      case K::Mod:
        return bin(e.as<ir::Mod>(), [&](double x, double y) {
          return is_int ? double(int64_t(x) % int64_t(y)) : convert(e.dtype(), std::fmod(x, y));
        });
      case K::Min: return bin(e.as<ir::Min>(), [](double x, double y) { return x < y ? x : y; });
      case K::Max: return bin(e.as<ir::Max>(), [](double x, double y) { return x > y ? x : y; });
      case K::EQ: return bin(e.as<ir::EQ>(), std::equal_to<>());
      case K::NE: return bin(e.as<ir::NE>(), std::not_equal_to<>());
      case K::LT: return bin(e.as<ir::LT>(), std::less<>());
      case K::LE: return bin(e.as<ir::LE>(), std::less_equal<>());
      case K::GT: return bin(e.as<ir::GT>(), std::greater<>());
      case K::GE: return bin(e.as<ir::GE>(), std::greater_equal<>());
      case K::And: return bin(e.as<ir::And>(), [](double x, double y) { return x != 0 && y != 0; });
      case K::Or: return bin(e.as<ir::Or>(), [](double x, double y) { return x != 0 || y != 0; });
      case K::Not: return eval(e.as<ir::Not>()->a) == 0;
      case K::Select: {
        auto* s = e.as<ir::Select>();
        return eval(s->condition) != 0 ? eval(s->true_value) : eval(s->false_value);
      }
      case K::Cast: return convert(e.dtype(), eval(e.as<ir::Cast>()->value));
      case K::BitCast: return bit_cast(e.as<ir::BitCast>()->value.dtype(), e.dtype(), eval(e.as<ir::BitCast>()->value));
      case K::Call: {
        std::vector<double> args;
        for (auto& a : e.as<ir::Call>()->args) args.push_back(eval(a));
        return convert(e.dtype(), call(e.as<ir::Call>()->op, args));
      }
      case K::Reduce: return reduce(*e.as<ir::Reduce>());
      case K::ProducerLoad: {
        auto* p = e.as<ir::ProducerLoad>();
        std::vector<int64_t> idx;
        for (auto& i : p->indices) idx.push_back(int64_t(eval(i)));
        return at(p->tensor.get(), idx);
      }
      default: FAIL("evaluator meets a lowered node"); return 0;
    }
  }
  double reduce(const ir::Reduce& r) {
    double acc = eval(r.init);
    std::function<void(size_t)> loop = [&](size_t d) {
      if (d == r.axes.size()) {
        double v = eval(r.source);
        switch (r.combiner) {
          case ir::Combiner::sum: acc += v; break;
          case ir::Combiner::prod: acc *= v; break;
          case ir::Combiner::min: acc = v < acc ? v : acc; break;
          case ir::Combiner::max: acc = v > acc ? v : acc; break;
        }
        acc = convert(r.dtype, acc);
        return;
      }
      int64_t lo = int64_t(eval(r.axes[d]->dom.min)), n = int64_t(eval(r.axes[d]->dom.extent));
      for (int64_t v = lo; v < lo + n; ++v) {
        env[r.axes[d].var().get()] = double(v);
        loop(d + 1);
      }
    };
    loop(0);
    return acc;
  }
};

std::vector<double> iota_data(size_t n, double scale, double offset) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = double(float(std::sin(double(i) * 1.3 + offset) * scale));
  return v;
}

}  // namespace

TEST_CASE("typed matmul builds the untyped IR and multiplies") {
  auto A = placeholder<float, 4, 3>("A");
  auto B = placeholder<float, 3, 5>("B");
  auto k = reduce_axis<3>("k");
  auto C = compute<Shape<4, 5>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");
  static_assert(std::is_same_v<decltype(C), Tensor<float, 4, 5>>);

  te::Tensor Au = te::placeholder({4, 3}, dtype::float32, "A"), Bu = te::placeholder({3, 5}, dtype::float32, "B");
  auto ku = te::reduce_axis(3, "k");
  te::Tensor Cu = te::compute(
      {4, 5}, [&](const std::vector<ir::Var>& v) { return te::sum(Au(v[0], ku.var()) * Bu(ku.var(), v[1]), {ku}); },
      "C");
  CHECK(same_ir(C, Cu));
  CHECK(C.untyped().op().reduce_axes.size() == 1);

  // A different body must not compare equal: the helper can fail.
  te::Tensor Wrong = te::compute(
      {4, 5}, [&](const std::vector<ir::Var>& v) { return te::sum(Au(v[0], ku.var()) + Bu(ku.var(), v[1]), {ku}); },
      "C");
  CHECK_FALSE(same_ir(C, Wrong));

  auto a = iota_data(12, 1.0, 0.1), b = iota_data(15, 2.0, 0.7);
  Eval ev;
  ev.bind(A, a);
  ev.bind(B, b);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double ref = 0;
      for (int64_t r = 0; r < 3; ++r) ref += a[size_t(i * 3 + r)] * b[size_t(r * 5 + j)];
      CHECK(ev.at(C, {i, j}) == doctest::Approx(ref).epsilon(1e-5));
    }
}

TEST_CASE("typed conv2d (NCHW, padding through select) builds the untyped IR and convolves") {
  auto data = placeholder<float, 1, 2, 5, 5>("data");
  auto w = placeholder<float, 3, 2, 3, 3>("w");
  auto pad = compute<Shape<1, 2, 7, 7>>(
      [&](auto n, auto c, auto y, auto x) {
        return select(y >= 1 && y < 6 && x >= 1 && x < 6, data(n, c, y - 1, x - 1), 0.0f);
      },
      "pad");
  auto rc = reduce_axis<2>("rc");
  auto ry = reduce_axis<3>("ry");
  auto rx = reduce_axis<3>("rx");
  auto conv = compute<Shape<1, 3, 5, 5>>(
      [&](auto n, auto f, auto y, auto x) { return sum(pad(n, rc, y + ry, x + rx) * w(f, rc, ry, rx), {rc, ry, rx}); },
      "conv");
  static_assert(std::is_same_v<decltype(conv), Tensor<float, 1, 3, 5, 5>>);

  te::Tensor du = te::placeholder({1, 2, 5, 5}, dtype::float32, "data");
  te::Tensor wu = te::placeholder({3, 2, 3, 3}, dtype::float32, "w");
  te::Tensor padu = te::compute(
      {1, 2, 7, 7},
      [&](const std::vector<ir::Var>& v) {
        return ir::select(v[2] >= 1 && v[2] < 6 && v[3] >= 1 && v[3] < 6, du(v[0], v[1], v[2] - 1, v[3] - 1),
                          ir::Expr(0.0f));
      },
      "pad");
  auto rcu = te::reduce_axis(2, "rc"), ryu = te::reduce_axis(3, "ry"), rxu = te::reduce_axis(3, "rx");
  te::Tensor convu = te::compute(
      {1, 3, 5, 5},
      [&](const std::vector<ir::Var>& v) {
        return te::sum(padu(v[0], rcu.var(), v[2] + ryu.var(), v[3] + rxu.var()) * wu(v[1], rcu.var(), ryu.var(), rxu.var()),
                       {rcu, ryu, rxu});
      },
      "conv");
  CHECK(same_ir(conv, convu));

  auto dv = iota_data(50, 1.0, 0.3), wv = iota_data(54, 0.5, 1.1);
  Eval ev;
  ev.bind(data, dv);
  ev.bind(w, wv);
  for (int64_t f = 0; f < 3; ++f)
    for (int64_t y = 0; y < 5; ++y)
      for (int64_t x = 0; x < 5; ++x) {
        double ref = 0;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dx = 0; dx < 3; ++dx) {
              int64_t sy = y + dy - 1, sx = x + dx - 1;
              if (sy < 0 || sy >= 5 || sx < 0 || sx >= 5) continue;
              ref += dv[size_t((c * 5 + sy) * 5 + sx)] * wv[size_t(((f * 2 + c) * 3 + dy) * 3 + dx)];
            }
        CHECK(ev.at(conv, {0, f, y, x}) == doctest::Approx(ref).epsilon(1e-5));
      }
}

TEST_CASE("typed softmax stages over symbolic sizes build the untyped IR and normalize") {
  ir::Var n("n"), m("m");
  auto X = placeholder<float>({n, m}, "X");
  auto k1 = reduce_axis(m, "k1");
  auto mx = compute({n}, [&](auto i) { return max_over(X(i, k1), k1); }, "mx");
  auto ex = compute({n, m}, [&](auto i, auto j) { return exp(X(i, j) - mx(i)); }, "ex");
  auto k2 = reduce_axis(m, "k2");
  auto es = compute({n}, [&](auto i) { return sum(ex(i, k2), k2); }, "es");
  auto sm = compute({n, m}, [&](auto i, auto j) { return ex(i, j) / es(i); }, "sm");
  static_assert(std::is_same_v<decltype(sm), DynTensor<float, 2>>);
  static_assert(std::is_same_v<decltype(mx), Tensor<float, dyn>>);

  te::Tensor Xu = te::placeholder({n, m}, dtype::float32, "X");
  auto k1u = te::reduce_axis(m, "k1"), k2u = te::reduce_axis(m, "k2");
  using V = const std::vector<ir::Var>&;
  te::Tensor mxu = te::compute({n}, [&](V v) { return te::max_reduce(Xu(v[0], k1u.var()), {k1u}); }, "mx");
  te::Tensor exu = te::compute({n, m}, [&](V v) { return ir::call(ir::CallOp::exp, Xu(v[0], v[1]) - mxu(v[0])); }, "ex");
  te::Tensor esu = te::compute({n}, [&](V v) { return te::sum(exu(v[0], k2u.var()), {k2u}); }, "es");
  te::Tensor smu = te::compute({n, m}, [&](V v) { return exu(v[0], v[1]) / esu(v[0]); }, "sm");
  CHECK(same_ir(sm, smu));

  auto xv = iota_data(12, 3.0, 0.2);
  Eval ev;
  ev.bind(X, xv);
  ev.bind(n, 3);
  ev.bind(m, 4);
  for (int64_t i = 0; i < 3; ++i) {
    double hi = -1e300, total = 0;
    for (int64_t j = 0; j < 4; ++j) hi = std::max(hi, xv[size_t(i * 4 + j)]);
    for (int64_t j = 0; j < 4; ++j) total += std::exp(xv[size_t(i * 4 + j)] - hi);
    for (int64_t j = 0; j < 4; ++j)
      CHECK(ev.at(sm, {i, j}) == doctest::Approx(std::exp(xv[size_t(i * 4 + j)] - hi) / total).epsilon(1e-5));
  }
}

TEST_CASE("typed elementwise chain with casts, literals and math calls builds the untyped IR") {
  auto H = placeholder<float16, 8>("H");
  auto I = placeholder<int32_t, 8>("I");
  auto E = compute<Shape<8>>(
      [&](auto i) {
        auto x = cast<float>(H(i)) * 0.5f + cast<float>(I(i) % 3);
        auto y = select(!(x < 1.0f) && !isnan(x), sqrt(abs(x)), -x) + pow(x, 2) + sigmoid(x) + max(x, 0.25f) -
                 min(tanh(x), 1);
        return cast<float16>(y + floor(x));
      },
      "E");
  static_assert(std::is_same_v<decltype(E), Tensor<float16, 8>>);

  te::Tensor Hu = te::placeholder({8}, dtype::float16, "H"), Iu = te::placeholder({8}, dtype::int32, "I");
  te::Tensor Eu = te::compute(
      {8},
      [&](const std::vector<ir::Var>& v) {
        using ir::CallOp;
        ir::Expr x = ir::cast(dtype::float32, Hu(v[0])) * 0.5f + ir::cast(dtype::float32, Iu(v[0]) % 3);
        ir::Expr y = ir::select(!(x < 1.0f) && !ir::call(CallOp::isnan, x), ir::call(CallOp::sqrt, ir::call(CallOp::abs, x)), -x) +
                     ir::call(CallOp::pow, x, ir::Expr(2.0f)) + ir::call(CallOp::sigmoid, x) + ir::max(x, ir::Expr(0.25f)) -
                     ir::min(ir::call(CallOp::tanh, x), ir::Expr(1.0f));
        return ir::cast(dtype::float16, y + ir::call(CallOp::floor, x));
      },
      "E");
  CHECK(same_ir(E, Eu));

  std::vector<double> hv(8), iv(8);
  for (size_t i = 0; i < 8; ++i) {
    hv[i] = float(float16(float(i) * 0.75f - 2.0f));
    iv[i] = double(int(i) * 7 - 20);
  }
  Eval ev;
  ev.bind(H, hv);
  ev.bind(I, iv);
  for (int64_t i = 0; i < 8; ++i) {
    float x = float(hv[size_t(i)]) * 0.5f + float(int(iv[size_t(i)]) % 3);
    float y = (!(x < 1.0f) ? std::sqrt(std::fabs(x)) : -x) + std::pow(x, 2.0f) + 1 / (1 + std::exp(-x)) +
              (x > 0.25f ? x : 0.25f) - std::min(std::tanh(x), 1.0f);
    float ref = float(float16(y + std::floor(x)));
    CHECK(ev.at(E, {i}) == doctest::Approx(ref).epsilon(2e-3));
  }
}

TEST_CASE("Expr<T> holds expressions built in loops and branches") {
  auto A = placeholder<float, 16>("A");
  auto S = compute<Shape<13>>(
      [&](auto i) {
        dsl::Expr<float> acc = A(as_dynamic(i));  // Index<13> reads a prefix of the 16-long axis
        for (int d = 1; d < 4; ++d) acc = acc + A(i + d);
        return acc;
      },
      "S");
  static_assert(std::is_same_v<decltype(S), Tensor<float, 13>>);

  te::Tensor Au = te::placeholder({16}, dtype::float32, "A");
  te::Tensor Su = te::compute(
      {13},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr acc = Au(v[0]);
        for (int d = 1; d < 4; ++d) acc = acc + Au(v[0] + d);
        return acc;
      },
      "S");
  CHECK(same_ir(S, Su));

  auto av = iota_data(16, 1.0, 0.0);
  Eval ev;
  ev.bind(A, av);
  for (int64_t i = 0; i < 13; ++i) {
    double ref = 0;
    for (int64_t d = 0; d < 4; ++d) ref += av[size_t(i + d)];
    CHECK(ev.at(S, {i}) == doctest::Approx(ref).epsilon(1e-5));
  }

  // A branch chosen at build time: both arms are Expr<float>.
  for (bool use_exp : {false, true}) {
    auto B = compute<Shape<16>>(
        [&](auto i) { return use_exp ? dsl::Expr<float>(exp(A(i))) : dsl::Expr<float>(A(i) * 2.0f); }, "B");
    CHECK(ev.at(B, {5}) == doctest::Approx(use_exp ? std::exp(av[5]) : av[5] * 2.0).epsilon(1e-5));
  }
}

TEST_CASE("reductions: prod, min_over, max_over, several axes and a custom init") {
  auto A = placeholder<float, 3, 4, 2>("A");
  auto k = reduce_axis<4>("k");
  auto l = reduce_axis<2>("l");
  auto P = compute<Shape<3>>([&](auto i) { return prod(A(i, k, l), {k, l}); }, "P");
  auto Mn = compute<Shape<3>>([&](auto i) { return min_over(A(i, k, 0), k); }, "Mn");
  auto Mx = compute<Shape<3>>([&](auto i) { return max_over(A(i, k, 1), k, 0.5f); }, "Mx");
  auto S = compute<Shape<3>>([&](auto i) { return sum(A(i, k, l), {k, l}, 10); }, "S");

  te::Tensor Au = te::placeholder({3, 4, 2}, dtype::float32, "A");
  auto ku = te::reduce_axis(4, "k"), lu = te::reduce_axis(2, "l");
  using V = const std::vector<ir::Var>&;
  CHECK(same_ir(P, te::compute({3}, [&](V v) { return te::prod(Au(v[0], ku.var(), lu.var()), {ku, lu}); }, "P")));
  CHECK(same_ir(Mn, te::compute({3}, [&](V v) { return te::min_reduce(Au(v[0], ku.var(), 0), {ku}); }, "Mn")));
  CHECK(same_ir(Mx, te::compute({3}, [&](V v) { return te::max_reduce(Au(v[0], ku.var(), 1), {ku}, ir::Expr(0.5f)); }, "Mx")));
  CHECK(same_ir(S, te::compute({3}, [&](V v) { return te::sum(Au(v[0], ku.var(), lu.var()), {ku, lu}, ir::Expr(10.0f)); }, "S")));

  auto av = iota_data(24, 1.5, 0.4);
  Eval ev;
  ev.bind(A, av);
  for (int64_t i = 0; i < 3; ++i) {
    double p = 1, s = 10, mn = 1e300, mx = 0.5;
    for (int64_t r = 0; r < 4; ++r) {
      for (int64_t c = 0; c < 2; ++c) {
        p *= av[size_t((i * 4 + r) * 2 + c)];
        s += av[size_t((i * 4 + r) * 2 + c)];
      }
      mn = std::min(mn, av[size_t((i * 4 + r) * 2)]);
      mx = std::max(mx, av[size_t((i * 4 + r) * 2 + 1)]);
    }
    CHECK(ev.at(P, {i}) == doctest::Approx(p).epsilon(1e-5));
    CHECK(ev.at(S, {i}) == doctest::Approx(s).epsilon(1e-5));
    CHECK(ev.at(Mn, {i}) == doctest::Approx(mn).epsilon(1e-6));
    CHECK(ev.at(Mx, {i}) == doctest::Approx(mx).epsilon(1e-6));
  }
}

TEST_CASE("the C++ type of an expression records its structure and element type") {
  auto A = placeholder<float, 64, 32>("A");
  auto B = placeholder<float, 32, 16>("B");
  Index<64> i{ir::Var("i")};
  Index<16> j{ir::Var("j")};
  auto k = reduce_axis<32>("k");

  using AB = decltype(A(i, k) * B(k, j));
  static_assert(std::is_same_v<AB, dsl::BinaryExpr<dsl::MulOp, dsl::Access<float, Index<64>, ReduceAxis<32>>,
                                                   dsl::Access<float, ReduceAxis<32>, Index<16>>>>);
  static_assert(std::is_same_v<AB::value_type, float>);
  static_assert(std::is_same_v<decltype(A(i, k) + 1), dsl::BinaryExpr<dsl::AddOp, dsl::Access<float, Index<64>, ReduceAxis<32>>, dsl::Const<float>>>);
  static_assert(std::is_same_v<decltype(A(i, k) < 1)::value_type, bool>);
  static_assert(std::is_same_v<decltype(A(i, k) > 0 && !(B(k, j) == 2))::value_type, bool>);
  static_assert(std::is_same_v<decltype(cast<double>(A(i, k)))::value_type, double>);
  static_assert(std::is_same_v<decltype(isnan(A(i, k)))::value_type, bool>);
  static_assert(std::is_same_v<decltype(sum(A(i, k), k))::value_type, float>);
  static_assert(std::is_same_v<decltype(select(A(i, k) > 0, 1, 0))::value_type, int>);
  // Index arithmetic is int64 and forgets static extents.
  static_assert(std::is_same_v<decltype(i * 2 + 1)::value_type, int64_t>);
  static_assert(std::is_same_v<decltype(i + k)::value_type, int64_t>);
  static_assert(decltype(i)::extent == 64 && decltype(k)::extent == 32);
  static_assert(dsl::extent_of<decltype(i * 2 + 1)> == dyn && dsl::extent_of<Index<64>> == 64);
  static_assert(Tensor<float, 64, 32>::rank == 2 && Tensor<float, 64, 32>::static_extents[1] == 32);

  // Nothing is lowered until asked: to_ir() builds the node.
  ir::Expr e = (A(i, k) * B(k, j)).to_ir();
  REQUIRE(e.as<ir::Mul>() != nullptr);
  CHECK(e.as<ir::Mul>()->a.as<ir::ProducerLoad>()->tensor == A.untyped().node_ptr());
  CHECK(e.dtype() == dtype::float32);
}

TEST_CASE("math functions are found qualified and unqualified, and leave std alone") {
  auto A = placeholder<float, 4>("A");
  Index<4> i{ir::Var("i")};
  ir::Expr q = nnvm::exp(A(i)).to_ir(), u = exp(A(i)).to_ir(), adl = dsl::exp(A(i)).to_ir();
  for (auto* e : {&q, &u, &adl}) {
    REQUIRE(e->as<ir::Call>() != nullptr);
    CHECK(e->as<ir::Call>()->op == ir::CallOp::exp);
  }
  CHECK(exp(0.0) == 1.0);  // plain numbers still reach the C library
  CHECK(std::sqrt(4.0f) == 2.0f);
  CHECK(nnvm::atan2(A(i), 1.0f).to_ir().as<ir::Call>()->op == ir::CallOp::atan2);
  CHECK(nnvm::copysign(A(i), A(i)).to_ir().as<ir::Call>()->args.size() == 2);
}

TEST_CASE("typed tensors are te::Tensors for schedules and lowering") {
  auto A = placeholder<float>(Shape<8, 4>{}, "A");
  auto B = compute(Shape<8, 4>{}, [&](auto i, auto j) { return A(i, j) + 1.0f; }, "B", {"y", "x"});
  static_assert(std::is_same_v<decltype(B), Tensor<float, 8, 4>>);
  const te::Tensor& u = B;
  CHECK(u.same_as(B.untyped()));
  CHECK(u.op().axis[0].name() == "y");
  std::vector<te::Tensor> order = te::post_order({B});
  REQUIRE(order.size() == 2);
  CHECK(order[0].same_as(A));
  // Reduction axes are IterVars.
  auto k = reduce_axis<4>("k");
  ir::IterVar iv = k;
  CHECK(iv.same_as(k.iter_var()));
}

TEST_CASE("a placeholder named at compile time is a typed tensor whose type carries its name") {
  // Only the rank diagnostic differs (tests/compile_fail/rank_named.cpp): the IR is the same.
  auto A = placeholder<"A", float, 8, 4>();
  static_assert(std::is_same_v<decltype(A), NamedTensor<"A", float, 8, 4>>);
  CHECK(A.name() == "A");
  const Tensor<float, 8, 4>& plain = A;
  auto B = compute<Shape<8, 4>>([&](auto i, auto j) { return A(i, j) * 2.0f + plain(i, j); }, "B");
  auto Au = placeholder<float, 8, 4>("A");
  auto Bu = compute<Shape<8, 4>>([&](auto i, auto j) { return Au(i, j) * 2.0f + Au(i, j); }, "B");
  CHECK(same_ir(B, Bu));
}

TEST_CASE("run-time errors of the untyped path and of typed wrappers") {
  ir::Var n("n");
  te::Tensor Au = te::placeholder({4, 4}, dtype::float32, "A");
  try {
    (void)te::compute({4}, [&](const std::vector<ir::Var>& v) { return Au(v[0]); }, "C");
    FAIL("expected a rank mismatch");
  } catch (const UserError& e) {
    CHECK(e.id() == "nnvm.te.rank_mismatch");
    CHECK(std::string(e.what()).find("tensor A has rank 2 but is indexed with 1 index") != std::string::npos);
  }

  auto expect_id = [](const char* id, auto&& f) {
    try {
      f();
      FAIL((std::string("expected ") + id));
    } catch (const UserError& e) {
      CHECK(e.id() == id);
    }
  };
  expect_id("nnvm.te.dtype_mismatch", [&] { Tensor<int32_t, 4, 4> t(Au); });
  expect_id("nnvm.te.rank_mismatch", [&] { Tensor<float, 16> t(Au); });
  expect_id("nnvm.te.extent_mismatch", [&] { Tensor<float, 4, 5> t(Au); });
  expect_id("nnvm.te.extent_mismatch", [&] { (void)placeholder<float, dyn, 32>({n, 31}, "B"); });
  expect_id("nnvm.te.extent_mismatch",
            [&] { (void)compute<Shape<dyn, 8>>({n, 4}, [&](auto i, auto j) { return cast<float>(i + j); }, "C"); });
  expect_id("nnvm.te.dtype_mismatch", [&] { dsl::Expr<float> e{ir::Expr(n)}; });
  auto A = placeholder<float, 4>("A");
  expect_id("nnvm.te.dtype_mismatch",
            [&] { (void)compute<Shape<4>>([&](auto i) { return A(i) + n; }, "C"); });  // n is int64
  // An erased reduction inside a larger body is only caught at run time.
  auto k = reduce_axis<4>("k");
  expect_id("nnvm.te.nested_reduce", [&] {
    (void)compute<Shape<4>>([&](auto) { return dsl::Expr<float>(sum(A(k), k)) * 2.0f; }, "C");
  });

  // Mixed static and symbolic extents that agree are fine, and symbolic sizes join index math.
  auto B = placeholder<float, dyn, 32>({n, 32}, "B");
  auto C = compute<Shape<dyn, 32>>({n, 32}, [&](auto i, auto j) { return B(n - 1 - i, j); }, "C");
  static_assert(std::is_same_v<decltype(C), Tensor<float, dyn, 32>>);
  CHECK(C.untyped().op().body.as<ir::ProducerLoad>()->indices[0].as<ir::Sub>() != nullptr);
}

}  // namespace te_dsl

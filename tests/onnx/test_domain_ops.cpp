// Operators of ai.onnx.preview.training and ai.onnx.ml built from default-domain ops
// (importers/onnx/domain_ops.cpp), each checked against the spec's update rule written here.
#include "support/pch.hpp"

#include <cmath>

#include "onnx_test_util.hpp"

namespace onnx_domain_ops {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

Model domain_model(const std::string& domain) {
  Model m(18);
  auto* o = m.m.add_opset_import();
  o->set_domain(domain);
  o->set_version(1);
  return m;
}

onnx::NodeProto* domain_node(Model& m, const std::string& domain, const std::string& op, std::vector<std::string> ins,
                             std::vector<std::string> outs) {
  auto* n = m.node(op, std::move(ins), std::move(outs));
  n->set_domain(domain);
  return n;
}

std::vector<NDArray> run(const Model& m, const std::string& name, const std::vector<NDArray>& inputs) {
  return graph::compile(oi::import_model(m.save(scratch(name)))).run(inputs);
}

NDArray f32(std::vector<float> v) { return NDArray::from(v, {int64_t(v.size())}); }
NDArray scalar_f(float v) { return NDArray::from(std::vector<float>{v}, {}); }
NDArray scalar_i(int64_t v) { return NDArray::from(std::vector<int64_t>{v}, {}); }

void check_all(const NDArray& got, const std::vector<double>& want) {
  REQUIRE(size_t(got.numel()) == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(got.values<float>()[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

const std::string training = "ai.onnx.preview.training";

}  // namespace

TEST_CASE("ai.onnx.preview.training Adagrad: two parameters in one node") {
  Model m = domain_model(training);
  m.input("R", T::FLOAT, {});
  m.input("T", T::INT64, {});
  for (const char* v : {"X1", "G1", "H1"}) m.input(v, T::FLOAT, {1});
  for (const char* v : {"X2", "G2", "H2"}) m.input(v, T::FLOAT, {2});
  auto* n = domain_node(m, training, "Adagrad", {"R", "T", "X1", "X2", "G1", "G2", "H1", "H2"},
                        {"X1_new", "X2_new", "H1_new", "H2_new"});
  attr_float(n, "decay_factor", 0.1f);
  attr_float(n, "epsilon", 1e-5f);
  attr_float(n, "norm_coefficient", 0.001f);
  for (const char* o : {"X1_new", "X2_new", "H1_new", "H2_new"}) m.output(o);
  std::vector<float> x1{1.0f}, g1{-1.0f}, h1{2.0f}, x2{1.0f, 2.0f}, g2{-1.0f, -3.0f}, h2{4.0f, 1.0f};
  // Inputs in declaration order: R, T, X1, G1, H1, X2, G2, H2.
  std::vector<NDArray> out = run(m, "adagrad", {scalar_f(0.1f), scalar_i(3), f32(x1), f32(g1), f32(h1), f32(x2), f32(g2), f32(h2)});
  double rate = 0.1 / (1 + 3 * 0.1);
  auto step = [&](const std::vector<float>& x, const std::vector<float>& g, const std::vector<float>& h,
                  std::vector<double>& xn, std::vector<double>& hn) {
    for (size_t i = 0; i < x.size(); ++i) {
      double gr = 0.001 * x[i] + g[i], hv = h[i] + gr * gr;
      hn.push_back(hv);
      xn.push_back(x[i] - rate * gr / (std::sqrt(hv) + 1e-5));
    }
  };
  std::vector<double> x1n, h1n, x2n, h2n;
  step(x1, g1, h1, x1n, h1n);
  step(x2, g2, h2, x2n, h2n);
  check_all(out[0], x1n);
  check_all(out[1], x2n);
  check_all(out[2], h1n);
  check_all(out[3], h2n);
}

TEST_CASE("ai.onnx.preview.training Adam: bias correction after the first step, none at t = 0") {
  for (int64_t t : {0, 4}) {
    CAPTURE(t);
    Model m = domain_model(training);
    m.input("R", T::FLOAT, {});
    m.input("T", T::INT64, {});
    for (const char* v : {"X", "G", "V", "H"}) m.input(v, T::FLOAT, {2});
    auto* n = domain_node(m, training, "Adam", {"R", "T", "X", "G", "V", "H"}, {"X_new", "V_new", "H_new"});
    attr_float(n, "alpha", 0.95f);
    attr_float(n, "beta", 0.1f);
    attr_float(n, "epsilon", 1e-7f);
    attr_float(n, "norm_coefficient", 0.001f);
    attr_float(n, "norm_coefficient_post", 0.01f);
    for (const char* o : {"X_new", "V_new", "H_new"}) m.output(o);
    std::vector<float> x{1.2f, 2.8f}, g{-0.94f, -2.5f}, v{1.7f, 3.6f}, h{0.1f, 0.1f};
    std::vector<NDArray> out = run(m, "adam" + std::to_string(t), {scalar_f(0.1f), scalar_i(t), f32(x), f32(g), f32(v), f32(h)});
    double alpha = double(0.95f), beta = double(0.1f);
    double rate = t > 0 ? 0.1 * std::sqrt(1 - std::pow(beta, double(t))) / (1 - std::pow(alpha, double(t))) : 0.1;
    std::vector<double> xn, vn, hn;
    for (size_t i = 0; i < 2; ++i) {
      double gr = double(0.001f) * x[i] + g[i];
      double vv = alpha * v[i] + (1 - alpha) * gr, hv = beta * h[i] + (1 - beta) * gr * gr;
      vn.push_back(vv);
      hn.push_back(hv);
      xn.push_back((1 - double(0.01f)) * (x[i] - rate * vv / (std::sqrt(hv) + 1e-7)));
    }
    check_all(out[0], xn);
    check_all(out[1], vn);
    check_all(out[2], hn);
  }
}

TEST_CASE("ai.onnx.preview.training Momentum: standard and Nesterov") {
  for (const char* mode : {"standard", "nesterov"}) {
    CAPTURE(mode);
    Model m = domain_model(training);
    m.input("R", T::FLOAT, {});
    m.input("T", T::INT64, {});
    for (const char* v : {"X", "G", "V"}) m.input(v, T::FLOAT, {2});
    auto* n = domain_node(m, training, "Momentum", {"R", "T", "X", "G", "V"}, {"X_new", "V_new"});
    attr_float(n, "alpha", 0.95f);
    attr_float(n, "beta", 0.1f);
    attr_float(n, "norm_coefficient", 0.001f);
    attr_string(n, "mode", mode);
    m.output("X_new");
    m.output("V_new");
    std::vector<float> x{1.2f, 2.8f}, g{-0.94f, -2.5f}, v{1.7f, 3.6f};
    std::vector<NDArray> out = run(m, std::string("momentum_") + mode, {scalar_f(0.1f), scalar_i(5), f32(x), f32(g), f32(v)});
    std::vector<double> xn, vn;
    for (size_t i = 0; i < 2; ++i) {
      double gr = double(0.001f) * x[i] + g[i], vv = double(0.95f) * v[i] + double(0.1f) * gr;
      vn.push_back(vv);
      double stepv = std::string(mode) == "standard" ? vv : gr + double(0.95f) * vv;
      xn.push_back(x[i] - double(0.1f) * stepv);
    }
    check_all(out[0], xn);
    check_all(out[1], vn);
  }
}

TEST_CASE("ai.onnx.preview FlexAttention: grouped-query heads, score_mod and prob_mod subgraphs") {
  const int64_t B = 1, Hq = 4, Hkv = 2, L = 3, S = 5, E = 4;
  const std::string preview = "ai.onnx.preview";
  Model m = domain_model(preview);
  m.input("Q", T::FLOAT, {B, Hq, L, E});
  m.input("K", T::FLOAT, {B, Hkv, S, E});
  m.input("V", T::FLOAT, {B, Hkv, S, E});
  auto* n = domain_node(m, preview, "FlexAttention", {"Q", "K", "V"}, {"Y"});
  attr_float(n, "scale", 0.3f);
  // score_mod: a soft cap, cap * tanh(scores / cap), with cap = 2 held by the subgraph.
  auto* sm = n->add_attribute();
  sm->set_name("score_mod");
  sm->set_type(onnx::AttributeProto::GRAPH);
  auto* sg = sm->mutable_g();
  sg->add_input()->set_name("scores");
  auto* cap = sg->add_initializer();
  cap->set_name("cap");
  cap->set_data_type(T::FLOAT);
  cap->add_float_data(2.0f);
  auto add = [](onnx::GraphProto* g, const char* op, std::vector<std::string> ins, std::string out) {
    auto* x = g->add_node();
    x->set_op_type(op);
    for (auto& i : ins) x->add_input(i);
    x->add_output(out);
  };
  add(sg, "Div", {"scores", "cap"}, "scaled");
  add(sg, "Tanh", {"scaled"}, "squashed");
  add(sg, "Mul", {"squashed", "cap"}, "scores_out");
  sg->add_output()->set_name("scores_out");
  // prob_mod: probabilities times 0.5; its input has the name of an outer value (V), which it hides.
  auto* pm = n->add_attribute();
  pm->set_name("prob_mod");
  pm->set_type(onnx::AttributeProto::GRAPH);
  auto* pg = pm->mutable_g();
  pg->add_input()->set_name("V");
  auto* half = pg->add_initializer();
  half->set_name("half");
  half->set_data_type(T::FLOAT);
  half->add_float_data(0.5f);
  add(pg, "Mul", {"V", "half"}, "probs_out");
  pg->add_output()->set_name("probs_out");
  m.output("Y");

  auto values = [](int64_t count, int phase) {
    std::vector<float> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * float(int((i * 5 + size_t(phase)) % 17) - 8);
    return v;
  };
  std::vector<float> q = values(B * Hq * L * E, 1), k = values(B * Hkv * S * E, 2), v = values(B * Hkv * S * E, 3);
  NDArray y = run(m, "flex_attention", {NDArray::from(q, {B, Hq, L, E}), NDArray::from(k, {B, Hkv, S, E}),
                                        NDArray::from(v, {B, Hkv, S, E})})[0];
  REQUIRE(y.shape() == std::vector<int64_t>{B, Hq, L, E});
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t i = 0; i < L; ++i) {
      int64_t kh = h / (Hq / Hkv);
      std::vector<double> p(static_cast<size_t>(S));
      double top = -1e300, sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double d = 0;
        for (int64_t e = 0; e < E; ++e) d += q[size_t((h * L + i) * E + e)] * k[size_t((kh * S + j) * E + e)];
        p[size_t(j)] = 2 * std::tanh(d * 0.3 / 2);
        top = std::max(top, p[size_t(j)]);
      }
      for (auto& x : p) sum += (x = std::exp(x - top));
      for (int64_t e = 0; e < E; ++e) {
        double o = 0;
        for (int64_t j = 0; j < S; ++j) o += 0.5 * p[size_t(j)] / sum * v[size_t((kh * S + j) * E + e)];
        CHECK(y.values<float>()[size_t((h * L + i) * E + e)] == doctest::Approx(o).epsilon(1e-5));
      }
    }
}

TEST_CASE("ai.onnx.ml Binarizer and ArrayFeatureExtractor") {
  const std::string ml = "ai.onnx.ml";
  {
    Model m = domain_model(ml);
    m.input("X", T::FLOAT, {4});
    attr_float(domain_node(m, ml, "Binarizer", {"X"}, {"Y"}), "threshold", 0.5f);
    m.output("Y");
    check_all(run(m, "binarizer", {f32({0.2f, 0.5f, 0.75f, -3.0f})})[0], {0, 0, 1, 0});
  }
  for (bool vector : {false, true}) {
    CAPTURE(vector);
    Model m = domain_model(ml);
    std::vector<int64_t> shape = vector ? std::vector<int64_t>{4} : std::vector<int64_t>{2, 4};
    m.input("X", T::FLOAT, shape);
    m.input("I", T::INT64, {3});
    domain_node(m, ml, "ArrayFeatureExtractor", {"X", "I"}, {"Z"});
    m.output("Z");
    std::vector<float> x{10, 11, 12, 13, 20, 21, 22, 23};
    if (vector) x.resize(4);
    NDArray z = run(m, vector ? "afe_vector" : "afe_matrix",
                    {NDArray::from(x, shape), NDArray::from(std::vector<int64_t>{3, 0, 3}, {3})})[0];
    std::vector<int64_t> want_shape = vector ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{2, 3};
    CHECK(z.shape() == want_shape);
    check_all(z, vector ? std::vector<double>{13, 10, 13} : std::vector<double>{13, 10, 13, 23, 20, 23});
  }
  Model other = domain_model("com.example");
  other.input("X", T::FLOAT, {4});
  domain_node(other, "com.example", "Frobnicate", {"X"}, {"Y"});
  other.output("Y");
  std::string reasons;
  for (auto& item : oi::check_support(other.save(scratch("other_domain"))).items) reasons += item.reason + "\n";
  CHECK(reasons.find("domain 'com.example' is not supported") != std::string::npos);
}

}  // namespace onnx_domain_ops

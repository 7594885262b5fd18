// Matrix products: matmul (NumPy MatMul), dense (ONNX Gemm) and einsum, by registry name through
// every engine (op_check.hpp) on odd shapes against plain loops; shape, dtype and attribute errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_nn_matmul {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;

namespace {

// Deterministic values: small whole numbers for integer types, else in [-1, 1).
std::vector<double> values(int64_t n, uint32_t seed, bool whole) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    double u = double(s >> 8) / double(1u << 24);
    x = whole ? std::floor(u * 11) - 5 : 2 * u - 1;
  }
  return v;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

NDArray make(DataType t, std::vector<int64_t> shape, const std::vector<double>& v) {
  NDArray a(t, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(v[size_t(i)]);
    else if (t == dtype::float64) a.data<double>()[i] = v[size_t(i)];
    else if (t == dtype::int32) a.data<int32_t>()[i] = int32_t(v[size_t(i)]);
    else if (t == dtype::int64) a.data<int64_t>()[i] = int64_t(v[size_t(i)]);
    else throw std::runtime_error("make: unsupported dtype");
  }
  return a;
}

// An input of the given type and shape with values from `seed`; `vals` receives them.
NDArray input(DataType t, std::vector<int64_t> shape, uint32_t seed, std::vector<double>& vals) {
  vals = values(count(shape), seed, !t.is_float());
  return make(t, std::move(shape), vals);
}

// Row-major flat offset of `idx` in `shape`.
int64_t offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx) {
  int64_t o = 0;
  for (size_t d = 0; d < shape.size(); ++d) o = o * shape[d] + idx[d];
  return o;
}
std::vector<int64_t> unravel(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

// NumPy matmul by its definition: promote 1-D operands, broadcast batch axes, drop promoted axes.
OpCheck matmul_case(const std::string& label, DataType t, std::vector<int64_t> as, std::vector<int64_t> bs,
                    uint32_t seed) {
  std::vector<double> a, b;
  NDArray A = input(t, as, seed, a), B = input(t, bs, seed + 1, b);
  bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  size_t rank = std::max(as.size(), bs.size());
  while (as.size() < rank) as.insert(as.begin(), 1);
  while (bs.size() < rank) bs.insert(bs.begin(), 1);
  std::vector<int64_t> full(rank);
  for (size_t d = 0; d + 2 < rank; ++d) full[d] = std::max(as[d], bs[d]);
  int64_t M = as[rank - 2], K = as[rank - 1], N = bs[rank - 1];
  full[rank - 2] = M;
  full[rank - 1] = N;
  std::vector<double> y(size_t(count(full)));
  for (int64_t f = 0; f < count(full); ++f) {
    auto o = unravel(full, f);
    double acc = 0;
    for (int64_t k = 0; k < K; ++k) {
      std::vector<int64_t> ia(rank), ib(rank);
      for (size_t d = 0; d + 2 < rank; ++d) ia[d] = as[d] == 1 ? 0 : o[d], ib[d] = bs[d] == 1 ? 0 : o[d];
      ia[rank - 2] = o[rank - 2], ia[rank - 1] = k;
      ib[rank - 2] = k, ib[rank - 1] = o[rank - 1];
      acc += a[size_t(offset(as, ia))] * b[size_t(offset(bs, ib))];
    }
    y[size_t(f)] = acc;
  }
  std::vector<int64_t> out(full.begin(), full.end() - 2);
  if (!av) out.push_back(M);
  if (!bv) out.push_back(N);
  return OpCheck{.label = label, .op = "matmul", .inputs = {A, B}, .want = {make(t, out, y)}};
}

// Gemm: Y = alpha * A' B' + beta * C, C broadcast from the right.
OpCheck gemm_case(const std::string& label, DataType t, int64_t M, int64_t K, int64_t N, bool ta, bool tb,
                  double alpha, double beta, std::optional<std::vector<int64_t>> cs, uint32_t seed) {
  std::vector<double> a, b, c;
  NDArray A = input(t, ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, seed, a);
  NDArray B = input(t, tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, seed + 1, b);
  std::vector<std::optional<NDArray>> ins = {A, B};
  if (cs) ins.push_back(input(t, *cs, seed + 2, c));
  std::vector<double> y(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += a[size_t(ta ? k * M + i : i * K + k)] * b[size_t(tb ? j * K + k : k * N + j)];
      double bias = 0;
      if (cs) {
        std::vector<int64_t> ci;
        int64_t pos[2] = {i, j};
        for (size_t d = 0; d < cs->size(); ++d) ci.push_back((*cs)[d] == 1 ? 0 : pos[2 - cs->size() + d]);
        bias = c[size_t(offset(*cs, ci))];
      }
      y[size_t(i * N + j)] = alpha * acc + beta * bias;
    }
  ops::Attrs attrs;
  attrs.set_int("transA", ta).set_int("transB", tb).set_float("alpha", alpha).set_float("beta", beta);
  return OpCheck{.label = label, .op = "dense", .inputs = ins, .attrs = attrs, .want = {make(t, {M, N}, y)}};
}

OpCheck einsum_case(const std::string& label, const std::string& eq, std::vector<NDArray> ins, NDArray want) {
  std::vector<std::optional<NDArray>> in(ins.begin(), ins.end());
  return OpCheck{.label = label, .op = "einsum", .inputs = in, .attrs = ops::Attrs().set_string("equation", eq),
                 .want = {std::move(want)}};
}

std::vector<ops::TensorType> types(std::vector<std::pair<DataType, std::vector<int64_t>>> ts) {
  std::vector<ops::TensorType> out;
  for (auto& [t, s] : ts) out.emplace_back(t, s);
  return out;
}

}  // namespace

TEST_CASE("matmul and dense: odd shapes, 1-D operands, batch broadcasting, dtypes") {
  auto f32 = dtype::float32, f64 = dtype::float64;
  nnvm_test::check_ops(
      {
          matmul_case("2-D", f32, {5, 7}, {7, 3}, 1),
          matmul_case("2-D large", f32, {13, 19}, {19, 21}, 2),
          matmul_case("vector x matrix", f32, {7}, {7, 5}, 3),
          matmul_case("matrix x vector", f32, {5, 7}, {7}, 4),
          matmul_case("vector x vector", f64, {9}, {9}, 5),
          matmul_case("batched", f32, {3, 5, 7}, {3, 7, 2}, 6),
          matmul_case("broadcast batch", f32, {2, 1, 3, 4}, {5, 4, 6}, 7),
          matmul_case("vector x batch", f32, {4}, {3, 4, 5}, 8),
          matmul_case("batch x vector", f64, {2, 3, 4}, {4}, 9),
          matmul_case("int32", dtype::int32, {3, 5}, {5, 7}, 10),
          matmul_case("int64 batched", dtype::int64, {2, 3, 5}, {1, 5, 3}, 11),
          gemm_case("plain", f32, 5, 7, 3, false, false, 1.0, 1.0, std::nullopt, 20),
          gemm_case("transA transB alpha beta", f32, 5, 7, 9, true, true, 0.5, -2.0, std::vector<int64_t>{5, 9}, 21),
          gemm_case("C row", f32, 6, 3, 11, false, true, 1.0, 0.25, std::vector<int64_t>{11}, 22),
          gemm_case("C column", f64, 7, 5, 3, true, false, 2.0, 1.0, std::vector<int64_t>{7, 1}, 23),
          gemm_case("C scalar", f32, 3, 4, 5, false, false, 1.0, 3.0, std::vector<int64_t>{}, 24),
          gemm_case("C (1, 1)", f32, 3, 4, 5, false, false, 1.0, 1.0, std::vector<int64_t>{1, 1}, 25),
          gemm_case("int64", dtype::int64, 4, 5, 3, false, true, 2.0, 3.0, std::vector<int64_t>{3}, 26),
          // Large enough for the GPU's shared-memory tiles (64 x 64 per block), with extents that
          // the tiles and the 16-wide steps of k do not divide.
          gemm_case("tiled, ragged", f32, 96, 70, 80, false, false, 1.0, 1.0, std::vector<int64_t>{80}, 27),
          gemm_case("tiled, transA transB", f32, 64, 48, 128, true, true, 0.5, 2.0, std::vector<int64_t>{64, 128}, 28),
          gemm_case("tiled, float64", f64, 40, 33, 50, false, true, 1.0, 0.0, std::nullopt, 29),
      },
      "nn_matmul");
}

TEST_CASE("einsum: matmul, batch matmul, transpose, sums, dot, outer, diagonal, ellipsis") {
  auto f32 = dtype::float32;
  std::vector<double> a, b;
  std::vector<OpCheck> cases;
  {
    NDArray A = input(f32, {3, 5}, 1, a), B = input(f32, {5, 4}, 2, b);
    std::vector<double> y(12, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 5; ++k) y[size_t(i * 4 + j)] += a[size_t(i * 5 + k)] * b[size_t(k * 4 + j)];
    cases.push_back(einsum_case("matmul", "ij,jk->ik", {A, B}, make(f32, {3, 4}, y)));
    cases.push_back(einsum_case("matmul implicit", "ij,jk", {A, B}, make(f32, {3, 4}, y)));
  }
  {
    NDArray A = input(f32, {2, 3, 5}, 3, a), B = input(f32, {2, 5, 4}, 4, b);
    std::vector<double> y(24, 0.0);
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
          for (int k = 0; k < 5; ++k)
            y[size_t((n * 3 + i) * 4 + j)] += a[size_t((n * 3 + i) * 5 + k)] * b[size_t((n * 5 + k) * 4 + j)];
    cases.push_back(einsum_case("batch matmul", "bij, bjk -> bik", {A, B}, make(f32, {2, 3, 4}, y)));
  }
  {
    NDArray A = input(f32, {3, 5, 2}, 5, a);
    std::vector<double> t(30), s(6, 0.0), all(1, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 2; ++k) {
          double x = a[size_t((i * 5 + j) * 2 + k)];
          t[size_t((k * 5 + j) * 3 + i)] = x;
          s[size_t(i * 2 + k)] += x;
          all[0] += x;
        }
    cases.push_back(einsum_case("transpose", "ijk->kji", {A}, make(f32, {2, 5, 3}, t)));
    cases.push_back(einsum_case("sum over an axis", "ijk->ik", {A}, make(f32, {3, 2}, s)));
    cases.push_back(einsum_case("sum all", "ijk->", {A}, make(f32, {}, all)));
    cases.push_back(einsum_case("ellipsis transpose", "...ij->...ji", {A}, make(f32, {3, 2, 5}, [&] {
                                  std::vector<double> y(30);
                                  for (int i = 0; i < 3; ++i)
                                    for (int j = 0; j < 5; ++j)
                                      for (int k = 0; k < 2; ++k) y[size_t((i * 2 + k) * 5 + j)] = a[size_t((i * 5 + j) * 2 + k)];
                                  return y;
                                }())));
  }
  {
    NDArray A = input(f32, {7}, 6, a), B = input(f32, {7}, 7, b);
    std::vector<double> dot(1, 0.0), outer(49);
    for (int i = 0; i < 7; ++i) {
      dot[0] += a[size_t(i)] * b[size_t(i)];
      for (int j = 0; j < 7; ++j) outer[size_t(i * 7 + j)] = a[size_t(i)] * b[size_t(j)];
    }
    cases.push_back(einsum_case("dot", "i,i", {A, B}, make(f32, {}, dot)));
    cases.push_back(einsum_case("outer", "i,j->ij", {A, B}, make(f32, {7, 7}, outer)));
  }
  {
    NDArray A = input(f32, {5, 5}, 8, a);
    std::vector<double> d(5), tr(1, 0.0);
    for (int i = 0; i < 5; ++i) d[size_t(i)] = a[size_t(i * 6)], tr[0] += a[size_t(i * 6)];
    cases.push_back(einsum_case("diagonal", "ii->i", {A}, make(f32, {5}, d)));
    cases.push_back(einsum_case("trace", "ii", {A}, make(f32, {}, tr)));
  }
  {
    // Broadcast "..." axes: (2, 1, 3, 4) and (5, 4, 3) -> (2, 5, 3, 3).
    NDArray A = input(dtype::int64, {2, 1, 3, 4}, 9, a), B = input(dtype::int64, {5, 4, 3}, 10, b);
    std::vector<double> y(90, 0.0);
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 5; ++q)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k)
              y[size_t(((p * 5 + q) * 3 + i) * 3 + j)] += a[size_t((p * 3 + i) * 4 + k)] * b[size_t((q * 4 + k) * 3 + j)];
    cases.push_back(einsum_case("ellipsis broadcast int64", "...ik,...kj->...ij", {A, B}, make(dtype::int64, {2, 5, 3, 3}, y)));
  }
  nnvm_test::check_ops(cases, "nn_einsum");
}

TEST_CASE("matrix products: errors") {
  auto f32 = dtype::float32;
  const auto& mm = ops::default_registry().get("matmul");
  const auto& dense = ops::default_registry().get("dense");
  const auto& es = ops::default_registry().get("einsum");
  CHECK(ops::default_registry().get_by_importer_name("onnx:Gemm").name == "dense");
  CHECK(ops::default_registry().get_by_importer_name("onnx:MatMul").name == "matmul");
  CHECK(error_id([&] { ops::infer_types(mm, types({{f32, {3, 4}}, {f32, {5, 2}}})); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::infer_types(mm, types({{f32, {2, 3, 4}}, {f32, {3, 4, 2}}})); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::infer_types(mm, types({{f32, {3, 4}}, {dtype::float64, {4, 2}}})); }) ==
        "nnvm.ops.input_dtype");
  CHECK(error_id([&] { ops::infer_types(mm, types({{dtype::boolean, {3, 4}}, {dtype::boolean, {4, 2}}})); }) ==
        "nnvm.ops.input_dtype");
  CHECK(error_id([&] { ops::infer_types(dense, types({{f32, {3, 4}}, {f32, {4, 2}}, {f32, {3, 3}}})); }) ==
        "nnvm.ops.input_shape");
  CHECK(error_id([&] {
          ops::infer_types(dense, types({{dtype::int32, {3, 4}}, {dtype::int32, {4, 2}}}),
                           ops::Attrs().set_float("alpha", 0.5));
        }) == "nnvm.ops.attr");
  auto eq = [](const char* e) { return ops::Attrs().set_string("equation", e); };
  CHECK(error_id([&] { ops::infer_types(es, types({{f32, {3, 4}}}), eq("ijk->i")); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::infer_types(es, types({{f32, {3, 4}}}), eq("ij->k")); }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(es, types({{f32, {3, 4}}}), eq("i1->i")); }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(es, types({{f32, {3, 4}}}), eq("ij,jk->ik")); }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(es, types({{f32, {3, 4}}, {f32, {5, 2}}}), eq("ij,jk->ik")); }) ==
        "nnvm.ops.input_shape");
  auto out = ops::infer_types(mm, types({{f32, {2, 1, 3, 4}}, {f32, {5, 4, 6}}}));
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape.size() == 4);
}

}  // namespace ops_nn_matmul

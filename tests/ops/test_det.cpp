// det (include/nnvm/ops/nn/det.hpp) through the interpreter, the C JIT and LLVM (when built),
// against determinants computed here independently of LU: Laplace (cofactor) expansion along
// the first row in double for M up to 7, and for larger M matrices built as P L U (a permutation,
// a unit lower and an upper triangular factor), whose determinant is sign(P) times the product
// of U's diagonal. Batch shapes [], [3], [2, 3]; matrices that need row swaps (zeros on the
// diagonal), singular ones (a zero column at each step, equal rows, all zeros), negative
// determinants, NaN, a 0 x 0 matrix, float64, float16 and bfloat16; the ONNX node tests
// (test_det_2d, test_det_nd); then the error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <functional>

namespace ops_det {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;
using T = ops::TensorType;
const DataType f16 = dtype::float16, bf16 = dtype::bfloat16, f32 = dtype::float32, f64 = dtype::float64;

double get(const NDArray& a, int64_t i) { return nnvm_test::detail::element(a, i); }
void put(NDArray& a, int64_t i, double v) {
  DataType t = a.dtype();
  if (t == f32) a.data<float>()[i] = float(v);
  else if (t == f64) a.data<double>()[i] = v;
  else if (t == f16) a.values<float16>()[i] = float16(float(v));
  else a.values<bfloat16>()[i] = bfloat16(float(v));
}
NDArray filled(DataType t, Dims s, const std::function<double(int64_t)>& f) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) put(a, i, f(i));
  return a;
}
NDArray values(DataType t, Dims s, const std::vector<double>& v) {
  return filled(t, std::move(s), [&](int64_t i) { return v.at(size_t(i)); });
}
// Small integers and halves, so float16 and bfloat16 hold them exactly.
double wavy(int64_t i) { return double((i * 37 + 11) % 23) * 0.5 - 5.5; }

using Matrix = std::vector<std::vector<double>>;

// Laplace expansion along the first row: O(M!), independent of any elimination.
double laplace(const Matrix& a) {
  size_t n = a.size();
  if (n == 0) return 1;
  if (n == 1) return a[0][0];
  double d = 0;
  for (size_t c = 0; c < n; ++c) {
    if (a[0][c] == 0) continue;
    Matrix minor;
    for (size_t r = 1; r < n; ++r) {
      std::vector<double> row;
      for (size_t k = 0; k < n; ++k)
        if (k != c) row.push_back(a[r][k]);
      minor.push_back(row);
    }
    d += (c % 2 ? -1.0 : 1.0) * a[0][c] * laplace(minor);
  }
  return d;
}

// The matrices of x ([*, M, M], read as double), one per batch element.
std::vector<Matrix> matrices(const NDArray& x) {
  const Dims& s = x.shape();
  int64_t m = s.back(), count = m == 0 ? 1 : x.numel() / (m * m);
  if (m == 0)
    for (size_t d = 0; d + 2 < s.size(); ++d) count *= s[d];
  std::vector<Matrix> out(size_t(count), Matrix(size_t(m), std::vector<double>(size_t(m), 0.0)));
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) out[size_t(b)][size_t(i)][size_t(j)] = get(x, (b * m + i) * m + j);
  return out;
}
Dims batch_shape(const NDArray& x) { return Dims(x.shape().begin(), x.shape().end() - 2); }

// Hadamard's bound (the product of the row norms) of the largest matrix: |det| never exceeds it,
// and rounding in the elimination is relative to it, not to det (which may cancel to near 0).
double hadamard(const std::vector<Matrix>& ms) {
  double most = 0;
  for (auto& a : ms) {
    double h = 1;
    for (auto& row : a) {
      double s = 0;
      for (double v : row) s += v * v;
      h *= std::sqrt(s);
    }
    most = std::max(most, h);
  }
  return most;
}

// The case for x with its Laplace determinants; tolerances relative to the type's precision.
OpCheck laplace_case(std::string label, const NDArray& x) {
  std::vector<Matrix> ms = matrices(x);
  std::vector<double> d;
  for (auto& a : ms) d.push_back(laplace(a));
  DataType t = x.dtype();
  double eps = t == f64 ? 1e-13 : t == f32 ? 1e-5 : t == f16 ? 2e-3 : 1e-2;
  return {std::move(label), "det", {x}, {}, {values(t, batch_shape(x), d)}, eps, eps * hadamard(ms) * 0.1};
}

// A deterministic [*, M, M] P L U batch and its determinants: row permutation P (the reversal,
// then rotated by the batch index, a known number of transpositions), L unit lower with entries
// in (-1, 1), U upper with diagonal entries of magnitude in [0.5, 1.5] and alternating signs.
std::pair<NDArray, std::vector<double>> plu(DataType t, Dims batch, int64_t m) {
  int64_t count = nnvm_test::element_count(batch);
  Dims shape = batch;
  shape.push_back(m);
  shape.push_back(m);
  NDArray x(t, shape);
  std::vector<double> dets;
  for (int64_t b = 0; b < count; ++b) {
    Matrix l(size_t(m), std::vector<double>(size_t(m), 0.0)), u = l;
    double d = 1;
    for (int64_t i = 0; i < m; ++i) {
      l[size_t(i)][size_t(i)] = 1;
      for (int64_t j = 0; j < i; ++j) l[size_t(i)][size_t(j)] = double((i * 7 + j * 13 + b * 5) % 17) / 17.0 - 0.5;
      double diag = (0.5 + double((i * 5 + b * 3) % 11) / 10.0) * ((i + b) % 3 == 0 ? -1 : 1);
      u[size_t(i)][size_t(i)] = diag;
      d *= diag;
      for (int64_t j = i + 1; j < m; ++j) u[size_t(i)][size_t(j)] = double((i * 11 + j * 3 + b) % 19) / 19.0 - 0.5;
    }
    // perm[r]: the row of L U that becomes row r. Reversal: floor(m/2) swaps; rotating by s
    // (a cycle of length m, s times): s * (m - 1) transpositions.
    int64_t s = b % m;
    std::vector<int64_t> perm;
    for (int64_t r = 0; r < m; ++r) perm.push_back(((m - 1 - r) + s) % m);
    if (((m / 2) + s * (m - 1)) % 2) d = -d;
    dets.push_back(d);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < m; ++j) {
        double v = 0;
        for (int64_t k = 0; k < m; ++k) v += l[size_t(perm[size_t(r)])][size_t(k)] * u[size_t(k)][size_t(j)];
        put(x, (b * m + r) * m + j, v);
      }
  }
  return {x, dets};
}

}  // namespace

TEST_CASE("det: the ONNX node tests") {
  std::vector<OpCheck> cases;
  cases.push_back({"test_det_2d", "det", {values(f32, {2, 2}, {0, 1, 2, 3})}, {}, {values(f32, {}, {-2})}});
  cases.push_back({"test_det_nd", "det", {values(f32, {3, 2, 2}, {1, 2, 3, 4, 1, 2, 2, 1, 1, 3, 3, 1})}, {},
                   {values(f32, {3}, {-2, -3, -8})}});
  nnvm_test::check_ops(cases, "det_node");
}

TEST_CASE("det: against Laplace expansion") {
  std::vector<OpCheck> cases;
  // Every M up to 4 and 7, each batch shape in float32, and float64 on the [2, 3] batch.
  for (int64_t m : {1, 2, 3, 4, 7})
    for (const Dims& batch : {Dims{}, Dims{3}, Dims{2, 3}})
      for (DataType t : {f32, f64}) {
        if (t == f64 && batch.size() != 2) continue;
        Dims s = batch;
        s.push_back(m);
        s.push_back(m);
        cases.push_back(laplace_case(str_cat("M ", m, " batch rank ", batch.size(), " ", t),
                                     filled(t, s, [m](int64_t i) { return wavy(i + m); })));
      }
  // Row swaps at every step: zeros on the diagonal, the anti-diagonal (det sign from swaps
  // alone), a pivot that is the largest only in magnitude (negative).
  cases.push_back(laplace_case("zero diagonal 2x2", values(f64, {2, 2}, {0, 3, 2, 0})));
  cases.push_back(laplace_case("anti-diagonal 4x4",
                               values(f32, {4, 4}, {0, 0, 0, 2, 0, 0, 3, 0, 0, 5, 0, 0, 7, 0, 0, 0})));
  cases.push_back(laplace_case("anti-diagonal 3x3",
                               values(f32, {3, 3}, {0, 0, 2, 0, 3, 0, 5, 0, 0})));
  cases.push_back(laplace_case("zero diagonal 3x3", values(f32, {3, 3}, {0, 1, 2, 3, 0, 4, 5, 6, 0})));
  cases.push_back(laplace_case("negative pivots", values(f32, {3, 3}, {1, 2, 3, -9, 1, 0, 4, -8, 2})));
  cases.push_back(laplace_case("equal magnitudes (first row wins)", values(f64, {3, 3}, {2, 1, 0, -2, 3, 1, 2, 0, 5})));
  cases.push_back(laplace_case("negative determinant", values(f32, {2, 2}, {1, 2, 3, 4})));
  nnvm_test::check_ops(cases, "det_laplace");
}

TEST_CASE("det: singular matrices") {
  std::vector<OpCheck> cases;
  // A zero column at each position: the elimination meets a zero pivot column at step 0, 1 or
  // 2 and must give exactly 0, not NaN. Then all zeros, equal rows, a rank-1 matrix, and a batch
  // mixing singular and regular matrices.
  for (int64_t c = 0; c < 4; ++c) {
    NDArray x = filled(f32, {4, 4}, [c](int64_t i) { return i % 4 == c ? 0.0 : wavy(i); });
    cases.push_back({str_cat("zero column ", c), "det", {x}, {}, {values(f32, {}, {0})}, 0, 0});
  }
  NDArray z = filled(f64, {3, 3}, [](int64_t) { return 0.0; });
  cases.push_back({"all zeros", "det", {z}, {}, {values(f64, {}, {0})}, 0, 0});
  // Column 1 becomes zero only after eliminating column 0 (it is 2 x column 0; the multipliers
  // 1/2 and -1/4 are exact, so it becomes exactly zero).
  cases.push_back({"zero column after step 0", "det", {values(f32, {3, 3}, {4, 8, 1, 2, 4, 5, -1, -2, 3})}, {},
                   {values(f32, {}, {0})}, 0, 0});
  cases.push_back(laplace_case("equal rows", values(f64, {3, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3})));
  cases.push_back(laplace_case("rank 1", values(f32, {3, 3}, {1, 2, 3, 2, 4, 6, -3, -6, -9})));
  NDArray mixed = filled(f32, {2, 3, 3, 3}, [](int64_t i) { return (i / 9) % 2 ? (i % 3 == 1 ? 0.0 : wavy(i)) : wavy(i); });
  cases.push_back(laplace_case("batch of singular and regular", mixed));
  nnvm_test::check_ops(cases, "det_singular");
}

TEST_CASE("det: larger M built as P L U") {
  std::vector<OpCheck> cases;
  struct Case {
    DataType t;
    Dims batch;
    int64_t m;
  };
  for (const Case& c : std::vector<Case>{{f32, {2}, 9}, {f64, {2, 2}, 16}, {f32, {}, 23}, {f64, {1}, 64}}) {
    auto [x, d] = plu(c.t, c.batch, c.m);
    double tol = c.t == f64 ? 1e-10 : 2e-4;
    cases.push_back({str_cat("P L U M ", c.m, " ", c.t), "det", {x}, {}, {values(c.t, c.batch, d)}, tol, 0});
  }
  nnvm_test::check_ops(cases, "det_plu");
}

TEST_CASE("det: float16 and bfloat16 compute in float32") {
  std::vector<OpCheck> cases;
  cases.push_back(laplace_case("float16 3x3 batch [2]", filled(f16, {2, 3, 3}, wavy)));
  cases.push_back(laplace_case("float16 zero diagonal", values(f16, {3, 3}, {0, 1, 2, 3, 0, 4, 5, 6, 0})));
  // 4x4 determinants of halves reach the thousands: float16 rounds them to a few units.
  cases.push_back(laplace_case("float16 4x4", filled(f16, {4, 4}, [](int64_t i) { return wavy(i) / 4; })));
  cases.push_back(laplace_case("bfloat16 3x3 batch [3]", filled(bf16, {3, 3, 3}, wavy)));
  NDArray zc = filled(f16, {3, 3}, [](int64_t i) { return i % 3 == 1 ? 0.0 : wavy(i); });
  cases.push_back({"float16 zero column", "det", {zc}, {}, {values(f16, {}, {0})}, 0, 0});
  nnvm_test::check_ops(cases, "det_half");
}

TEST_CASE("det: NaN propagates, 0 x 0 is 1") {
  std::vector<OpCheck> cases;
  for (int64_t at : {0, 4, 8}) {
    NDArray x = filled(f32, {3, 3}, [at](int64_t i) { return i == at ? NAN : wavy(i); });
    cases.push_back({str_cat("NaN at ", at), "det", {x}, {}, {values(f32, {}, {NAN})}});
  }
  NDArray zc = filled(f32, {3, 3}, [](int64_t i) { return i == 3 ? NAN : i % 3 == 0 ? 0.0 : wavy(i); });
  cases.push_back({"NaN in an otherwise zero column", "det", {zc}, {}, {values(f32, {}, {NAN})}});
  cases.push_back({"0 x 0", "det", {NDArray(f32, {2, 0, 0})}, {}, {values(f32, {2}, {1, 1})}});
  nnvm_test::check_ops(cases, "det_edge");
}

TEST_CASE("det: the microcontroller and GPU recipes") {
  // The microcontroller recipe optimizing for size computes cheap internal stages where they are
  // read; the elimination steps must keep their buffers, or each step would recompute the one
  // before at every read (5^M terms). M = 16 stays a few stages of C; run in the interpreter.
  // The generic GPU recipe binds every stage; the interpreter runs the bound loops serially.
  auto [x, d] = plu(f32, {2}, 16);
  NDArray want = values(f32, {2}, d);
  target::Target mcu = target::parse_target("c-standalone -mcpu=cortex-m4");
  mcu.opt_for = target::OptFor::size;
  for (const target::Target& t : {mcu, target::parse_target("cuda -arch=sm_90")}) {
    CAPTURE(t.family == target::Family::gpu);
    ops::BuiltOp built = ops::build(ops::get_op("det"), {T(f32, {2, 16, 16})}, {}, t);
    CHECK(ir::to_string(built.func).size() < 1000000);
    NDArray got(f32, {2});
    std::vector<BufferView> views{x.view(), got.view()};
    target::interpret(built.func, std::span<const BufferView>(views));
    CHECK(nnvm_test::detail::compare_arrays(got, want, 2e-4, 0) == "");
  }
}

TEST_CASE("det: shapes and error ids") {
  auto out = ops::infer_types(ops::get_op("det"), {T(f32, {2, 3, 5, 5})});
  REQUIRE(out.size() == 1);
  CHECK(out[0].dtype == f32);
  CHECK(out[0].shape.size() == 2);
  CHECK(ops::infer_types(ops::get_op("det"), {T(f16, {4, 4})})[0].dtype == f16);
  CHECK(ops::infer_types(ops::get_op("det"), {T(f64, {4, 4})})[0].shape.empty());
  CHECK(ops::get_op_by_importer_name("onnx:Det").name == "det");

  auto err = [](DataType t, Dims s) { return infer_error("det", {T(t, s)}); };
  CHECK(err(f32, {64, 64}) == "(no error)");
  CHECK(err(bf16, {2, 2}) == "(no error)");
  CHECK(err(f32, {3}) == "nnvm.ops.input_shape");       // rank 1
  CHECK(err(f32, {}) == "nnvm.ops.input_shape");        // rank 0
  CHECK(err(f32, {2, 3}) == "nnvm.ops.input_shape");    // not square
  CHECK(err(f32, {4, 3, 2}) == "nnvm.ops.input_shape");
  CHECK(err(f32, {65, 65}) == "nnvm.ops.input_shape");  // M above the limit
  CHECK(err(dtype::int32, {2, 2}) == "nnvm.ops.input_dtype");
  CHECK(err(dtype::int64, {2, 2}) == "nnvm.ops.input_dtype");
  CHECK(err(dtype::boolean, {2, 2}) == "nnvm.ops.input_dtype");
  CHECK(err(dtype::float8e4m3fn, {2, 2}) == "nnvm.ops.input_dtype");
  // A symbolic M cannot be unrolled; a symbolic batch can.
  ir::Var n("n");
  CHECK(infer_error("det", {T(f32, std::vector<ir::Expr>{ir::Expr(int64_t(2)), n, n})}) == "nnvm.ops.input_shape");
  CHECK(infer_error("det", {T(f32, std::vector<ir::Expr>{n, ir::Expr(int64_t(3)), ir::Expr(int64_t(3))})}) ==
        "(no error)");
  // The refusal names input X.
  try {
    ops::infer_types(ops::get_op("det"), {T(f32, {65, 65})});
    FAIL("no error");
  } catch (const UserError& e) {
    bool names_x = false;
    for (auto& c : e.context()) names_x = names_x || c == "input X";
    CHECK(names_x);
  }
}

}  // namespace ops_det

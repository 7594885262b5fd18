// A tiny reference evaluator for scalar integer IR and a generator of random integer
// expressions, shared by the simplifier and interval tests. The evaluator is written from the
// IR semantics (C truncating division, wrapping of types narrower than 32 bits), independently
// of the code under test.
#pragma once

#include <optional>
#include <random>
#include <unordered_map>

#include "support/pch.hpp"

namespace ir_test {

using namespace nnvm;
using namespace nnvm::ir;

using Env = std::unordered_map<const VarNode*, int64_t>;

// Wraps `v` to the width of integer type `t` (int64 is left alone).
inline int64_t wrap_to(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t m = (uint64_t(1) << t.bits) - 1, u = uint64_t(v) & m;
  if (t.is_uint()) return int64_t(u);
  return (u >> (t.bits - 1)) ? int64_t(u | ~m) : int64_t(u);
}

// The value of `e`, or nothing when it is undefined (division by zero, int64 overflow).
inline std::optional<int64_t> eval(const Expr& e, const Env& env) {
  DataType t = e.dtype();
  auto bin = [&](const Expr& a, const Expr& b, auto f) -> std::optional<int64_t> {
    auto x = eval(a, env), y = eval(b, env);
    if (!x || !y) return std::nullopt;
    return f(*x, *y);
  };
  auto arith = [&](const Expr& a, const Expr& b, auto f) -> std::optional<int64_t> {
    auto x = eval(a, env), y = eval(b, env);
    if (!x || !y) return std::nullopt;
    __int128 r = f(__int128(*x), __int128(*y));
    if (t.bits >= 32 && t.is_int() && (r > INT64_MAX || r < INT64_MIN)) return std::nullopt;
    if (t.bits == 32 && t.is_int() && (r > INT32_MAX || r < INT32_MIN)) return std::nullopt;
    return wrap_to(t, int64_t(r));
  };
  if (auto* c = e.as<IntImm>()) return c->value;
  if (auto* c = e.as<UIntImm>()) return int64_t(c->value);
  if (auto* v = e.as<VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  if (auto* o = e.as<Add>()) return arith(o->a, o->b, [](__int128 x, __int128 y) { return x + y; });
  if (auto* o = e.as<Sub>()) return arith(o->a, o->b, [](__int128 x, __int128 y) { return x - y; });
  if (auto* o = e.as<Mul>()) return arith(o->a, o->b, [](__int128 x, __int128 y) { return x * y; });
  if (auto* o = e.as<Div>()) {
    auto y = eval(o->b, env);
    if (!y || *y == 0) return std::nullopt;
    return arith(o->a, o->b, [](__int128 x, __int128 q) { return x / q; });
  }
  if (auto* o = e.as<Mod>()) {
    auto y = eval(o->b, env);
    if (!y || *y == 0) return std::nullopt;
    return arith(o->a, o->b, [](__int128 x, __int128 q) { return x % q; });
  }
  if (auto* o = e.as<Min>()) return bin(o->a, o->b, [](int64_t x, int64_t y) { return x < y ? x : y; });
  if (auto* o = e.as<Max>()) return bin(o->a, o->b, [](int64_t x, int64_t y) { return x > y ? x : y; });
  if (auto* o = e.as<EQ>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x == y; });
  if (auto* o = e.as<NE>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x != y; });
  if (auto* o = e.as<LT>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x < y; });
  if (auto* o = e.as<LE>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x <= y; });
  if (auto* o = e.as<GT>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x > y; });
  if (auto* o = e.as<GE>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x >= y; });
  if (auto* o = e.as<And>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x && y; });
  if (auto* o = e.as<Or>()) return bin(o->a, o->b, [](int64_t x, int64_t y) -> int64_t { return x || y; });
  if (auto* o = e.as<Not>()) {
    auto x = eval(o->a, env);
    if (!x) return std::nullopt;
    return int64_t(!*x);
  }
  if (auto* o = e.as<Select>()) {  // only the chosen branch is evaluated
    auto c = eval(o->condition, env);
    if (!c) return std::nullopt;
    return eval(*c ? o->true_value : o->false_value, env);
  }
  if (auto* o = e.as<Cast>()) {
    auto x = eval(o->value, env);
    if (!x) return std::nullopt;
    return wrap_to(t, *x);
  }
  if (auto* o = e.as<Let>()) {
    auto x = eval(o->value, env);
    if (!x) return std::nullopt;
    Env inner = env;
    inner[o->var.get()] = *x;
    return eval(o->body, inner);
  }
  FAIL("the test evaluator does not know node ", to_string(e));
  return std::nullopt;
}

// Random integer expressions of one dtype over given variables. Operand magnitudes stay small
// enough that int64 never overflows; divisors are nonzero constants.
struct RandomExpr {
  std::mt19937_64 rng;
  std::vector<Var> vars;
  DataType t;

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  Expr constant(int lo, int hi) { return make_int_const(t, pick(lo, hi)); }
  Expr leaf() {
    if (pick(0, 3) == 0) return constant(-9, 9);
    return vars[size_t(pick(0, int(vars.size()) - 1))];
  }
  Expr nonzero() {
    int v = pick(1, 9);
    return make_int_const(t, pick(0, 3) == 0 ? -v : v);
  }
  Expr cond(int depth) {
    Expr a = gen(depth), b = gen(depth);
    switch (pick(0, 5)) {
      case 0: return a < b;
      case 1: return a <= b;
      case 2: return a > b;
      case 3: return a >= b;
      case 4: return a == b;
      default: return a != b;
    }
  }
  Expr gen(int depth) {
    if (depth <= 0 || pick(0, 5) == 0) return leaf();
    int d = depth - 1;
    switch (pick(0, 11)) {
      case 0: case 1: return gen(d) + gen(d);
      case 2: return gen(d) - gen(d);
      case 3: return gen(d) * constant(-4, 8);
      case 4: return gen(d) * gen(d);
      case 5: return gen(d) / nonzero();
      case 6: return gen(d) % nonzero();
      case 7: return min(gen(d), gen(d));
      case 8: return max(gen(d), gen(d));
      case 9: return select(cond(d), gen(d), gen(d));
      case 10: {  // an index-like affine form: a*c + b with b in [0, c)
        Expr c = make_int_const(t, pick(1, 8));
        return gen(d) * c + gen(d) % c;
      }
      default: {
        Var v("t", t);
        return Let::make(v, gen(d), v * constant(1, 3) + gen(d));
      }
    }
  }
};

}  // namespace ir_test

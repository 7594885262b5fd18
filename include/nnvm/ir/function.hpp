// A lowered kernel: flat loop-nest IR plus its signature. This is what the interpreter runs
// and what every emitter translates.
#pragma once

#include "nnvm/ir/stmt.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

struct LoweredFunc {
  std::string name;
  // Tensor arguments in the caller's order: inputs and outputs alike, each a compact row-major
  // buffer whose shape may contain symbolic sizes.
  std::vector<Buffer> params;
  // Symbolic sizes used by params' shapes, in first-use order. Callers never pass them: they
  // are bound from the shapes of the buffers given at call time.
  std::vector<Var> size_vars;
  Stmt body;
  // Which op and which schedule produced this kernel, for comments in emitted code.
  std::string origin;
  // Per param: whether the body stores into it. Empty means unknown (every param may be
  // written). Buffers that are only read may share memory; see target::bind_arguments.
  std::vector<bool> written;
  bool writes(size_t param) const { return written.empty() || param >= written.size() || written[param]; }
};

}  // namespace ir
NNVM_END_NAMESPACE

// Logical ops on bools with broadcasting: ONNX And, Or, Xor.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef and_def() {
  return broadcast_binary_def(
      "and", "onnx:And", "A and B for bools, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a && b; }, DtypeKind::boolean);
}
inline OpDef or_def() {
  return broadcast_binary_def(
      "or", "onnx:Or", "A or B for bools, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a || b; }, DtypeKind::boolean);
}
inline OpDef xor_def() {
  return broadcast_binary_def(
      "xor", "onnx:Xor", "A xor B for bools, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a != b; }, DtypeKind::boolean);
}

}  // namespace ops
NNVM_END_NAMESPACE

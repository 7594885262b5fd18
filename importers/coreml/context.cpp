#include "context.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

graph::Value Context::affine(graph::Value x, double scale, double shift, const std::string& suffix) {
  if (scale != 1.0) x = op("mul", {x, scalar_like(scale, x, suffix + "_scale")}, {}, suffix + "_scaled");
  if (shift != 0.0) x = op("add", {x, scalar_like(shift, x, suffix + "_shift")}, {}, suffix + "_shifted");
  return x;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE

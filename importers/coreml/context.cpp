#include "context.hpp"

#include "nnvm/importers/scalar_constant.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

std::vector<std::string> Context::at(const std::string& name) const {
  std::vector<std::string> out = where_;
  if (!name.empty()) out.push_back("attribute " + quoted(name));
  return out;
}

void Context::bad_attribute(const std::string& name, const std::string& why) const {
  throw ImportError("nnvm.coreml.attribute", why, at(name));
}

void Context::unsupported(const std::string& name, const std::string& why) const {
  throw ImportError("nnvm.coreml.unsupported", why, at(name));
}

void Context::bad_shape(const std::string& why) const { throw ImportError("nnvm.coreml.shape", why, where_); }

graph::Value Context::op(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs,
                         const std::string& suffix) {
  return a_.builder()
      .op_outputs(op, std::move(inputs), std::move(attrs), suffix.empty() ? name_ : a_.claim(name_ + "/" + suffix))
      .front();
}

graph::Value Context::constant(NDArray data, const std::string& suffix) {
  return a_.builder().constant(a_.claim(name_ + "/" + suffix), std::move(data));
}

graph::Value Context::int64s(const std::vector<int64_t>& values, const std::string& suffix) {
  return constant(NDArray::from(values, {int64_t(values.size())}), suffix);
}

graph::Value Context::scalar_like(double value, const graph::Value& like, const std::string& suffix) {
  return constant(importers::scalar_constant("coreml", type(like).dtype, value), suffix);
}

graph::Value Context::affine(graph::Value x, double scale, double shift, const std::string& suffix) {
  if (scale != 1.0) x = op("mul", {x, scalar_like(scale, x, suffix + "_scale")}, {}, suffix + "_scaled");
  if (shift != 0.0) x = op("add", {x, scalar_like(shift, x, suffix + "_shift")}, {}, suffix + "_shifted");
  return x;
}

graph::Value Context::reshape(graph::Value x, const std::vector<int64_t>& shape, const std::string& suffix) {
  return op("reshape", {x, int64s(shape, suffix.empty() ? "shape" : suffix + "_shape")}, {}, suffix);
}

std::vector<int64_t> Context::shape(const graph::Value& v) const {
  std::vector<int64_t> out;
  for (auto& e : type(v).shape) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) bad_shape("an input's shape is not known when importing");
    out.push_back(*c);
  }
  return out;
}

int64_t Context::axis(int64_t axis, int64_t rank, const std::string& attribute) const {
  if (axis < -rank || axis >= rank)
    bad_attribute(attribute, str_cat("axis ", axis, " is outside a rank-", rank, " input"));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE

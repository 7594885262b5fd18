#include "description.hpp"

#include "context.hpp"

#include "nnvm/limits.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

DeclaredArray declared_array(const nnvm_coreml_spec::FeatureDescription& f, const std::vector<std::string>& where) {
  using A = nnvm_coreml_spec::ArrayFeatureType;
  if (!f.type().has_multiarraytype()) {
    const auto* field = nnvm_coreml_spec::FeatureType::GetDescriptor()->FindFieldByNumber(int(f.type().Type_case()));
    throw ImportError("nnvm.coreml.unsupported",
                      str_cat("feature ", quote(f.name()), " is of type ", field ? field->name() : "(none)",
                              "; nnvm reads multi-array features only"),
                      where);
  }
  const A& a = f.type().multiarraytype();
  DeclaredArray out;
  switch (a.datatype()) {
    case A::FLOAT16: out.dtype = dtype::float16; break;
    case A::DOUBLE: out.dtype = dtype::float64; break;
    case A::INT32: out.dtype = dtype::int32; break;
    case A::INT8: out.dtype = dtype::int8; break;
    default: out.dtype = dtype::float32;  // FLOAT32, and INVALID as Core ML reads it
  }
  if (a.shape_size() > 0) {
    out.shape.assign(a.shape().begin(), a.shape().end());
  } else if (a.has_enumeratedshapes() && a.enumeratedshapes().shapes_size() > 0) {
    const auto& s = a.enumeratedshapes().shapes(0).shape();
    out.shape.assign(s.begin(), s.end());
  } else if (a.has_shaperange()) {
    for (auto& r : a.shaperange().sizeranges()) out.shape.push_back(int64_t(r.lowerbound()));
  }
  for (int64_t e : out.shape)
    if (e < 0) throw ImportError("nnvm.coreml.shape", str_cat("feature ", quote(f.name()), " has extent ", e), where);
  return out;
}

void check_input_shape_names(const ImportOptions& options, const nnvm_coreml_spec::ModelDescription& d,
                             const std::string& label) {
  for (auto& [name, unused] : options.input_shapes) {
    bool found = false;
    for (auto& in : d.input()) found = found || in.name() == name;
    if (!found)
      throw ImportError("nnvm.coreml.shape",
                        str_cat("ImportOptions::input_shapes names '", quote(name), "', which is not an input"),
                        {label});
  }
}

std::vector<ir::Expr> input_extents(const std::vector<int64_t>& shape, DataType dtype,
                                    const std::vector<std::string>& where) {
  std::vector<ir::Expr> extents;
  for (int64_t e : shape) {
    if (e < 0) throw ImportError("nnvm.coreml.shape", str_cat("input extent ", e, " is negative"), where);
    extents.emplace_back(e);
  }
  if (!checked_tensor_bytes(shape, uint64_t(dtype.bytes())))
    throw ImportError("nnvm.coreml.shape", "the input is larger than 2^48 bytes", where);
  return extents;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE

// ML Program (MIL) ops onto nnvm ops. An op's inputs are named arguments bound to values of the
// program (earlier ops' outputs, function inputs) or to constants (`const` ops, immediate
// values); parameters such as strides or axes must be constants, tensors may be either.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "context.hpp"
#include "coreml.pb.h"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

using MilOp = nnvm_coreml_spec::Operation;

// A program value known at import time: a tensor, or strings (pad_type, dtype names).
struct MilConst {
  NDArray array;
  std::vector<std::string> strings;
  bool is_string = false;
};

// What a MIL op's arguments may be bound to: a graph value or a constant.
struct MilBinding {
  std::optional<graph::Value> value;
  const MilConst* constant = nullptr;
};

class OpContext : public Context {
 public:
  using Resolve = std::function<MilBinding(const nnvm_coreml_spec::Argument::Binding&, const std::vector<std::string>&)>;
  using Materialize = std::function<graph::Value(const MilConst&, const std::string&)>;

  OpContext(const MilOp& op, Resolve resolve, Materialize materialize, importers::GraphAssembly& assembly,
            std::vector<std::string> where, std::string graph_name)
      : Context(assembly, std::move(where), std::move(graph_name)),
        op_(op),
        resolve_(std::move(resolve)),
        materialize_(std::move(materialize)) {}

  const MilOp& mil_op() const { return op_; }
  bool has(const std::string& name) const { return op_.inputs().count(name) > 0; }

  // The tensor bound to argument `name` (a constant becomes a graph constant); ImportError
  // "nnvm.coreml.graph" when the op lacks a required argument.
  graph::Value tensor(const std::string& name) const;
  std::optional<graph::Value> optional_tensor(const std::string& name) const;
  // Every tensor bound to a list argument (concat's values).
  std::vector<graph::Value> tensors(const std::string& name) const;

  // Constant parameters, with a fallback when absent. ImportError "nnvm.coreml.unsupported"
  // when the argument is bound to a computed value, "nnvm.coreml.attribute" for the wrong kind.
  std::vector<int64_t> ints(const std::string& name, std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  int64_t integer(const std::string& name, std::optional<int64_t> fallback = std::nullopt) const;
  double real(const std::string& name, std::optional<double> fallback = std::nullopt) const;
  bool flag(const std::string& name, std::optional<bool> fallback = std::nullopt) const;
  std::string text(const std::string& name, std::optional<std::string> fallback = std::nullopt) const;

 private:
  const MilConst& constant_of(const std::string& name) const;
  std::vector<MilBinding> bindings(const std::string& name) const;

  const MilOp& op_;
  Resolve resolve_;
  Materialize materialize_;
};

using OpConverter = std::function<std::vector<graph::Value>(OpContext&)>;

// The table: MIL op type -> converter (mil_ops.cpp). `const` is the driver's own.
const std::map<std::string, OpConverter>& op_converters();

// A MIL value (an immediate tensor or a blob in weight.bin) as a constant. ImportError
// "nnvm.coreml.weights" / "nnvm.coreml.shape" / "nnvm.coreml.unsupported" with `where`.
MilConst read_mil_value(const nnvm_coreml_spec::Value& v, const std::string& model_dir,
                        const std::vector<std::string>& where);

}  // namespace coreml_import
NNVM_END_NAMESPACE

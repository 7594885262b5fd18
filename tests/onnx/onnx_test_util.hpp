// Tiny ONNX models written with libonnx's generated classes, saved under a scratch directory.
#pragma once

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nnvm/graph/graph.hpp"
#include "nnvm/onnx/importer.hpp"

namespace onnx_test {

namespace fs = std::filesystem;

inline fs::path scratch_root() {
  return fs::temp_directory_path() / ("nnvm_onnx_tests_" + std::to_string(::getpid()));
}
// Removes the process's scratch directory (with its sparse 2 GiB file) when the tests end.
inline struct ScratchCleanup {
  ~ScratchCleanup() {
    std::error_code ec;
    fs::remove_all(scratch_root(), ec);
  }
} scratch_cleanup;

// A fresh directory per test case, below one per process.
inline fs::path scratch(const std::string& name) {
  fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Model {
  onnx::ModelProto m;

  explicit Model(int64_t opset = 18) {
    m.set_ir_version(8);
    m.set_producer_name("nnvm-test");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m.mutable_graph()->set_name("test");
  }
  onnx::GraphProto& g() { return *m.mutable_graph(); }

  // dims: a number, or -1 for a dim_param named by `params` in order.
  onnx::ValueInfoProto* input(const std::string& name, int elem, std::vector<int64_t> dims,
                              std::vector<std::string> params = {}) {
    auto* v = g().add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* s = t->mutable_shape();
    size_t p = 0;
    for (int64_t d : dims) {
      auto* dim = s->add_dim();
      if (d >= 0) dim->set_dim_value(d);
      else if (p < params.size()) dim->set_dim_param(params[p++]);
    }
    return v;
  }
  void output(const std::string& name) { g().add_output()->set_name(name); }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "") {
    auto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  onnx::TensorProto* initializer(const std::string& name, int elem, std::vector<int64_t> dims) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  std::string save(const fs::path& dir, const std::string& file = "model.onnx") const {
    std::string path = (dir / file).string();
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
  }
};

inline onnx::AttributeProto* attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
  return a;
}
inline onnx::AttributeProto* attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
  return a;
}
inline onnx::AttributeProto* attr_float(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
  return a;
}
inline onnx::AttributeProto* attr_floats(onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (auto x : v) a->add_floats(x);
  return a;
}
inline onnx::AttributeProto* attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
  return a;
}
inline onnx::AttributeProto* attr_tensor(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  return a;
}

inline void set_raw(onnx::TensorProto* t, const void* data, size_t bytes) {
  t->set_raw_data(std::string(static_cast<const char*>(data), bytes));
}

// The error an import throws: id and full text; "(no error)" when none.
template <class F>
std::pair<std::string, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const nnvm::Error& e) {
    return {e.id(), e.what()};
  }
  return {"(no error)", ""};
}

inline const nnvm::graph::Node& producer(const nnvm::graph::Graph& g, const nnvm::graph::Value& v) { return g.node(v); }

inline std::vector<int64_t> const_shape(const nnvm::ops::TensorType& t) {
  std::vector<int64_t> out;
  for (auto& e : t.shape) {
    auto* c = nnvm::ir::as_const_int(nnvm::ir::simplify(e));
    out.push_back(c ? *c : -1);
  }
  return out;
}

// A subgraph attribute (If's branches, Loop's and Scan's body) and a node inside a subgraph.
inline onnx::AttributeProto* attr_graph(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a;
}
inline onnx::NodeProto* sub_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                                 std::vector<std::string> outs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}
// A subgraph input (types are taken from the node's operands, so none is declared).
inline void sub_input(onnx::GraphProto* g, const std::string& name) { g->add_input()->set_name(name); }

// An array's elements as a vector, to compare with a plain loop's result.
template <class E>
std::vector<E> elements(const nnvm::NDArray& a) {
  auto v = a.values<E>();
  return {v.begin(), v.end()};
}

}  // namespace onnx_test

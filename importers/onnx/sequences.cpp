// ONNX sequences of tensors whose length and element shapes are known at compile time: the
// sequence ops evaluated on lists of element values, SequenceMap inlined per element, a Loop
// that carries a sequence unrolled.
#include "importer_class.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

void Importer::add_sequence_input(const std::string& name, const ::onnx::TypeProto& type,
                                  const std::vector<std::string>& where) {
  auto it = options_.sequence_inputs.find(name);
  if (it == options_.sequence_inputs.end())
    throw ImportError("nnvm.onnx.shape",
                      "the input is a sequence; nnvm compiles sequences whose length and element shapes are known, so "
                      "give them (ImportOptions::sequence_inputs)",
                      where);
  DataType dtype = *dtype_of_code(type.sequence_type().elem_type().tensor_type().elem_type());
  Sequence& s = sequences_[name];
  for (size_t k = 0; k < it->second.size(); ++k) {
    std::vector<ir::Expr> shape;
    for (int64_t e : it->second[k]) shape.emplace_back(e);
    check_input_size(dtype, shape, where);
    s.push_back(guarded(where, [&] { return a_->builder().input(a_->claim(str_cat(name, "[", k, "]")), dtype, shape); }));
  }
}

void Importer::refuse_sequence(const NodeProto& n, const std::string& name) {
  throw ImportError("nnvm.onnx.unsupported",
                    str_cat("input '", printable(name), "' is a sequence, which ", n.op_type(), " does not take"), where_);
}

const Importer::Sequence& Importer::sequence(const NodeProto& n, int k) {
  if (k >= n.input_size() || n.input(k).empty())
    throw ImportError("nnvm.onnx.graph", str_cat(n.op_type(), "'s input ", k, " is missing"), where_);
  auto it = sequences_.find(n.input(k));
  if (it == sequences_.end())
    throw ImportError("nnvm.onnx.graph", str_cat(n.op_type(), "'s input '", printable(n.input(k)), "' is not a sequence"),
                      where_);
  return it->second;
}

std::vector<int64_t> Importer::constant_ints(const NodeProto& n, int k, const std::string& what) {
  graph::Value v = operand(n, k);
  const NDArray* d = data(v);
  if (!d) {
    std::string from = input_behind(v);
    throw ImportError("nnvm.graph.not_constant",
                      str_cat(n.op_type(), "'s ", what, " must be known at compile time (nnvm sequences have a length "
                              "and elements known at compile time), but it is ",
                              from.empty() ? "computed at run time" : "computed from graph input " + from),
                      where_);
  }
  // ONNX gives positions and split sizes as int32 or int64; anything else would be misread.
  if (d->dtype() != dtype::int32 && d->dtype() != dtype::int64)
    throw ImportError("nnvm.onnx.shape", str_cat(n.op_type(), "'s ", what, " is ", d->dtype(), "; it must be int32 or int64"),
                      where_);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < d->numel(); ++i)
    out.push_back(d->dtype() == dtype::int32 ? d->data<int32_t>()[i] : d->data<int64_t>()[i]);
  return out;
}

size_t Importer::position(const NodeProto& n, int k, size_t length, bool inserting) {
  if (k >= n.input_size() || n.input(k).empty()) return inserting ? length : length - 1;
  std::vector<int64_t> p = constant_ints(n, k, "position");
  int64_t len = int64_t(length), at = p.size() == 1 ? p[0] : INT64_MIN;
  if (at < -len || at > (inserting ? len : len - 1))
    throw ImportError("nnvm.onnx.attribute",
                      str_cat(n.op_type(), "'s position is ", p.size() == 1 ? str_cat(at) : std::string("not one value"),
                              " for a sequence of ", length),
                      where_);
  return size_t(at < 0 ? at + len : at);
}

std::vector<graph::Value> Importer::sequence_op(const NodeProto& n, std::map<size_t, Sequence>& outs) {
  const std::string& op = n.op_type();
  if (op == "SequenceConstruct") {
    Sequence s;
    for (int k = 0; k < n.input_size(); ++k) s.push_back(operand(n, k));
    outs[0] = std::move(s);
  } else if (op == "SequenceEmpty") {
    outs[0] = {};
  } else if (op == "SequenceInsert") {
    Sequence s = sequence(n, 0);
    s.insert(s.begin() + ptrdiff_t(position(n, 2, s.size(), true)), operand(n, 1));
    outs[0] = std::move(s);
  } else if (op == "SequenceErase") {
    Sequence s = sequence(n, 0);
    if (s.empty()) throw ImportError("nnvm.onnx.shape", "SequenceErase of an empty sequence", where_);
    s.erase(s.begin() + ptrdiff_t(position(n, 1, s.size(), false)));
    outs[0] = std::move(s);
  } else if (op == "SequenceAt") {
    const Sequence& s = sequence(n, 0);
    if (s.empty()) throw ImportError("nnvm.onnx.shape", "SequenceAt of an empty sequence", where_);
    if (n.input_size() < 2) throw ImportError("nnvm.onnx.graph", "SequenceAt has no position input", where_);
    return {s[position(n, 1, s.size(), false)]};
  } else if (op == "SequenceLength") {
    return {constant("length", NDArray::from(std::vector<int64_t>{int64_t(sequence(n, 0).size())}, {}))};
  } else if (op == "ConcatFromSequence") {
    return {concat_from_sequence(n)};
  } else if (op == "SplitToSequence") {
    outs[0] = split_to_sequence(n);
  } else if (op == "SequenceMap") {
    return sequence_map(n, outs);
  }
  return {};
}

graph::Value Importer::concat_from_sequence(const NodeProto& n) {
  Sequence s = sequence(n, 0);
  if (s.empty()) throw ImportError("nnvm.onnx.shape", "ConcatFromSequence of an empty sequence", where_);
  int64_t axis = int_attribute(n, "axis").value_or(0);
  if (int_attribute(n, "new_axis").value_or(0) != 0) {
    int64_t r = int64_t(type(s[0]).shape.size()) + 1;
    graph::Value axes = constant("axis", NDArray::from(std::vector<int64_t>{checked_axis(axis, r, "axis")}, {1}));
    for (size_t k = 0; k < s.size(); ++k) s[k] = op("Unsqueeze", {s[k], axes}, {}, str_cat("element", k)).at(0);
    axis = checked_axis(axis, r, "axis");
  }
  return s.size() == 1 ? s[0] : op("Concat", s, ops::Attrs().set_int("axis", axis), "concat").at(0);
}

Importer::Sequence Importer::split_to_sequence(const NodeProto& n) {
  graph::Value x = operand(n, 0);
  ops::TensorType t = type(x);
  int64_t axis = checked_axis(int_attribute(n, "axis").value_or(0), int64_t(t.shape.size()), "axis");
  const int64_t* extent = ir::as_const_int(ir::simplify(t.shape[size_t(axis)]));
  if (!extent) throw ImportError("nnvm.onnx.shape", "SplitToSequence needs the split axis's extent at compile time", where_);
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (n.input_size() < 2 || n.input(1).empty()) {
    sizes.assign(size_t(*extent), 1);
    squeeze = int_attribute(n, "keepdims").value_or(1) == 0;
  } else if (type(operand(n, 1)).shape.empty()) {  // a chunk size; the last chunk may be smaller
    int64_t chunk = constant_ints(n, 1, "split").at(0);
    if (chunk <= 0) throw ImportError("nnvm.onnx.attribute", str_cat("SplitToSequence's split is ", chunk), where_);
    for (int64_t at = 0; at < *extent; at += chunk) sizes.push_back(std::min(chunk, *extent - at));
  } else {
    sizes = constant_ints(n, 1, "split");
  }
  Sequence pieces;
  if (sizes.size() == 1) {
    pieces = {x};
  } else {
    graph::Value s = constant("split", NDArray::from(sizes, {int64_t(sizes.size())}));
    pieces = op("Split", {x, s}, ops::Attrs().set_int("axis", axis), "split");
  }
  if (squeeze) {
    graph::Value axes = constant("axes", NDArray::from(std::vector<int64_t>{axis}, {1}));
    for (size_t k = 0; k < pieces.size(); ++k) pieces[k] = op("Squeeze", {pieces[k], axes}, {}, str_cat("piece", k)).at(0);
  }
  return pieces;
}

std::vector<graph::Value> Importer::sequence_map(const NodeProto& n, std::map<size_t, Sequence>& outs) {
  const ::onnx::GraphProto& body = subgraph(n, "body");
  size_t length = sequence(n, 0).size();
  for (int k = 1; k < n.input_size(); ++k)
    if (sequences_.count(n.input(k)) && sequence(n, k).size() != length)
      throw ImportError("nnvm.onnx.shape",
                        str_cat("SequenceMap's input ", k, " has ", sequence(n, k).size(), " elements, input 0 has ",
                                length),
                        where_);
  for (int k = 0; k < n.output_size(); ++k) outs[size_t(k)] = {};
  for (size_t e = 0; e < length; ++e) {
    std::vector<graph::Value> inputs;
    for (int k = 0; k < n.input_size(); ++k)
      inputs.push_back(sequences_.count(n.input(k)) ? sequence(n, k)[e] : operand(n, k));
    std::map<size_t, Sequence> element_outs;
    auto results = inline_subgraph(body, inputs, {}, str_cat("attribute body (element ", e, ")"), element_outs);
    if (!element_outs.empty())
      throw ImportError("nnvm.onnx.unsupported", "SequenceMap's body gives a sequence, which nnvm does not take",
                        where_);
    for (size_t k = 0; k < results.size() && k < size_t(n.output_size()); ++k) outs[k].push_back(results[k]);
  }
  return {};
}

bool Importer::carries_sequence(const NodeProto& n) {
  for (int k = 2; k < n.input_size(); ++k)
    if (sequences_.count(n.input(k))) return true;
  return false;
}

std::vector<graph::Value> Importer::unroll_loop(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs) {
  constexpr int64_t max_unrolled = 4096;
  int64_t trips = max_unrolled + 1;
  if (n.input_size() > 0 && !n.input(0).empty()) trips = constant_ints(n, 0, "trip count M (the loop carries a sequence, so it is unrolled)").at(0);
  bool cond = n.input_size() < 2 || n.input(1).empty() ||
              constant_ints_or_bool(n, 1, "condition (the loop carries a sequence, so it is unrolled)");
  const ::onnx::GraphProto& body = subgraph(n, "body");
  size_t carried = size_t(n.input_size() - 2);
  std::vector<graph::Value> values(carried);
  std::map<size_t, Sequence> sequences;
  for (size_t k = 0; k < carried; ++k) {
    if (sequences_.count(n.input(int(2 + k)))) sequences[k] = sequence(n, int(2 + k));
    else values[k] = operand(n, int(2 + k));
  }
  std::vector<std::vector<graph::Value>> rows(size_t(std::max(body.output_size() - 1 - int(carried), 0)));
  int64_t i = 0;
  for (; i < trips && cond; ++i) {
    if (i >= max_unrolled)
      throw ImportError("nnvm.onnx.unsupported",
                        str_cat("a Loop that carries a sequence is unrolled at import; it would run more than ",
                                max_unrolled, " iterations"),
                        where_);
    std::vector<graph::Value> inputs{constant(str_cat("iter", i), NDArray::from(std::vector<int64_t>{i}, {})),
                                     graph::Value{}};
    NDArray c(dtype::boolean, {});
    *static_cast<uint8_t*>(c.raw()) = 1;
    inputs[1] = constant(str_cat("cond", i), std::move(c));
    std::map<size_t, Sequence> in_sequences;
    for (size_t k = 0; k < carried; ++k) {
      inputs.push_back(values[k]);
      if (sequences.count(k)) in_sequences[2 + k] = sequences[k];
    }
    std::map<size_t, Sequence> out_sequences;
    auto results = inline_subgraph(body, inputs, in_sequences, str_cat("attribute body (iteration ", i, ")"), out_sequences);
    const NDArray* next = data(results.at(0));
    if (!next || next->numel() != 1)
      throw ImportError("nnvm.graph.not_constant",
                        "the condition of a Loop that carries a sequence must be known at compile time in every "
                        "iteration (the loop is unrolled)",
                        where_);
    cond = static_cast<const uint8_t*>(next->raw())[0] != 0;
    sequences.clear();
    for (size_t k = 0; k < carried; ++k) {
      values[k] = results.at(1 + k);
      if (out_sequences.count(1 + k)) sequences[k] = out_sequences[1 + k];
    }
    for (size_t k = 0; k < rows.size(); ++k) {
      if (out_sequences.count(1 + carried + k))
        throw ImportError("nnvm.onnx.unsupported", "a Loop's scan output is a sequence, which nnvm does not take", where_);
      rows[k].push_back(results.at(1 + carried + k));
    }
  }
  if (trips > max_unrolled && cond)
    throw ImportError("nnvm.onnx.unsupported", "a Loop that carries a sequence needs a trip count (it is unrolled)", where_);
  std::vector<graph::Value> outs = values;
  for (auto& [k, s] : sequences) sequence_outs[k] = s;
  graph::Value zero = constant("axis0", NDArray::from(std::vector<int64_t>{0}, {1}));
  for (size_t k = 0; k < rows.size(); ++k) {
    if (rows[k].empty()) throw ImportError("nnvm.onnx.shape", str_cat("scan output ", k, " has no rows"), where_);
    for (size_t r = 0; r < rows[k].size(); ++r) rows[k][r] = op("Unsqueeze", {rows[k][r], zero}, {}, str_cat("scan", k, "_", r)).at(0);
    outs.push_back(rows[k].size() == 1 ? rows[k][0] : op("Concat", rows[k], ops::Attrs().set_int("axis", 0), str_cat("scan", k)).at(0));
  }
  return outs;
}

bool Importer::constant_ints_or_bool(const NodeProto& n, int k, const std::string& what) {
  graph::Value v = operand(n, k);
  const NDArray* d = data(v);
  if (!d) (void)constant_ints(n, k, what);  // throws not_constant naming the input
  if (d->numel() != 1 || d->dtype() != dtype::boolean)
    throw ImportError("nnvm.onnx.shape", str_cat(n.op_type(), "'s ", what, " must be one bool"), where_);
  return static_cast<const uint8_t*>(d->raw())[0] != 0;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE

// The ONNX node suite's stored test data for op tests that do not link the ONNX importer:
// where the suite is, and a reader for its TensorProto files (input_k.pb, output_k.pb).
#pragma once

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "nnvm/nnvm.hpp"

namespace nnvm_test {

// The suite where the build keeps it (the NNVM_ONNX_NODE_TESTS default), else Debian's copy;
// empty when there is none.
inline std::filesystem::path onnx_node_suite() {
  for (const char* p : {
#ifdef NNVM_ONNX_NODE_TESTS
           NNVM_ONNX_NODE_TESTS,
#endif
           NNVM_TEST_SOURCE_DIR "/../shared/onnx-node-tests/node", "/usr/share/libonnx-testdata/data/node"})
    if (std::filesystem::is_directory(p)) return p;
  return {};
}

// A TensorProto file: dims, data_type (float, float16, int32, int64, double), and the values as
// raw_data or in the typed fields (float16 as bit patterns in int32_data). Enough of protobuf's
// wire format for the stored test data, nothing more; throws std::runtime_error otherwise.
inline nnvm::NDArray read_tensor_proto(const std::filesystem::path& path) {
  using namespace nnvm;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("read_tensor_proto: cannot open " + path.string());
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) { return std::runtime_error("read_tensor_proto: " + why + " in " + path.string()); };
  auto as = [](auto type, const char* at) {  // unaligned little-endian value
    decltype(type) v;
    std::memcpy(&v, at, sizeof v);
    return double(v);
  };
  auto varint = [&](const std::string& buf, size_t& at) {
    uint64_t v = 0;
    for (int sh = 0; at < buf.size() && sh < 64; sh += 7) {
      uint8_t c = uint8_t(buf[at++]);
      v |= uint64_t(c & 127) << sh;
      if (!(c & 128)) break;
    }
    return v;
  };
  std::vector<int64_t> dims;
  int64_t code = 0;
  std::string raw;
  std::vector<double> values;  // int32_data (5), int64_data (7), float_data (4), double_data (10)
  for (size_t i = 0; i < s.size();) {
    uint64_t key = varint(s, i);
    int field = int(key >> 3), wire = int(key & 7);
    if (wire == 0) {
      uint64_t v = varint(s, i);
      if (field == 1) dims.push_back(int64_t(v));
      else if (field == 2) code = int64_t(v);
      else if (field == 5) values.push_back(double(int32_t(v)));
      else if (field == 7) values.push_back(double(int64_t(v)));
    } else if (wire == 2) {
      size_t len = size_t(varint(s, i));
      if (len > s.size() - i) throw fail("a field past the end");
      std::string body = s.substr(i, len);
      i += len;
      size_t at = 0;
      if (field == 1 || field == 5 || field == 7)
        while (at < body.size()) {
          uint64_t v = varint(body, at);
          if (field == 1) dims.push_back(int64_t(v));
          else values.push_back(field == 5 ? double(int32_t(v)) : double(int64_t(v)));
        }
      else if (field == 4)
        for (; at + 4 <= body.size(); at += 4) values.push_back(as(0.f, body.data() + at));
      else if (field == 10)
        for (; at + 8 <= body.size(); at += 8) values.push_back(as(0.0, body.data() + at));
      else if (field == 9) raw = body;
    } else if (wire == 5 || wire == 1) {
      size_t n = wire == 5 ? 4 : 8;
      if (n > s.size() - i) throw fail("a field past the end");
      if (field == 4) values.push_back(as(0.f, s.data() + i));
      if (field == 10) values.push_back(as(0.0, s.data() + i));
      i += n;
    } else {
      throw fail("wire type " + std::to_string(wire));
    }
  }
  DataType t = code == 1    ? dtype::float32
               : code == 10 ? dtype::float16
               : code == 6  ? dtype::int32
               : code == 7  ? dtype::int64
               : code == 11 ? dtype::float64
                            : dtype::boolean;
  if (t == dtype::boolean) throw fail("data type " + std::to_string(code));
  NDArray a(t, dims);
  if (!raw.empty() || values.empty()) {
    if (raw.size() != size_t(a.nbytes())) throw fail("raw_data of " + std::to_string(raw.size()) + " bytes");
    if (!raw.empty()) std::memcpy(a.raw(), raw.data(), raw.size());
    return a;
  }
  if (int64_t(values.size()) != a.numel()) throw fail(std::to_string(values.size()) + " values");
  for (int64_t k = 0; k < a.numel(); ++k) {
    double v = values[size_t(k)];
    if (t == dtype::float32) a.data<float>()[k] = float(v);
    else if (t == dtype::float64) a.data<double>()[k] = v;
    else if (t == dtype::int32) a.data<int32_t>()[k] = int32_t(v);
    else if (t == dtype::int64) a.data<int64_t>()[k] = int64_t(v);
    else static_cast<uint16_t*>(a.raw())[k] = uint16_t(int32_t(v));  // float16 bits
  }
  return a;
}

}  // namespace nnvm_test

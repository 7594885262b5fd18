// Hostile files: size limits, tensor data that does not match its shape or type, contradicting
// attributes, and external data that tries to leave the model's directory.
#include "support/pch.hpp"

#include <fcntl.h>

#include "onnx_test_util.hpp"

namespace onnx_loader_safety {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {
// y = x + w, with the initializer w as the caller leaves it.
struct AddModel {
  Model m;
  onnx::TensorProto* w;
  explicit AddModel(int elem = T::FLOAT, std::vector<int64_t> dims = {4}) {
    m.input("x", elem, {4});
    w = m.initializer("w", elem, dims);
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
  }
};

std::pair<std::string, std::string> import_error(const Model& m, const std::string& dir) {
  std::string path = m.save(scratch(dir));
  return error_of([&] { oi::import_model(path); });
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

void external(onnx::TensorProto* t, const std::string& location, const std::string& offset = "",
              const std::string& length = "") {
  t->set_data_location(T::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
}

std::string floats_bytes(std::vector<float> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }
}  // namespace

TEST_CASE("onnx safety: files of 2 GiB or more are rejected before parsing; garbage is rejected") {
  fs::path dir = scratch("huge");
  fs::path big = dir / "big.onnx";
  {
    int fd = ::open(big.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t(2) << 30) == 0);  // sparse: no disk used
    ::close(fd);
  }
  auto [id, text] = error_of([&] { oi::import_model(big.string()); });
  CHECK(id == "nnvm.onnx.file");
  CHECK(text.find("over the limit") != std::string::npos);
  std::tie(id, text) = error_of([&] { oi::read_tensor_pb(big.string()); });
  CHECK(id == "nnvm.onnx.file");

  Model m;
  m.input("x", T::FLOAT, {2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::string path = m.save(dir);
  std::tie(id, text) = error_of([&] { oi::import_model(path, {.max_file_bytes = 10}); });
  CHECK(id == "nnvm.onnx.file");
  write_file(dir / "garbage.onnx", std::string("\xff\xff\xff\xff not protobuf", 18));
  std::tie(id, text) = error_of([&] { oi::import_model((dir / "garbage.onnx").string()); });
  CHECK(id == "nnvm.onnx.file");
  std::tie(id, text) = error_of([&] { oi::import_model((dir / "missing.onnx").string()); });
  CHECK(id == "nnvm.onnx.file");
}

TEST_CASE("onnx safety: raw_data and typed fields must match the shape exactly") {
  AddModel shorter;
  set_raw(shorter.w, std::string(12, '\0').data(), 12);
  auto [id, text] = import_error(shorter.m, "raw_short");
  CHECK(id == "nnvm.onnx.tensor");
  CHECK(text.find("raw_data holds 12 bytes but the shape and type need 16") != std::string::npos);
  CHECK(text.find("initializer w") != std::string::npos);

  AddModel longer;
  set_raw(longer.w, std::string(20, '\0').data(), 20);
  std::tie(id, text) = import_error(longer.m, "raw_long");
  CHECK(text.find("raw_data holds 20 bytes") != std::string::npos);

  AddModel few;
  for (float v : {1.f, 2.f, 3.f}) few.w->add_float_data(v);
  std::tie(id, text) = import_error(few.m, "typed_count");
  CHECK(id == "nnvm.onnx.tensor");
  CHECK(text.find("float_data holds 3 values but the shape needs 4") != std::string::npos);

  AddModel wrong_field;
  for (int64_t v : {1, 2, 3, 4}) wrong_field.w->add_int64_data(v);
  std::tie(id, text) = import_error(wrong_field.m, "typed_field");
  CHECK(text.find("int64_data") != std::string::npos);

  AddModel both;
  set_raw(both.w, floats_bytes({1, 2, 3, 4}).data(), 16);
  for (float v : {1.f, 2.f, 3.f, 4.f}) both.w->add_float_data(v);
  std::tie(id, text) = import_error(both.m, "two_sources");
  CHECK(id == "nnvm.onnx.tensor");

  AddModel out_of_range(T::UINT8);
  for (int32_t v : {1, 2, 300, 4}) out_of_range.w->add_int32_data(v);
  std::tie(id, text) = import_error(out_of_range.m, "range");
  CHECK(text.find("int32_data[2] = 300 does not fit in uint8") != std::string::npos);
}

TEST_CASE("onnx safety: negative dims and element counts that overflow int64") {
  AddModel negative(T::FLOAT, {-4});
  auto [id, text] = import_error(negative.m, "negative_dim");
  CHECK(id == "nnvm.onnx.tensor");
  CHECK(text.find("dimension 0 is -4") != std::string::npos);

  // Counts that overflow int64, and counts that fit but exceed the 2^48-byte tensor bound.
  AddModel overflow(T::FLOAT, {int64_t(1) << 40, int64_t(1) << 40});
  std::tie(id, text) = import_error(overflow.m, "overflow");
  CHECK(id == "nnvm.onnx.too_large");
  CHECK(text.find("larger than 2^48 bytes") != std::string::npos);
  AddModel bytes(T::FLOAT, {int64_t(1) << 62});
  std::tie(id, text) = import_error(bytes.m, "overflow_bytes");
  CHECK(id == "nnvm.onnx.too_large");

  // Absurd but representable: no data to back it, and nothing is allocated.
  AddModel absurd(T::FLOAT, {int64_t(1) << 40});
  std::tie(id, text) = import_error(absurd.m, "absurd");
  CHECK(text.find("float_data holds 0 values") != std::string::npos);

  Model in;
  auto* v = in.input("x", T::FLOAT, {2});
  v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-2);
  in.node("Relu", {"x"}, {"y"});
  in.output("y");
  std::tie(id, text) = import_error(in, "negative_input_dim");
  CHECK(id == "nnvm.onnx.shape");
}

TEST_CASE("onnx safety: data types, each decoded from raw_data and typed fields") {
  // float16 and bfloat16 bit patterns in int32_data; uint32 in uint64_data; bool.
  auto decode = [](int elem, auto fill) {
    Model m;
    auto* t = m.initializer("c", elem, {2});
    fill(t);
    m.input("x", T::FLOAT, {1});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    m.output("c");
    graph::Graph g = oi::import_model(m.save(scratch("dtype")));
    return *g.node(g.outputs[1]).data;
  };
  NDArray h = decode(T::FLOAT16, [](T* t) {
    t->add_int32_data(float16(1.5f).bits);
    t->add_int32_data(float16(-2.0f).bits);
  });
  CHECK(h.dtype() == dtype::float16);
  CHECK(float(h.values<float16>()[0]) == 1.5f);
  CHECK(float(h.values<float16>()[1]) == -2.0f);
  NDArray bf = decode(T::BFLOAT16, [](T* t) {
    uint16_t raw[2] = {bfloat16(3.0f).bits, bfloat16(-0.5f).bits};
    set_raw(t, raw, 4);
  });
  CHECK(float(bf.values<bfloat16>()[1]) == -0.5f);
  NDArray u = decode(T::UINT32, [](T* t) {
    t->add_uint64_data(4000000000u);
    t->add_uint64_data(7);
  });
  CHECK(u.values<uint32_t>()[0] == 4000000000u);
  NDArray b = decode(T::BOOL, [](T* t) {
    t->add_int32_data(1);
    t->add_int32_data(0);
  });
  CHECK(b.dtype() == dtype::boolean);
  CHECK(b.values<bool>()[0]);

  // The 4- and 2-bit types come packed, low bits first (onnx.proto's codes: UINT4 21, INT4 22,
  // UINT2 25; newer than Debian's onnx.proto); nnvm holds one element per byte, sign-extended.
  auto packed = [](int elem, int64_t n, auto fill) {
    Model m;
    auto* t = m.initializer("c", elem, {n});
    fill(t);
    m.input("x", T::FLOAT, {1});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    m.output("c");
    std::string path = m.save(scratch("packed"));
    graph::Graph g = oi::import_model(path);
    return *g.node(g.outputs[1]).data;
  };
  NDArray i4 = packed(22, 3, [](T* t) { set_raw(t, "\x9f\x07", 2); });
  REQUIRE(i4.dtype() == dtype::int4);
  const auto* i4b = static_cast<const int8_t*>(i4.raw());
  CHECK(i4b[0] == -1);
  CHECK(i4b[1] == -7);
  CHECK(i4b[2] == 7);
  NDArray u2 = packed(25, 5, [](T* t) {
    t->add_int32_data(0xe4);  // 0, 1, 2, 3
    t->add_int32_data(0x02);
  });
  REQUIRE(u2.dtype() == dtype::uint2);
  const auto* u2b = static_cast<const uint8_t*>(u2.raw());
  CHECK((u2b[0] == 0 && u2b[1] == 1 && u2b[2] == 2 && u2b[3] == 3 && u2b[4] == 2));
  NDArray f8 = packed(17, 2, [](T* t) {
    t->add_int32_data(0x38);  // 1.0 in FLOAT8E4M3FN
    t->add_int32_data(0xfe);  // -448
  });
  CHECK(f8.dtype() == dtype::float8e4m3fn);
  CHECK(static_cast<const uint8_t*>(f8.raw())[1] == 0xfe);
  std::string text4 = error_of([&] { packed(21, 3, [](T* t) { set_raw(t, "\x01\x02\x03", 3); }); }).second;
  CHECK(text4.find("raw_data holds 3 bytes but 3 packed uint4 elements need 2") != std::string::npos);
  text4 = error_of([&] { packed(22, 4, [](T* t) { t->add_int32_data(300); t->add_int32_data(1); }); }).second;
  CHECK(text4.find("int32_data[0] = 300 is not a byte") != std::string::npos);

  AddModel strings(T::FLOAT);
  strings.w->set_data_type(T::STRING);
  auto [id, text] = import_error(strings.m, "string");
  CHECK(id == "nnvm.onnx.unsupported");
  CHECK(text.find("'w'") != std::string::npos);
  CHECK(text.find("STRING") != std::string::npos);
}

TEST_CASE("onnx safety: attributes that contradict the tensors they describe") {
  Model two;
  two.input("x", T::FLOAT, {2});
  auto* c = two.node("Constant", {}, {"k"}, "konst");
  attr_float(c, "value_float", 1.0f);
  attr_ints(c, "value_ints", {1, 2});
  two.node("Add", {"x", "k"}, {"y"});
  two.output("y");
  auto [id, text] = import_error(two, "two_values");
  CHECK(id == "nnvm.onnx.attribute");
  CHECK(text.find("value_float, value_ints") != std::string::npos);
  CHECK(text.find("konst") != std::string::npos);

  Model kind;
  kind.input("x", T::INT64, {2});
  auto* k = kind.node("Constant", {}, {"k"}, "konst");
  attr_float(k, "value_int", 1.0f);  // a FLOAT where an INT belongs
  kind.node("Add", {"x", "k"}, {"y"});
  kind.output("y");
  std::tie(id, text) = import_error(kind, "kind");
  CHECK(id == "nnvm.onnx.attribute");
  CHECK(text.find("attribute value_int") != std::string::npos);

  Model fill;
  auto* shape = fill.initializer("shape", T::INT64, {1});
  shape->add_int64_data(3);
  auto* cs = fill.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  auto* t = attr_tensor(cs, "value")->mutable_t();
  t->set_data_type(T::FLOAT);
  t->add_dims(2);
  t->add_float_data(1);
  t->add_float_data(2);
  fill.output("y");
  std::tie(id, text) = import_error(fill, "fill_two");
  CHECK(id == "nnvm.onnx.attribute");
  CHECK(text.find("holds 2") != std::string::npos);

  Model external_flag;
  external_flag.input("x", T::FLOAT, {1});
  auto* w = external_flag.initializer("w", T::FLOAT, {1});
  w->add_float_data(1);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  external_flag.node("Add", {"x", "w"}, {"y"});
  external_flag.output("y");
  std::tie(id, text) = import_error(external_flag, "external_flag");
  CHECK(text.find("data_location is not EXTERNAL") != std::string::npos);
}

TEST_CASE("onnx safety: external data is read inside the model's directory only") {
  fs::path dir = scratch("external");
  fs::create_directories(dir / "weights");
  write_file(dir / "weights" / "w.bin", "PAD!" + floats_bytes({1, 2, 3, 4}));
  auto model_with = [&](const std::string& location, const std::string& offset = "4",
                        const std::string& length = "16") {
    AddModel a;
    external(a.w, location, offset, length);
    return a.m.save(dir);
  };
  graph::Graph g = oi::import_model(model_with("weights/w.bin"));
  const graph::Node& w = g.node(g.node(g.outputs[0]).inputs[1]);
  auto v = w.data->values<float>();
  CHECK(std::vector<float>(v.begin(), v.end()) == std::vector<float>{1, 2, 3, 4});
  CHECK_NOTHROW(oi::import_model(model_with("./weights//w.bin")));

  auto error = [&](const std::string& path) { return error_of([&] { oi::import_model(path); }); };
  struct Case {
    std::string location, offset, length, expect;
  };
  fs::create_directories(dir / "elsewhere");
  write_file(dir / "elsewhere" / "w.bin", "PAD!" + floats_bytes({1, 2, 3, 4}));
  fs::create_symlink(dir / "elsewhere" / "w.bin", dir / "weights" / "link.bin");
  fs::create_directory_symlink(dir / "elsewhere", dir / "linkdir");
  fs::create_hard_link(dir / "elsewhere" / "w.bin", dir / "weights" / "hard.bin");
  std::vector<Case> cases = {
      {"../w.bin", "4", "16", "'..' is not allowed"},
      {"weights/../../w.bin", "4", "16", "'..' is not allowed"},
      {(dir / "weights" / "w.bin").string(), "4", "16", "is absolute"},
      {"weights/link.bin", "4", "16", "symbolic link 'link.bin'"},
      {"linkdir/w.bin", "4", "16", "symbolic link 'linkdir'"},
      {"weights/hard.bin", "4", "16", "hard links"},
      {"weights/w.bin", "8", "16", "lies beyond the end"},
      {"weights/w.bin", "40", "", "lies beyond the end"},
      {"weights/w.bin", "0", "12", "holds 12 bytes but the tensor's shape and type need 16"},
      {"weights/w.bin", "-4", "16", "not a decimal byte count"},
      {"weights/missing.bin", "4", "16", "cannot be opened"},
      {"", "4", "16", "is empty"},
  };
  for (auto& c : cases) {
    auto [id, text] = error(model_with(c.location, c.offset, c.length));
    CHECK_MESSAGE(id == "nnvm.onnx.external_data", c.location, ": ", text);
    CHECK_MESSAGE(text.find(c.expect) != std::string::npos, c.location, ": ", text);
    CHECK(text.find("initializer w") != std::string::npos);
  }
  // A tensor .pb file resolves its external data against its own directory.
  onnx::TensorProto t;
  t.set_data_type(T::FLOAT);
  t.add_dims(4);
  external(&t, "weights/w.bin", "4", "16");
  std::ofstream(dir / "t.pb", std::ios::binary) << t.SerializeAsString();
  NDArray a = oi::read_tensor_pb((dir / "t.pb").string());
  CHECK(a.values<float>()[3] == 4.0f);
}

}  // namespace onnx_loader_safety

#include "tensor_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "nnvm/ir/small_float.hpp"
#include "nnvm/limits.hpp"
#include "nnvm/onnx/importer.hpp"

namespace nnvmc {

namespace nv = nnvm;

namespace {

[[noreturn]] void bad_file(const std::string& path, const std::string& why) {
  throw nv::UserError("nnvm.cli.tensor_file", why, {"file " + nv::printable(path)});
}

struct NpyType {
  const char* descr;
  nv::DataType dtype;
};
const NpyType npy_types[] = {
    {"<f4", nv::dtype::float32}, {"<f8", nv::dtype::float64}, {"<f2", nv::dtype::float16},
    {"<i8", nv::dtype::int64},   {"<i4", nv::dtype::int32},   {"<i2", nv::dtype::int16},
    {"|i1", nv::dtype::int8},    {"|u1", nv::dtype::uint8},   {"<u2", nv::dtype::uint16},
    {"<u4", nv::dtype::uint32},  {"<u8", nv::dtype::uint64},  {"|b1", nv::dtype::boolean},
};

// The value of `key` in a .npy header dict: the text after "'key':" up to the next top-level ','.
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) bad_file(path, "the .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) bad_file(path, "the .npy header is malformed");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) bad_file(path, "the .npy header is malformed");
  if (header[start] == '(') {
    size_t end = header.find(')', start);
    if (end == std::string::npos) bad_file(path, "the .npy shape is not closed");
    return header.substr(start, end - start + 1);
  }
  size_t end = header.find_first_of(",}", start);
  return header.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The bytes of the regular file at `path`: a FIFO or device is refused before it is opened
// (opening a FIFO blocks until a writer comes), and the open is non-blocking besides, in case
// the path is swapped between the check and the open.
class TensorFile {
 public:
  explicit TensorFile(const std::string& path) : path_(path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) bad_file(path, std::string("cannot open the file: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) bad_file(path, "not a regular file");
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) bad_file(path, std::string("cannot open the file: ") + std::strerror(errno));
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) bad_file(path, "not a regular file");
    size_ = uint64_t(st.st_size);
  }
  TensorFile(const TensorFile&) = delete;
  TensorFile& operator=(const TensorFile&) = delete;
  ~TensorFile() { ::close(fd_); }

  uint64_t size() const { return size_; }
  // Exactly `bytes` bytes at `offset`; false when the file ends first.
  bool read(void* dst, uint64_t bytes, uint64_t offset) const {
    auto* p = static_cast<char*>(dst);
    while (bytes > 0) {
      ssize_t got = ::pread(fd_, p, size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30)), off_t(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      p += got, bytes -= uint64_t(got), offset += uint64_t(got);
    }
    return true;
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

nv::NDArray read_npy(const std::string& path) {
  TensorFile f(path);
  unsigned char magic[8];
  if (!f.read(magic, 8, 0) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad_file(path, "not a .npy file (bad magic)");
  uint64_t header_len = 0, at = 8;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (!f.read(b, 2, at)) bad_file(path, "truncated .npy header");
    header_len = b[0] | (b[1] << 8), at += 2;
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    if (!f.read(b, 4, at)) bad_file(path, "truncated .npy header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24), at += 4;
  } else {
    bad_file(path, "unsupported .npy version " + std::to_string(int(magic[6])));
  }
  if (header_len > (1u << 20)) bad_file(path, "the .npy header is implausibly long");
  std::string header(header_len, '\0');
  if (!f.read(header.data(), header_len, at)) bad_file(path, "truncated .npy header");
  at += header_len;
  std::string descr = header_field(header, "descr", path);
  std::string fortran = header_field(header, "fortran_order", path);
  std::string shape_text = header_field(header, "shape", path);
  if (fortran.rfind("True", 0) == 0) bad_file(path, "Fortran-order .npy arrays are not supported; save with C order");
  if (descr.size() < 2) bad_file(path, "malformed dtype " + nv::printable(descr));
  descr = descr.substr(1, descr.size() - 2);
  const NpyType* type = nullptr;
  for (auto& t : npy_types)
    if (descr == t.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(t.descr).substr(1)))
      type = &t;
  if (!type) bad_file(path, "dtype '" + nv::printable(descr) + "' is not supported (big-endian, strings and objects are not)");
  if (shape_text.size() < 2 || shape_text.front() != '(')
    bad_file(path, "shape " + nv::printable(shape_text) + " is malformed");
  std::vector<int64_t> shape;
  std::stringstream ss(shape_text.substr(1, shape_text.size() - 2));
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t a = part.find_first_not_of(' '), b = part.find_last_not_of(' ');
    if (a == std::string::npos) continue;
    part = part.substr(a, b - a + 1);
    // Up to 18 digits always fits int64; a larger extent is malformed, a large product is caught below.
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18)
      bad_file(path, "shape " + nv::printable(shape_text) + " is malformed");
    shape.push_back(std::stoll(part));
  }
  // The header's claim is checked against the bound and the file's real size before anything
  // is allocated: a 16-byte file cannot make us allocate gigabytes.
  std::optional<uint64_t> bytes = nv::checked_tensor_bytes(shape, uint64_t(type->dtype.bytes()));
  if (!bytes) bad_file(path, "shape " + nv::printable(shape_text) + " is larger than 2^48 bytes");
  if (f.size() - at < *bytes)
    bad_file(path, "the data is shorter than shape " + nv::printable(shape_text) + " needs (" + std::to_string(*bytes) +
                       " bytes, the file holds " + std::to_string(f.size() - at) + ")");
  nv::NDArray arr(type->dtype, shape);
  if (!f.read(arr.raw(), *bytes, at)) bad_file(path, "the file could not be read completely");
  return arr;
}

}  // namespace

nv::NDArray read_tensor(const std::string& path) {
  auto ends = [&](const char* s) {
    size_t n = std::strlen(s);
    return path.size() >= n && path.compare(path.size() - n, n, s) == 0;
  };
  if (ends(".npy")) return read_npy(path);
  if (ends(".pb")) return nv::onnx_import::read_tensor_pb(path);
  bad_file(path, "unknown tensor file type; expected .npy or .pb");
}

void write_npy(const std::string& path, const nv::NDArray& a) {
  const NpyType* type = nullptr;
  for (auto& t : npy_types)
    if (t.dtype == a.dtype()) type = &t;
  if (!type) throw nv::UserError("nnvm.cli.tensor_file", "cannot write " + a.dtype().str() + " as .npy", {"file " + path});
  std::string shape = "(";
  for (size_t i = 0; i < a.shape().size(); ++i) shape += std::to_string(a.shape()[i]) + (a.shape().size() == 1 || i + 1 < a.shape().size() ? "," : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + type->descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  if (!f) throw nv::UserError("nnvm.cli.tensor_file", "cannot write the file", {"file " + path});
  f.write("\x93NUMPY\x01\x00", 8);
  unsigned char len[2] = {static_cast<unsigned char>(header.size() & 255), static_cast<unsigned char>(header.size() >> 8)};
  f.write(reinterpret_cast<const char*>(len), 2);
  f << header;
  f.write(static_cast<const char*>(a.raw()), std::streamsize(a.nbytes()));
}

double element(const nv::NDArray& a, int64_t i) {
  const void* p = a.raw();
  nv::DataType t = a.dtype();
  if (t == nv::dtype::float32) return static_cast<const float*>(p)[i];
  if (t == nv::dtype::float64) return static_cast<const double*>(p)[i];
  if (t == nv::dtype::int64) return double(static_cast<const int64_t*>(p)[i]);
  if (t == nv::dtype::int32) return static_cast<const int32_t*>(p)[i];
  if (t == nv::dtype::int16) return static_cast<const int16_t*>(p)[i];
  if (t == nv::dtype::int8) return static_cast<const int8_t*>(p)[i];
  if (t == nv::dtype::uint64) return double(static_cast<const uint64_t*>(p)[i]);
  if (t == nv::dtype::uint32) return static_cast<const uint32_t*>(p)[i];
  if (t == nv::dtype::uint16) return static_cast<const uint16_t*>(p)[i];
  if (t == nv::dtype::uint8 || t == nv::dtype::boolean) return static_cast<const uint8_t*>(p)[i];
  if (t.is_sub_byte_int()) return t.is_int() ? double(static_cast<const int8_t*>(p)[i]) : double(static_cast<const uint8_t*>(p)[i]);
  // The float storage types: float16/bfloat16 bits, float8/float4 bytes.
  uint32_t bits = t.bytes() == 1 ? static_cast<const uint8_t*>(p)[i] : static_cast<const uint16_t*>(p)[i];
  return nv::storage_decode(t, bits);
}

nv::NDArray generated_input(nv::DataType t, const std::vector<int64_t>& shape, uint32_t seed) {
  nv::NDArray a(t, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  void* p = a.raw();
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = unit(rng);
    int64_t k = int64_t(rng() % 4);
    if (t == nv::dtype::float32) static_cast<float*>(p)[i] = float(v);
    else if (t == nv::dtype::float64) static_cast<double*>(p)[i] = v;
    else if (t == nv::dtype::int64) static_cast<int64_t*>(p)[i] = k;
    else if (t == nv::dtype::int32) static_cast<int32_t*>(p)[i] = int32_t(k);
    else if (t == nv::dtype::int16 || t == nv::dtype::uint16) static_cast<int16_t*>(p)[i] = int16_t(k);
    else if (t == nv::dtype::int8 || t == nv::dtype::uint8) static_cast<int8_t*>(p)[i] = int8_t(k);
    else if (t == nv::dtype::uint32) static_cast<uint32_t*>(p)[i] = uint32_t(k);
    else if (t == nv::dtype::uint64) static_cast<uint64_t*>(p)[i] = uint64_t(k);
    else if (t == nv::dtype::boolean) static_cast<uint8_t*>(p)[i] = uint8_t(i % 2);
    else if (t.is_sub_byte_int()) static_cast<uint8_t*>(p)[i] = uint8_t(k);
    else if (t.bytes() == 1) static_cast<uint8_t*>(p)[i] = uint8_t(nv::storage_encode(t, float(v)));  // float8/float4
    else static_cast<uint16_t*>(p)[i] = uint16_t(nv::storage_encode(t, float(v)));  // float16/bfloat16
  }
  return a;
}

std::string summary(const nv::NDArray& a) {
  std::ostringstream s;
  s << a.dtype() << " [";
  for (size_t i = 0; i < a.shape().size(); ++i) s << (i ? "x" : "") << a.shape()[i];
  s << "]";
  int64_t n = a.numel();
  if (n == 0) return s.str() + " (empty)";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = element(a, i);
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  }
  s << " min " << lo << " max " << hi << " mean " << sum / double(n) << " first [";
  for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i) s << (i ? ", " : "") << element(a, i);
  s << (n > 6 ? ", ...]" : "]");
  return s.str();
}

}  // namespace nnvmc

// Loading an artifact directory. Every file may be truncated or corrupt: each field is checked
// before use, so that a model that loads can only fail at run time through its caller's
// tensors or a kernel's status. kernels.so itself is code: load only artifacts you trust.
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "json.hpp"
#include "nnvm/limits.hpp"
#include "model.hpp"

nnvm_model::~nnvm_model() {
  for (void* a : spare_arenas) std::free(a);
  if (weights) munmap(const_cast<char*>(weights), weights_size);
  if (library) dlclose(library);
}

NNVM_BEGIN_NAMESPACE
namespace runtime {

namespace {

using json::Path;
using json::Value;

std::string read_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(NNVM_ERROR_IO, "cannot open %s: %s", path.c_str(), std::strerror(errno));
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) fail(NNVM_ERROR_IO, "cannot read %s", path.c_str());
  return s;
}

std::string slot_text(size_t s, const SlotInfo& sl) { return format("slot %zu ('%s')", s, sl.name.c_str()); }

class Loader {
 public:
  Loader(const std::string& dir, nnvm_model& m) : dir_(dir), json_path_(dir + "/model.json"), r_(json_path_), m_(m) {}

  void load() {
    Value doc = json::parse(read_file(json_path_), json_path_);
    const std::string& format_name = string(doc, root_, "format");
    if (format_name != "nnvm.deploy")
      r_.error(root_ / "format", "expected \"nnvm.deploy\", got \"%s\"", format_name.c_str());
    int64_t version = integer(doc, root_, "version", 0, INT64_MAX);
    if (version != 1) r_.error(root_ / "version", "this runtime reads version 1, got %lld", static_cast<long long>(version));
    m_.name = string(doc, root_, "name");
    weights_bytes_ = uint64_t(integer(doc, root_, "weights_bytes", 0, INT64_MAX));
    planned_bytes_ = uint64_t(integer(doc, root_, "arena_bytes", 0, int64_t(max_tensor_bytes)));
    m_.plan.arena_bytes = (planned_bytes_ + 63) / 64 * 64;
    const auto& inputs = array(doc, root_, "inputs");
    read_slots(array(doc, root_, "slots"), inputs.size());
    read_kernels(array(doc, root_, "kernels"));
    read_steps(array(doc, root_, "steps"));
    read_io(inputs, "inputs", m_.plan.inputs, m_.input_info);
    read_io(array(doc, root_, "outputs"), "outputs", m_.plan.outputs, m_.output_info);
    map_weights();
    load_kernels();
  }

 private:
  // Members of `object` (found at `path`), checked.
  const std::string& string(const Value& object, const Path& path, const char* key) {
    return r_.string(r_.member(object, path, key), path / key);
  }
  int64_t integer(const Value& object, const Path& path, const char* key, int64_t min, int64_t max) {
    return r_.integer(r_.member(object, path, key), path / key, min, max);
  }
  const std::vector<Value>& array(const Value& object, const Path& path, const char* key) {
    return r_.array(r_.member(object, path, key), path / key);
  }
  size_t index(const Value& v, const Path& path, size_t count, const char* what) {
    if (count == 0) r_.error(path, "expected an index of %s, but the model has none", what);
    return size_t(r_.integer(v, path, 0, int64_t(count) - 1));
  }

  TensorType read_type(const Value& v, const Path& path) {
    TensorType t;
    const std::string& name = string(v, path, "dtype");
    t.dtype = dtype_from_name(name);
    if (!t.dtype) r_.error(path / "dtype", "expected a data type such as \"float32\", got \"%s\"", name.c_str());
    const auto& shape = array(v, path, "shape");
    Path shape_path = path / "shape";
    if (shape.size() > 64) r_.error(shape_path, "expected at most 64 axes, got %zu", shape.size());
    t.bytes = dtype_bytes(t.dtype);
    for (size_t d = 0; d < shape.size(); ++d) {
      t.shape.push_back(r_.integer(shape[d], shape_path[d], 0, INT64_MAX));
      if (__builtin_mul_overflow(t.bytes, uint64_t(t.shape.back()), &t.bytes) || t.bytes > max_tensor_bytes)
        r_.error(shape_path, "the tensor is larger than 2^48 bytes");
    }
    return t;
  }

  void read_slots(const std::vector<Value>& slots, size_t num_inputs) {
    Path list = root_ / "slots";
    for (size_t s = 0; s < slots.size(); ++s) {
      Path path = list[s];
      SlotInfo& sl = m_.slots.emplace_back();
      PlanSlot& ps = m_.plan.slots.emplace_back();
      sl.type = read_type(slots[s], path);
      sl.name = string(slots[s], path, "name");
      ps.bytes = sl.type.bytes;
      const std::string& kind = string(slots[s], path, "kind");
      if (kind == "input") {
        ps.kind = PlanSlot::Kind::input;
        ps.index = index(r_.member(slots[s], path, "input"), path / "input", num_inputs, "an input");
      } else if (kind == "constant") {
        ps.kind = PlanSlot::Kind::constant;
        ps.index = constant_offsets_.size();
        uint64_t offset = uint64_t(integer(slots[s], path, "offset", 0, INT64_MAX));
        constant_offsets_.push_back(offset);
        uint64_t bytes = uint64_t(integer(slots[s], path, "bytes", 0, INT64_MAX));
        if (bytes != sl.type.bytes)
          r_.error(path / "bytes", "expected %llu (%s), got %llu", ull(sl.type.bytes), type_text(sl.type).c_str(), ull(bytes));
        if (offset % 64 != 0) r_.error(path / "offset", "expected a multiple of 64, got %llu", ull(offset));
        if (offset > weights_bytes_ || bytes > weights_bytes_ - offset)
          r_.error(path, "bytes %llu to %llu lie past the end of the weights (weights_bytes %llu)", ull(offset),
                   ull(offset + bytes), ull(weights_bytes_));
      } else if (kind == "activation") {
        // Planned activations share the arena's first arena_bytes; the others follow it.
        if (const Value* offset = r_.find(slots[s], path, "offset")) {
          ps.offset = uint64_t(r_.integer(*offset, path / "offset", 0, int64_t(planned_bytes_)));
          if (sl.type.bytes > planned_bytes_ - ps.offset)
            r_.error(path, "bytes %llu to %llu lie past the end of the arena (arena_bytes %llu)", ull(ps.offset),
                     ull(ps.offset + sl.type.bytes), ull(planned_bytes_));
        } else {
          ps.offset = m_.plan.arena_bytes;
          m_.plan.arena_bytes += (sl.type.bytes + 63) / 64 * 64;
        }
      } else {
        r_.error(path / "kind", "expected \"input\", \"constant\" or \"activation\", got \"%s\"", kind.c_str());
      }
    }
  }

  void read_kernels(const std::vector<Value>& kernels) {
    Path list = root_ / "kernels";
    for (size_t k = 0; k < kernels.size(); ++k) {
      Path path = list[k];
      KernelInfo& kernel = m_.kernels.emplace_back();
      kernel.symbol = string(kernels[k], path, "symbol");
      if (kernel.symbol.empty()) r_.error(path / "symbol", "expected a symbol name, got \"\"");
      int64_t sizes = integer(kernels[k], path, "num_size_vars", 0, INT64_MAX);
      if (sizes != 0)
        r_.error(path / "num_size_vars", "this runtime runs kernels with static shapes only, got %lld symbolic sizes",
                 static_cast<long long>(sizes));
      const auto& params = array(kernels[k], path, "params");
      Path params_path = path / "params";
      for (size_t p = 0; p < params.size(); ++p) kernel.params.push_back(read_type(params[p], params_path[p]));
    }
  }

  // A step may read only inputs, constants and activations an earlier step wrote, and write only
  // activations nothing wrote before: so every value is initialized before any kernel reads it.
  void read_steps(const std::vector<Value>& steps) {
    written_.assign(m_.slots.size(), 0);
    Path list = root_ / "steps";
    for (size_t i = 0; i < steps.size(); ++i) {
      Path path = list[i];
      StepInfo& info = m_.steps.emplace_back();
      PlanStep& st = m_.plan.steps.emplace_back();
      info.node = string(steps[i], path, "node");
      info.op = string(steps[i], path, "op");
      st.kernel = index(r_.member(steps[i], path, "kernel"), path / "kernel", m_.kernels.size(), "a kernel");
      const KernelInfo& k = m_.kernels[st.kernel];
      const auto& ins = array(steps[i], path, "inputs");
      const auto& outs = array(steps[i], path, "outputs");
      if (ins.size() + outs.size() != k.params.size())
        r_.error(path, "kernel %s takes %zu tensors, the step passes %zu", k.symbol.c_str(), k.params.size(),
                 ins.size() + outs.size());
      Path ins_path = path / "inputs", outs_path = path / "outputs";
      for (size_t a = 0; a < k.params.size(); ++a) {
        bool out = a >= ins.size();
        Path apath = out ? outs_path[a - ins.size()] : ins_path[a];
        size_t s = index(out ? outs[a - ins.size()] : ins[a], apath, m_.slots.size(), "a slot");
        const SlotInfo& sl = m_.slots[s];
        const PlanSlot::Kind kind = m_.plan.slots[s].kind;
        if (!(sl.type == k.params[a]))
          r_.error(apath, "%s is %s but kernel %s's parameter %zu is %s", slot_text(s, sl).c_str(),
                   type_text(sl.type).c_str(), k.symbol.c_str(), a, type_text(k.params[a]).c_str());
        if (!out && kind == PlanSlot::Kind::activation && !written_[s])
          r_.error(apath, "%s is read before any step writes it", slot_text(s, sl).c_str());
        if (out && (kind != PlanSlot::Kind::activation || written_[s]))
          r_.error(apath, "%s is %s; a step writes only fresh activations", slot_text(s, sl).c_str(),
                   written_[s] ? "written by an earlier step" : "not an activation");
        if (out) written_[s] = 1;
        st.args.push_back(s);
      }
      // Kernels take restrict pointers: what a step writes must not share memory with its
      // other tensors (planned activations may share the arena only when lifetimes are apart).
      for (size_t a = ins.size(); a < st.args.size(); ++a)
        for (size_t b = 0; b < st.args.size(); ++b) {
          const PlanSlot &x = m_.plan.slots[st.args[a]], &y = m_.plan.slots[st.args[b]];
          if (b != a && y.kind == PlanSlot::Kind::activation && x.bytes && y.bytes && x.offset < y.offset + y.bytes &&
              y.offset < x.offset + x.bytes)
            r_.error(outs_path[a - ins.size()], "%s overlaps %s in the arena", slot_text(st.args[a], m_.slots[st.args[a]]).c_str(),
                     slot_text(st.args[b], m_.slots[st.args[b]]).c_str());
        }
      m_.plan.max_args = std::max(m_.plan.max_args, st.args.size());
    }
  }

  void read_io(const std::vector<Value>& list, const char* key, std::vector<size_t>& slots,
               std::vector<nnvm_tensor_info>& info) {
    bool inputs = key[0] == 'i';
    Path list_path = root_ / key;
    for (size_t i = 0; i < list.size(); ++i) {
      Path path = list_path[i];
      size_t s = index(r_.member(list[i], path, "slot"), path / "slot", m_.slots.size(), "a slot");
      const SlotInfo& sl = m_.slots[s];
      const PlanSlot& ps = m_.plan.slots[s];
      TensorType t = read_type(list[i], path);
      const std::string& name = string(list[i], path, "name");
      if (!(t == sl.type) || name != sl.name)
        r_.error(path, "declares '%s' %s but %s is %s", name.c_str(), type_text(t).c_str(), slot_text(s, sl).c_str(),
                 type_text(sl.type).c_str());
      if (inputs && (ps.kind != PlanSlot::Kind::input || ps.index != i))
        r_.error(path / "slot", "%s is not input %zu", slot_text(s, sl).c_str(), i);
      if (!inputs && ps.kind == PlanSlot::Kind::activation && !written_[s])
        r_.error(path / "slot", "%s is never written by a step", slot_text(s, sl).c_str());
      slots.push_back(s);
    }
    if (inputs) {
      size_t input_slots = 0;
      for (auto& ps : m_.plan.slots) input_slots += ps.kind == PlanSlot::Kind::input;
      if (input_slots != list.size())
        r_.error(list_path, "%zu slots are inputs but %zu inputs are declared", input_slots, list.size());
    }
    for (size_t s : slots) {
      const SlotInfo& sl = m_.slots[s];
      info.push_back({sl.name.c_str(), sl.type.dtype, int32_t(sl.type.shape.size()), sl.type.shape.data(), sl.type.bytes});
    }
  }

  void map_weights() {
    std::string path = dir_ + "/weights.bin";
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(NNVM_ERROR_IO, "cannot open %s: %s", path.c_str(), std::strerror(errno));
    struct stat st;
    void* p = nullptr;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular && uint64_t(st.st_size) == weights_bytes_ && weights_bytes_ > 0)
      p = mmap(nullptr, size_t(weights_bytes_), PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);
    if (!regular) fail(NNVM_ERROR_IO, "cannot read %s: not a regular file", path.c_str());
    if (uint64_t(st.st_size) != weights_bytes_)
      fail(NNVM_ERROR_FORMAT, "%s has %llu bytes, but %s (weights_bytes) expects %llu%s", path.c_str(), ull(st.st_size),
           json_path_.c_str(), ull(weights_bytes_), uint64_t(st.st_size) < weights_bytes_ ? ": the file is truncated" : "");
    if (p == MAP_FAILED) fail(NNVM_ERROR_IO, "cannot map %s: %s", path.c_str(), std::strerror(map_errno));
    m_.weights = static_cast<const char*>(p);
    m_.weights_size = p ? size_t(weights_bytes_) : 0;
    for (uint64_t offset : constant_offsets_) m_.plan.constants.push_back(m_.weights + offset);
  }

  // kernels.so states the parameter types each kernel was compiled for (S_signature:
  // "float32 [1x64];float32 [64]"); the steps were checked against model.json's, which must
  // agree, or an edited model.json would let a kernel read and write past its tensors.
  void check_signature(size_t k, const char* sig) {
    const KernelInfo& kernel = m_.kernels[k];
    if (!sig)
      fail(NNVM_ERROR_KERNEL, "%s/kernels.so has no %s_signature (the parameter types of kernel %s); rebuild the artifact",
           dir_.c_str(), kernel.symbol.c_str(), kernel.symbol.c_str());
    for (size_t p = 0;; ++p) {
      const char* end = std::strchr(sig, ';');
      if (!end) end = sig + std::strlen(sig);
      bool json_done = p == kernel.params.size();
      if (json_done && !*sig) return;
      std::string compiled = *sig ? std::string(sig, end) : "nothing";
      std::string given = json_done ? "nothing" : type_text(kernel.params[p]);
      if (compiled != given) {
        size_t st = 0;
        while (st < m_.plan.steps.size() && m_.plan.steps[st].kernel != k) ++st;
        fail(NNVM_ERROR_FORMAT, "%s: steps[%zu] (node '%s') calls kernel %s, whose parameter %zu was compiled for %s, but kernels[%zu].params[%zu] gives %s",
             json_path_.c_str(), st, st < m_.steps.size() ? m_.steps[st].node.c_str() : "", kernel.symbol.c_str(), p,
             compiled.c_str(), k, p, given.c_str());
      }
      sig = *end ? end + 1 : end;
    }
  }

  void load_kernels() {
    if (m_.kernels.empty()) return;
    std::string path = dir_ + "/kernels.so";
    m_.library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_.library) fail(NNVM_ERROR_IO, "cannot load %s: %s", path.c_str(), dlerror());
    for (size_t k = 0; k < m_.kernels.size(); ++k) {
      KernelInfo& kernel = m_.kernels[k];
      nnvm_kernel_fn fn = reinterpret_cast<nnvm_kernel_fn>(dlsym(m_.library, kernel.symbol.c_str()));
      m_.plan.kernels.push_back(fn);
      kernel.workspace_bytes =
          reinterpret_cast<nnvm_workspace_bytes_fn>(dlsym(m_.library, (kernel.symbol + "_workspace_bytes").c_str()));
      if (!fn || !kernel.workspace_bytes)
        fail(NNVM_ERROR_KERNEL, "%s has no kernel '%s' (with its _workspace_bytes), which %s names in kernels[%zu].symbol",
             path.c_str(), kernel.symbol.c_str(), json_path_.c_str(), k);
      check_signature(k, static_cast<const char*>(dlsym(m_.library, (kernel.symbol + "_signature").c_str())));
    }
    // Shapes are static, so each kernel's scratch size is known now; runs lend the largest.
    const int64_t no_sizes = 0;
    uint64_t& workspace = m_.plan.workspace_bytes;
    for (auto& st : m_.plan.steps) workspace = std::max(workspace, m_.kernels[st.kernel].workspace_bytes(&no_sizes));
    workspace = (workspace + 63) / 64 * 64;
  }

  std::string dir_, json_path_;
  json::Reader r_;
  const Path root_;
  nnvm_model& m_;
  uint64_t weights_bytes_ = 0, planned_bytes_ = 0;
  std::vector<uint8_t> written_;
  std::vector<uint64_t> constant_offsets_;  // in weights.bin, per Plan::constants entry
};

}  // namespace

nnvm_model* load(const std::string& dir) {
  auto m = std::make_unique<nnvm_model>();
  Loader(dir, *m).load();
  return m.release();
}

}  // namespace runtime
NNVM_END_NAMESPACE

// Running a loaded model: one arena per run holds its activations and the kernels' workspace,
// so concurrent runs share nothing but the read-only model and the thread pool. Arenas are
// reused from run to run (nnvm_model::spare_arenas), and outputs are written straight into the
// caller's buffers where that is safe (see in_place).
#include <cstdlib>
#include <cstring>

#include "model.hpp"
#include "nnvm/runtime/thread_pool.hpp"

NNVM_BEGIN_NAMESPACE
namespace runtime {

namespace {
const char* kind_name(bool inputs) { return inputs ? "input" : "output"; }

// Data pointers may be NULL only for empty tensors.
void check_data(const nnvm_model& m, const void* const* data, bool inputs) {
  const auto& slots = inputs ? m.inputs : m.outputs;
  if (!data && !slots.empty()) fail(NNVM_ERROR_INPUT, "model '%s': the %s array is NULL", m.name.c_str(), kind_name(inputs));
  for (size_t i = 0; i < slots.size(); ++i)
    if (!data[i] && m.slots[slots[i]].type.bytes > 0)
      fail(NNVM_ERROR_INPUT, "%s '%s' has NULL data", kind_name(inputs), m.slots[slots[i]].name.c_str());
}
}  // namespace

void check_tensors(const nnvm_model& m, const nnvm_tensor* tensors, int count, bool inputs) {
  const auto& slots = inputs ? m.inputs : m.outputs;
  const char* what = kind_name(inputs);
  if (count < 0 || size_t(count) != slots.size() || (count > 0 && !tensors))
    fail(NNVM_ERROR_INPUT, "model '%s' takes %zu %s tensors, got %d%s", m.name.c_str(), slots.size(), what, count,
         count > 0 && !tensors ? " (a NULL array)" : "");
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot& sl = m.slots[slots[i]];
    const nnvm_tensor& t = tensors[i];
    bool valid_rank = t.rank >= 0 && t.rank <= 64 && (t.shape || t.rank == 0);
    if (!valid_rank || t.dtype != sl.type.dtype || size_t(t.rank) != sl.type.shape.size() ||
        (t.rank && std::memcmp(t.shape, sl.type.shape.data(), size_t(t.rank) * 8) != 0))
      fail(NNVM_ERROR_INPUT, "%s '%s' (%ss[%zu]) is %s but the model expects %s", what, sl.name.c_str(), what, i,
           valid_rank ? type_text(t.dtype, t.shape, size_t(t.rank)).c_str() : "of an invalid rank or shape",
           type_text(sl.type).c_str());
  }
}

namespace {

// An arena of the model's size, borrowed for one run: a spare one when there is one, else a new
// one; given back to the model's spares at the end of the run (also when it fails).
class BorrowedArena {
 public:
  explicit BorrowedArena(const nnvm_model& m) : m_(m) {
    uint64_t total = m.arena_bytes + m.workspace_bytes;
    if (total == 0) return;
    {
      std::lock_guard<std::mutex> lk(m.spare_mutex);
      if (!m.spare_arenas.empty()) {
        p_ = m.spare_arenas.back();
        m.spare_arenas.pop_back();
        return;
      }
    }
    p_ = std::aligned_alloc(64, size_t((total + 63) / 64 * 64));
    if (!p_)
      fail(NNVM_ERROR_MEMORY, "model '%s': cannot allocate %llu bytes for activations and workspace", m.name.c_str(),
           ull(total));
  }
  ~BorrowedArena() {
    if (!p_) return;
    std::lock_guard<std::mutex> lk(m_.spare_mutex);
    try {
      m_.spare_arenas.push_back(p_);
    } catch (...) {  // no memory to keep it: free it
      std::free(p_);
    }
  }
  BorrowedArena(const BorrowedArena&) = delete;
  BorrowedArena& operator=(const BorrowedArena&) = delete;
  char* base() const { return static_cast<char*>(p_); }

 private:
  const nnvm_model& m_;
  void* p_ = nullptr;
};

bool overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

// Whether output `o` can be computed straight into the caller's buffer: a kernel computes it
// (not an input or a constant), it is no other output too, and the caller's buffer overlaps no
// input and no other output buffer (a kernel still reading an input must not see it change).
bool in_place(const nnvm_model& m, size_t o, const void* const* inputs, void* const* outputs) {
  const size_t slot = m.outputs[o];
  const uint64_t bytes = m.slots[slot].type.bytes;
  if (m.slots[slot].kind != Slot::Kind::activation || bytes == 0) return false;
  for (size_t i = 0; i < m.inputs.size(); ++i)
    if (overlap(outputs[o], bytes, inputs[i], m.slots[m.inputs[i]].type.bytes)) return false;
  for (size_t p = 0; p < m.outputs.size(); ++p)
    if (p != o && (m.outputs[p] == slot || overlap(outputs[o], bytes, outputs[p], m.slots[m.outputs[p]].type.bytes)))
      return false;
  return true;
}

}  // namespace

void run(const nnvm_model& m, const void* const* inputs, void* const* outputs, int num_threads) {
  check_data(m, inputs, true);
  check_data(m, outputs, false);

  BorrowedArena arena(m);
  char* base = arena.base();
  std::vector<void*> data(m.slots.size());
  for (size_t s = 0; s < m.slots.size(); ++s) {
    const Slot& sl = m.slots[s];
    data[s] = sl.kind == Slot::Kind::input      ? const_cast<void*>(inputs[sl.input])
              : sl.kind == Slot::Kind::constant ? const_cast<char*>(m.weights) + sl.offset
                                                : base + sl.offset;
  }
  // Outputs have arena space of their own (the plan leaves them out of its shared part), so
  // pointing one at the caller's buffer takes nothing from another tensor.
  for (size_t o = 0; o < m.outputs.size(); ++o)
    if (in_place(m, o, inputs, outputs)) data[m.outputs[o]] = outputs[o];

  PoolRef pool{&ThreadPool::global(), num_threads > 0 ? num_threads : 0};
  nnvm_kernel_env env{&pool, &nnvm_pool_parallel_for};
  std::vector<void*> args(m.max_args);
  const int64_t no_sizes = 0;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step& st = m.steps[i];
    const Kernel& k = m.kernels[st.kernel];
    for (size_t a = 0; a < st.args.size(); ++a) args[a] = data[st.args[a]];
    int32_t status = k.fn(args.data(), &no_sizes, base ? base + m.arena_bytes : nullptr, m.workspace_bytes, &env);
    if (status != NNVM_STATUS_OK)
      fail(NNVM_ERROR_KERNEL, "model '%s', step %zu (node '%s', op %s): kernel %s returned status %d%s", m.name.c_str(), i,
           st.node.c_str(), st.op.c_str(), k.symbol.c_str(), int(status),
           status == NNVM_STATUS_WORKSPACE_TOO_SMALL ? " (workspace too small)"
           : status == NNVM_STATUS_RUNTIME_FAILURE   ? " (the thread pool failed)"
                                                     : "");
  }
  // The rest: outputs that are inputs or constants, or shown twice, or whose buffers overlap
  // (memmove).
  for (size_t i = 0; i < m.outputs.size(); ++i)
    if (uint64_t bytes = m.slots[m.outputs[i]].type.bytes; bytes && data[m.outputs[i]] != outputs[i])
      std::memmove(outputs[i], data[m.outputs[i]], size_t(bytes));
}

}  // namespace runtime
NNVM_END_NAMESPACE

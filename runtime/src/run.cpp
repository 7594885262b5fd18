// Running a loaded model: one allocation per run holds its activations and the kernels'
// workspace, so concurrent runs share nothing but the read-only model and the thread pool.
#include <cstdlib>
#include <cstring>
#include <memory>

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

void run(const nnvm_model& m, const void* const* inputs, void* const* outputs, int num_threads) {
  check_data(m, inputs, true);
  check_data(m, outputs, false);

  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  uint64_t total = m.arena_bytes + m.workspace_bytes;
  std::unique_ptr<void, Free> arena(total ? std::aligned_alloc(64, size_t(total)) : nullptr);
  if (total && !arena)
    fail(NNVM_ERROR_MEMORY, "model '%s': cannot allocate %llu bytes for activations and workspace", m.name.c_str(),
         ull(total));
  char* base = static_cast<char*>(arena.get());
  std::vector<void*> data(m.slots.size());
  for (size_t s = 0; s < m.slots.size(); ++s) {
    const Slot& sl = m.slots[s];
    data[s] = sl.kind == Slot::Kind::input      ? const_cast<void*>(inputs[sl.input])
              : sl.kind == Slot::Kind::constant ? const_cast<char*>(m.weights) + sl.offset
                                                : base + sl.offset;
  }

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
  // Outputs may be inputs or constants too, and a caller's buffers may overlap: memmove.
  for (size_t i = 0; i < m.outputs.size(); ++i)
    if (uint64_t bytes = m.slots[m.outputs[i]].type.bytes) std::memmove(outputs[i], data[m.outputs[i]], size_t(bytes));
}

}  // namespace runtime
NNVM_END_NAMESPACE

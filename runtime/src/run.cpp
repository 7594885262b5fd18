// Running a loaded model through the run loop every model runs by (nnvm/runtime/plan.hpp): one
// arena per run holds its activations and the kernels' workspace, so concurrent runs share
// nothing but the read-only model and the thread pool. Arenas are reused from run to run
// (nnvm_model::spare_arenas).
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
  const auto& slots = inputs ? m.plan.inputs : m.plan.outputs;
  if (!data && !slots.empty()) fail(NNVM_ERROR_INPUT, "model '%s': the %s array is NULL", m.name.c_str(), kind_name(inputs));
  for (size_t i = 0; i < slots.size(); ++i)
    if (!data[i] && m.plan.slots[slots[i]].bytes > 0)
      fail(NNVM_ERROR_INPUT, "%s '%s' has NULL data", kind_name(inputs), m.slots[slots[i]].name.c_str());
}
}  // namespace

void check_tensors(const nnvm_model& m, const nnvm_tensor* tensors, int count, bool inputs) {
  const auto& slots = inputs ? m.plan.inputs : m.plan.outputs;
  const char* what = kind_name(inputs);
  if (count < 0 || size_t(count) != slots.size() || (count > 0 && !tensors))
    fail(NNVM_ERROR_INPUT, "model '%s' takes %zu %s tensors, got %d%s", m.name.c_str(), slots.size(), what, count,
         count > 0 && !tensors ? " (a NULL array)" : "");
  for (size_t i = 0; i < slots.size(); ++i) {
    const SlotInfo& sl = m.slots[slots[i]];
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
    uint64_t total = m.plan.run_bytes();
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

}  // namespace

void run(const nnvm_model& m, const void* const* inputs, void* const* outputs, int num_threads) {
  check_data(m, inputs, true);
  check_data(m, outputs, false);

  BorrowedArena arena(m);
  StepFailure failed = run_plan(m.plan, inputs, outputs, arena.base(), num_threads);
  if (!failed) return;
  const StepInfo& st = m.steps[failed.step];
  fail(NNVM_ERROR_KERNEL, "model '%s', step %zu (node '%s', op %s): kernel %s returned status %d%s", m.name.c_str(),
       failed.step, st.node.c_str(), st.op.c_str(), m.kernels[m.plan.steps[failed.step].kernel].symbol.c_str(),
       int(failed.status),
       failed.status == NNVM_STATUS_WORKSPACE_TOO_SMALL ? " (workspace too small)"
       : failed.status == NNVM_STATUS_RUNTIME_FAILURE   ? " (the thread pool failed)"
                                                        : "");
}

}  // namespace runtime
NNVM_END_NAMESPACE

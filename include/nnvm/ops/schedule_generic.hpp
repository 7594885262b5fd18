// The schedule an op gets on a target: the op's own for the target's family when it has one,
// else the family's generic recipe for the op's pattern. Adding a family means writing its
// recipes here; op files change only where an op wants a dedicated schedule.
//
//   family  elementwise / broadcast / injective   reduction                 out_fusable / opaque
//   cpu     vectorized innermost, parallel rest   parallel over outputs     plain loops
//   gpu     one thread per output element         one thread per output     one thread per output
//           (a scan: one block stepping serially, its threads sharing each step; gpu_schedule_scan)
//   mcu     plain loops (one thread, small code); internal stages in place when optimizing for
//           size, and an epilogue's producer computed inside it (schedule_mcu.hpp)
//   wasm    vectorized innermost, no threads      plain loops               plain loops
//           (with -msimd128, Target::recipe_family() gives WebAssembly the CPU's recipes)
#pragma once

#include <string>
#include <vector>

#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"
#include "nnvm/ops/schedule_gpu.hpp"
#include "nnvm/ops/schedule_mcu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The op's dedicated schedule for `family`; empty when it has none.
inline const ScheduleFn& own_schedule(const OpDef& def, target::Family family) {
  static const ScheduleFn none;
  switch (family) {
    case target::Family::cpu: return def.cpu_schedule;
    case target::Family::gpu: return def.gpu_schedule;
    case target::Family::mcu:
    case target::Family::wasm: return none;
  }
  return none;
}

// The op's schedule for `family` when elementwise ops follow it in one kernel; empty when it has
// none. CPU ops bring their own; on a microcontroller every op takes the family's.
inline const FusedScheduleFn& own_fused_schedule(const OpDef& def, target::Family family) {
  static const FusedScheduleFn none, mcu = mcu_fused_schedule;
  return family == target::Family::cpu ? def.cpu_fused_schedule : family == target::Family::mcu ? mcu : none;
}

// The family's generic recipe for `pattern`, applied to the stages that compute `outputs`
// (every compute stage between them and the placeholders, for the GPU, whose kernels have no
// serial host loops to run an unscheduled stage in).
inline void generic_schedule(OpPattern pattern, schedule::Schedule& s, const std::vector<te::Tensor>& outputs,
                             const target::Target& target) {
  const bool data_parallel =
      pattern == OpPattern::elementwise || pattern == OpPattern::broadcast || pattern == OpPattern::injective;
  switch (target.recipe_family()) {
    case target::Family::cpu:
    case target::Family::wasm:
      for (auto& o : outputs) {
        if (data_parallel) schedule_injective(s[o], target);
        else if (pattern == OpPattern::reduction) schedule_reduction(s[o], target);
      }
      return;
    case target::Family::gpu:
      for (auto& t : te::post_order(outputs)) {
        if (t.op().kind == te::OpKind::scan && schedule::Schedule::is_scan_leader(s[t])) gpu_schedule_scan(s, t, target);
        if (t.op().kind != te::OpKind::compute) continue;
        schedule::Stage st = s[t];
        // Stages an op's own schedule already arranged (an epilogue's producer) are left as they are.
        if (st.node().attach == schedule::AttachKind::root && st.node().relations.empty()) gpu_schedule_stage(st, target);
      }
      return;
    case target::Family::mcu: mcu_inline_intermediates(s, outputs, target); return;
  }
}

// How apply_schedule scheduled, for a kernel's origin line ("cpu schedule", "generic gpu
// recipe for injective ops").
inline std::string schedule_source(const OpDef& def, const target::Target& target) {
  const target::Family family = target.recipe_family();
  if (own_schedule(def, family)) return str_cat(target::family_name(family), " schedule");
  return str_cat("generic ", target::family_name(family), " recipe for ", pattern_name(def.pattern), " ops");
}

// Schedules the stages `def`'s compute made (its `outputs`) for `target`.
inline void apply_schedule(const OpDef& def, schedule::Schedule& s, const std::vector<te::Tensor>& outputs,
                           const target::Target& target) {
  if (const ScheduleFn& own = own_schedule(def, target.recipe_family())) own(s, outputs, target);
  else generic_schedule(def.pattern, s, outputs, target);
}

}  // namespace ops
NNVM_END_NAMESPACE

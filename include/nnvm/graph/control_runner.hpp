// Running a control node (graph/control.hpp): its bodies are compiled models of their own, and
// the node is one step of its parent's plan that the run loop hands to the host
// (runtime::HostStep) instead of a kernel. An if runs one branch's plan into the node's outputs;
// a loop or a scan runs its body's plan once per iteration, reading the carried values from one
// buffer and writing them to another (swapped after each iteration), and writing scan rows
// straight into the node's outputs. Nothing is unrolled: the body is compiled once.
#pragma once

#include <cstdlib>

#include "nnvm/graph/compiled_model.hpp"
#include "nnvm/graph/control.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct ControlRunner {
  std::string op;  // "if", "loop" or "scan"
  ControlLayout layout;
  bool has_trip_count = true, has_cond = true;  // loop: whether M and cond were given
  int64_t rows = 0;  // scan: the sequence length; loop with scan outputs: M
  std::vector<int64_t> input_reverse, output_reverse;  // scan: per scan input and output
  std::vector<uint64_t> carried_bytes, slice_in_bytes, slice_out_bytes;
  std::vector<CompiledModel> bodies;  // if: then, else; loop and scan: the body

  // runtime::HostStep's entry: the step's arguments are the node's given inputs, then its outputs.
  static int32_t run(const void* self, void* const* args, const nnvm_kernel_env* env) {
    const ControlRunner& c = *static_cast<const ControlRunner*>(self);
    int threads = env && env->pool ? static_cast<const runtime::PoolRef*>(env->pool)->num_threads : 0;
    if (c.op == "if") {
      const CompiledModel& body = c.bodies[*static_cast<const uint8_t*>(args[0]) ? 0 : 1];
      Memory arena(body.plan().run_bytes());
      return runtime::run_plan(body.plan(), args + 1, args + 1 + c.layout.captures, arena.data, threads).status;
    }
    return c.iterate(args, threads);
  }

 private:
  // 64-byte aligned scratch for one run of the node: the body's arena and the carried buffers.
  struct Memory {
    char* data;
    explicit Memory(uint64_t bytes)
        : data(static_cast<char*>(std::aligned_alloc(64, size_t(std::max<uint64_t>((bytes + 63) / 64 * 64, 64))))) {
      if (!data) throw std::bad_alloc();
    }
    ~Memory() { std::free(data); }
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
  };

  int32_t iterate(void* const* args, int threads) const {
    const bool loop = op == "loop";
    const ControlLayout& l = layout;
    const CompiledModel& body = bodies[0];
    size_t a = 0;
    int64_t trip_count = INT64_MAX;
    bool cond = true;
    if (loop && has_trip_count) trip_count = *static_cast<const int64_t*>(args[a++]);
    if (loop && has_cond) cond = *static_cast<const uint8_t*>(args[a++]) != 0;
    if (!loop) trip_count = rows;
    void* const* init = args + a;
    void* const* scans = init + l.carried;
    void* const* captures = scans + l.scan_inputs;
    void* const* outs = captures + l.captures;

    // Carried values live in two buffers: the body reads one and writes the other.
    std::vector<uint64_t> offset(l.carried);
    uint64_t carried_total = 0;
    for (size_t k = 0; k < l.carried; ++k) offset[k] = carried_total, carried_total += (carried_bytes[k] + 63) / 64 * 64;
    uint64_t arena_bytes = (body.plan().run_bytes() + 63) / 64 * 64;
    Memory memory(arena_bytes + 2 * carried_total);
    char* buffer[2] = {memory.data + arena_bytes, memory.data + arena_bytes + carried_total};
    for (size_t k = 0; k < l.carried; ++k) std::memcpy(buffer[0] + offset[k], init[k], size_t(carried_bytes[k]));

    int64_t iter = 0;
    uint8_t cond_in = 1, cond_out = 1;
    std::vector<const void*> in;
    std::vector<void*> out;
    int current = 0;
    for (; iter < trip_count && cond; ++iter) {
      in.clear(), out.clear();
      if (loop) in.push_back(&iter), in.push_back(&cond_in), out.push_back(&cond_out);
      for (size_t k = 0; k < l.carried; ++k) {
        in.push_back(buffer[current] + offset[k]);
        out.push_back(buffer[1 - current] + offset[k]);
      }
      for (size_t k = 0; k < l.scan_inputs; ++k)
        in.push_back(static_cast<const char*>(scans[k]) + row(iter, k < input_reverse.size() && input_reverse[k]) *
                                                               slice_in_bytes[k]);
      for (size_t k = 0; k < l.captures; ++k) in.push_back(captures[k]);
      for (size_t k = 0; k < l.scan_outputs; ++k)
        out.push_back(static_cast<char*>(outs[l.carried + k]) +
                      row(iter, k < output_reverse.size() && output_reverse[k]) * slice_out_bytes[k]);
      if (auto failed = runtime::run_plan(body.plan(), in.data(), out.data(), memory.data, threads)) return failed.status;
      cond = cond_out != 0;
      current = 1 - current;
    }
    if (l.scan_outputs && iter < rows) return NNVM_STATUS_LOOP_EXIT;
    for (size_t k = 0; k < l.carried; ++k) std::memcpy(outs[k], buffer[current] + offset[k], size_t(carried_bytes[k]));
    return NNVM_STATUS_OK;
  }

  // The row of a scan input or output at iteration `i`.
  uint64_t row(int64_t i, bool reverse) const { return uint64_t(reverse ? rows - 1 - i : i); }
};

}  // namespace graph
NNVM_END_NAMESPACE

// The harness the scheduling lessons share: a lesson is a list of schedule steps; each is
// lowered, compiled (all in one compiler call), run, timed, and checked against a plain loop.
#pragma once

#include <nnvm/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>

namespace lesson {

using namespace nnvm;

// One schedule step: what it does to the loops, why that is faster, and the code. `args` are
// the kernel's arguments, inputs then output; the schedule starts from the output's default.
struct Step {
  std::string name;
  std::string why;
  std::vector<te::Tensor> args;
  std::function<void(schedule::Schedule&)> apply;
};

// The loop nest as scheduled: the IR right after the `simplify` pass, which still shows each
// loop's kind (vectorized, unrolled, parallel) before those loops are rewritten into vector
// code and copies. LowerOptions::on_pass hands us every pass's IR; we keep this one.
ir::LoweredFunc lower_step(const schedule::Schedule& s, const std::vector<te::Tensor>& args, const std::string& name,
                           std::string& loop_nest) {
  lower::LowerOptions options;
  options.on_pass = [&](const std::string& pass, const ir::Stmt& ir) {
    if (pass == "simplify") loop_nest = ir::to_string(ir);
  };
  return lower::lower(s, args, name, options);
}

// Wall time of one call: the fastest of `reps` calls (or of those that fit in one second)
// after a warm-up call. The fastest run is the one least disturbed by other processes, which
// matters on a shared machine, where a median would partly measure the neighbours.
double best_ms(const target::Kernel& kernel, std::vector<NDArray>& buffers, int reps) {
  std::vector<BufferView> views(buffers.begin(), buffers.end());
  kernel(views);
  double best = INFINITY, total = 0;
  for (int r = 0; r < reps && (r == 0 || total < 1000.0); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel(views);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms);
    total += ms;
  }
  return best;
}

// Lowers and compiles every step (one compiler call for all), then runs each in turn.
// `buffers` are the kernel arguments; the last one is the output, compared with `want`
// element by element: |got - want| <= atol + rtol * |want|. Returns the number of wrong steps.
int run_lesson(const std::vector<Step>& steps, std::vector<NDArray>& buffers, const std::vector<double>& want,
               double atol, double rtol, double gflop, int reps) {
  std::vector<ir::LoweredFunc> fns;
  std::vector<std::string> nests(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    schedule::Schedule s = schedule::create_schedule(steps[k].args.back());
    steps[k].apply(s);
    fns.push_back(lower_step(s, steps[k].args, "step" + std::to_string(k), nests[k]));
  }
  std::vector<target::Kernel> kernels = target::jit_c(fns);
  int wrong = 0;
  double first = 0, previous = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    std::cout << "\n== step " << k << ": " << steps[k].name << "\n" << steps[k].why << "\n\n"
              << "schedule: " << fns[k].origin << "\n" << nests[k] << "\n";
    auto out = buffers.back().values<float>();
    std::fill(out.begin(), out.end(), NAN);  // an element the kernel skips shows as wrong
    double ms = best_ms(kernels[k], buffers, reps);
    double max_err = 0;
    bool ok = true;
    for (size_t e = 0; e < want.size(); ++e) {
      double err = std::abs(double(out[e]) - want[e]);
      if (!(err <= atol + rtol * std::abs(want[e]))) ok = false;  // NaN fails too
      max_err = std::max(max_err, std::isnan(err) ? INFINITY : err);
    }
    wrong += !ok;
    if (k == 0) first = previous = ms;
    std::printf("time %.3f ms, %.2f GFLOP/s, x%.2f vs previous step, x%.2f vs naive; max |error| %.2g %s\n", ms,
                gflop / (ms * 1e-3), previous / ms, first / ms, max_err, ok ? "(ok)" : "(WRONG)");
    previous = ms;
  }
  return wrong;
}

}  // namespace lesson

// nnvm's one CPU parallel runtime: a small fixed pool of worker threads that compiled kernels
// reach through the C ABI in kernel_abi.h (env->parallel_for), so generated code needs no OpenMP.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "nnvm/config.hpp"
#include "nnvm/runtime/kernel_abi.h"

NNVM_BEGIN_NAMESPACE
namespace runtime {

namespace detail {
// True on pool workers, and on a caller while it runs its own chunk: a parallel_for started
// there runs serially instead of waiting on workers that may all be busy with its parent.
inline thread_local bool in_parallel_region = false;

// A spin-wait hint to the CPU (frees the core's resources for its sibling thread).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

// The integer environment variable `name` when it is one of at least `lo`, at most `hi`
// (larger values are `hi`); else nothing.
inline std::optional<long> env_int(const char* name, long lo, long hi) {
  const char* s = std::getenv(name);
  if (!s) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo) return std::nullopt;
  return std::min(v, hi);
}
}  // namespace detail

// How long an idle worker, or a caller waiting for its workers, spins before it sleeps:
// NNVM_POOL_SPIN_US microseconds when set (0: sleep at once), else 100. Waking a sleeping
// thread takes tens of microseconds, as long as a whole small kernel (a 14x14 depthwise conv
// runs in about 10), so back-to-back parallel loops (a network's kernels) should find the
// workers awake; a pool idle for longer costs no CPU.
inline int default_spin_us() { return int(detail::env_int("NNVM_POOL_SPIN_US", 0, 1000000).value_or(100)); }

// NNVM_NUM_THREADS when set to a positive number, else the hardware's thread count (at least 1).
inline int default_num_threads() {
  if (auto v = detail::env_int("NNVM_NUM_THREADS", 1, 1024)) return int(*v);
  return std::max(1, int(std::thread::hardware_concurrency()));
}

// Splits [0, n) into at most num_threads() equal contiguous chunks (static chunking), runs one
// on the calling thread and the rest on workers, and waits for all of them. One parallel_for
// runs at a time per pool; concurrent callers queue.
class ThreadPool {
 public:
  // num_threads counts the caller too, so a pool of 1 has no workers and runs serially.
  explicit ThreadPool(int num_threads = default_num_threads(), int spin_us = default_spin_us())
      : default_threads_(std::max(1, num_threads)), spin_us_(std::max(0, spin_us)) {}
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lk(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int num_threads() const { return default_threads_; }

  // The process-wide pool that JIT-compiled kernels use (sized by default_num_threads()).
  static ThreadPool& global() {
    static ThreadPool pool;
    return pool;
  }

  // Runs body over [0, n) with up to `num_threads` threads (0: the pool's own count; more than
  // that starts extra workers, which then stay). Returns the first non-zero status that a chunk
  // returned; chunks not yet started when one fails are skipped. May throw std::system_error
  // when a thread cannot be started (nnvm_pool_parallel_for turns that into a status).
  int32_t parallel_for(int64_t n, nnvm_parallel_body body, void* closure, int num_threads = 0) {
    if (n <= 0) return 0;
    int threads = num_threads > 0 ? num_threads : default_threads_;
    int64_t chunks = std::min<int64_t>(n, threads);
    if (chunks <= 1 || detail::in_parallel_region) return body(0, n, closure);

    std::lock_guard<std::mutex> serial(dispatch_);
    // A worker that woke late for the previous job may still be looking at it (below).
    spin_for([&] { return active_.load(std::memory_order_acquire) == 0; });
    {
      std::unique_lock<std::mutex> lk(mutex_);
      while (int64_t(workers_.size()) < chunks - 1) workers_.emplace_back([this] { worker_loop(); });
      done_.wait(lk, [&] { return active_ == 0; });
      job_.body = body;
      job_.closure = closure;
      job_.n = n;
      job_.chunks = chunks;
      job_.helpers = int(chunks - 1);
      job_.next.store(0);
      job_.finished.store(0);
      job_.status.store(0);
      ++generation_;
    }
    wake_.notify_all();
    detail::in_parallel_region = true;
    run_chunks();
    detail::in_parallel_region = false;
    spin_for([&] { return job_.finished.load(std::memory_order_acquire) == job_.chunks; });
    std::unique_lock<std::mutex> lk(mutex_);
    done_.wait(lk, [&] { return job_.finished.load() == job_.chunks; });
    return job_.status.load();
  }

 private:
  struct Job {
    nnvm_parallel_body body = nullptr;
    void* closure = nullptr;
    int64_t n = 0, chunks = 0;
    int helpers = 0;  // how many workers may join (the rest stay asleep)
    std::atomic<int64_t> next{0}, finished{0};
    std::atomic<int32_t> status{0};
  };

  void run_chunks() {
    for (;;) {
      int64_t c = job_.next.fetch_add(1);
      if (c >= job_.chunks) return;
      if (job_.status.load(std::memory_order_relaxed) == 0) {
        int64_t begin = job_.n * c / job_.chunks, end = job_.n * (c + 1) / job_.chunks;
        int32_t st = job_.body(begin, end, job_.closure);
        int32_t zero = 0;
        if (st != 0) job_.status.compare_exchange_strong(zero, st);
      }
      if (job_.finished.fetch_add(1) + 1 == job_.chunks) {
        std::lock_guard<std::mutex> lk(mutex_);
        done_.notify_all();
      }
    }
  }

  // Spins, holding no lock, for up to spin_us_ microseconds until `ready()`; true if it held.
  template <class Ready>
  bool spin_for(Ready&& ready) const {
    if (spin_us_ == 0) return ready();
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    for (unsigned i = 1;; ++i) {
      if (ready()) return true;
      detail::cpu_relax();
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
    }
  }

  void worker_loop() {
    detail::in_parallel_region = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(mutex_);
    seen = generation_;
    for (;;) {
      if (!stop_ && generation_ == seen) {
        lk.unlock();
        spin_for([&] { return stop_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_acquire) != seen; });
        lk.lock();
      }
      wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (job_.helpers == 0) continue;
      --job_.helpers;
      ++active_;
      lk.unlock();
      run_chunks();
      lk.lock();
      if (--active_ == 0) done_.notify_all();
    }
  }

  const int default_threads_;
  const int spin_us_;
  std::mutex dispatch_;  // one job at a time
  std::mutex mutex_;     // guards everything below except the job's atomics; the other atomics
                         // are written under it and read without it only by spinning threads
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job job_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> stop_{false};
};

// What env->pool points to for nnvm_pool_parallel_for: a pool and a thread limit (0: the pool's).
struct PoolRef {
  ThreadPool* pool = nullptr;
  int32_t num_threads = 0;
};

}  // namespace runtime
NNVM_END_NAMESPACE

// The C ABI entry compiled kernels call through env->parallel_for. `pool` is a
// nnvm::runtime::PoolRef*; NULL means the global pool. Never throws: failures become
// NNVM_STATUS_RUNTIME_FAILURE.
extern "C" inline int32_t nnvm_pool_parallel_for(void* pool, int64_t n, nnvm_parallel_body body,
                                                 void* closure) {
  try {
    auto* ref = static_cast<const nnvm::runtime::PoolRef*>(pool);
    nnvm::runtime::ThreadPool& p = ref && ref->pool ? *ref->pool : nnvm::runtime::ThreadPool::global();
    return p.parallel_for(n, body, closure, ref ? ref->num_threads : 0);
  } catch (...) {
    return NNVM_STATUS_RUNTIME_FAILURE;
  }
}

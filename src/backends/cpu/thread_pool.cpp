#include "luminal/backends/cpu/thread_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>

#include "luminal/error.hpp"

namespace luminal::cpu {

namespace {
// Busy-wait for `ready` for at most ~kSpinMicros; the caller then sleeps on
// the pool's condition variables as before (spinning is only a shortcut).
constexpr int64_t kSpinMicros = 100;
template <typename Ready>
void spin_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  for (int i = 0;; ++i) {
    if (ready()) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return;
  }
}

// Set while a thread executes a chunk: a nested run_chunks then runs inline
// instead of waiting for workers that are all busy (which would deadlock).
thread_local bool t_in_chunk = false;
}  // namespace

struct ThreadPool::Job {
  const ChunkFn* fn = nullptr;
  std::vector<int64_t> bounds;
  int chunks = 0;
  std::atomic<int> next{0};
  // Workers inside work_on; changed under the pool's mutex_, read lock-free by
  // the caller's short spin before it sleeps.
  std::atomic<int> active{0};
  std::mutex error_mutex;
  std::exception_ptr error;
};

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1)
    throw Error("ThreadPool: the number of threads must be >= 1, got " +
                std::to_string(num_threads));
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int ThreadPool::default_size() {
  if (const char* env = std::getenv("LUMINAL_NUM_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(env, &end, 10);
    if (errno != 0 || end == env || *end != '\0' || value < 1 || value > 4096)
      throw Error("LUMINAL_NUM_THREADS must be a positive integer (at most 4096), got \"" +
                  std::string(env) + "\"");
    return static_cast<int>(value);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool(default_size());
  return pool;
}

std::vector<int64_t> ThreadPool::chunk_bounds(int64_t n, int chunks, int64_t align) {
  std::vector<int64_t> bounds{0};
  if (n <= 0) return bounds;
  const int64_t pieces = std::clamp<int64_t>(chunks, 1, n);
  align = std::max<int64_t>(align, 1);
  const int64_t base = n / pieces, extra = n % pieces;
  for (int64_t c = 1; c < pieces; ++c) {
    // c * n / pieces without overflowing for huge n.
    int64_t b = base * c + extra * c / pieces;
    b -= b % align;
    if (b > bounds.back()) bounds.push_back(b);
  }
  bounds.push_back(n);
  return bounds;
}

void ThreadPool::work_on(Job& job) {
  const bool was_in_chunk = t_in_chunk;
  t_in_chunk = true;
  for (;;) {
    const int c = job.next.fetch_add(1);
    if (c >= job.chunks) break;
    try {
      (*job.fn)(c, job.bounds[static_cast<size_t>(c)], job.bounds[static_cast<size_t>(c) + 1]);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
    }
  }
  t_in_chunk = was_in_chunk;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    // A running program launches kernels back to back (often tens of
    // microseconds apart): spin a little for the next job before sleeping, so
    // the worker joins it at once instead of after a futex wake-up.
    spin_until([&] {
      return generation_.load(std::memory_order_acquire) != seen ||
             !spinning_.load(std::memory_order_acquire);
    });
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!stop_ && generation_ == seen) {
        ++sleepers_;
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        --sleepers_;
      }
      if (stop_) return;
      seen = generation_;
      job = job_;
      if (job == nullptr) continue;  // woke after the job was already finished
      ++job->active;
    }
    work_on(*job);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--job->active == 0) done_.notify_all();
    }
  }
}

void ThreadPool::run_chunks(int64_t n, int chunks, const ChunkFn& fn, int64_t align) {
  if (n <= 0) return;
  Job job;
  job.fn = &fn;
  job.bounds = chunk_bounds(n, chunks, align);
  job.chunks = static_cast<int>(job.bounds.size()) - 1;
  if (job.chunks == 1 || workers_.empty() || t_in_chunk) {
    work_on(job);
  } else {
    std::lock_guard<std::mutex> submit(submit_mutex_);
    bool sleeping = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
      sleeping = sleepers_ > 0;  // spinning workers see generation_ without a wake-up
    }
    if (sleeping) wake_.notify_all();
    work_on(job);  // the caller takes chunks too
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = nullptr;  // no worker joins from now on; wait for those inside
    }
    spin_until([&] { return job.active.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return job.active == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace luminal::cpu

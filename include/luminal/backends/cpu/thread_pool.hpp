#pragma once
// The CPU backend's thread pool: the only source of threads the backend uses.
//
// A pool of size N runs work on N threads: N - 1 workers plus the calling
// thread, which always takes part (so a pool of size 1 runs everything inline
// and never starts a thread). Its size comes from LUMINAL_NUM_THREADS, or the
// number of cores this process may run on. Nothing else in the backend starts
// threads, so there is no oversubscription; a BLAS library called from a kernel
// later must be set to one thread per call (or to this pool's size when called
// outside the pool).
//
// Work is described as a range [0, n) cut into `chunks` contiguous pieces; the
// pieces are handed out dynamically, so an uneven piece does not stall the rest.
// One job runs at a time: concurrent callers are serialised, and a call made
// from inside a running chunk (nested parallelism) runs inline.
//
// Idle workers spin for up to ~100 us for the next job before sleeping on a
// condition variable: a program launches kernels back to back, and a futex
// wake-up per launch cost a third of a decode step. set_spinning(false) makes
// them sleep at once (around BLAS calls, whose own threads need the cores).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace luminal::cpu {

class ThreadPool {
public:
  /// fn(chunk, begin, end): chunk is the piece's index in [0, chunks).
  using ChunkFn = std::function<void(int chunk, int64_t begin, int64_t end)>;

  /// A pool running work on `num_threads` threads (>= 1; the caller is one of
  /// them). Throws luminal::Error for num_threads < 1.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// LUMINAL_NUM_THREADS if set (a positive integer; anything else throws
  /// luminal::Error naming the variable), else the number of cores this
  /// process may run on (its CPU affinity mask).
  static int default_size();
  /// The process-wide pool of default_size() threads, created on first use.
  static ThreadPool& shared();

  /// Split [0, n) into `chunks` contiguous pieces (clamped to [1, n]; piece
  /// boundaries are multiples of `align` where possible) and call fn on each,
  /// on up to size() threads. Returns when every piece is done; rethrows the
  /// first exception a piece threw (the other pieces still run to the end).
  void run_chunks(int64_t n, int chunks, const ChunkFn& fn, int64_t align = 1);

  /// Whether idle workers may spin briefly for the next job (default true)
  /// before sleeping. Turned off around calls into libraries with threads of
  /// their own (BLAS), which need the cores.
  void set_spinning(bool on) { spinning_.store(on, std::memory_order_release); }

  /// Boundaries used by run_chunks: piece c covers [bounds[c], bounds[c + 1]).
  static std::vector<int64_t> chunk_bounds(int64_t n, int chunks, int64_t align);

private:
  struct Job;
  void worker_loop();
  static void work_on(Job& job);

  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;       // one job at a time
  std::mutex mutex_;              // guards job_, generation_, stop_
  std::condition_variable wake_;  // workers: a new job (or stop)
  std::condition_variable done_;  // the caller: the last worker left the job
  Job* job_ = nullptr;
  // Changed under mutex_; read lock-free by workers spinning for the next job.
  std::atomic<uint64_t> generation_{0};
  int sleepers_ = 0;  // workers waiting on wake_ (guarded by mutex_)
  std::atomic<bool> spinning_{true};
  bool stop_ = false;
};

}  // namespace luminal::cpu

// The master's watchdog over busy workers (issue 9): a worker that has been on one request
// longer than MasterOptions::busy_limit is killed by its master and replaced, and the event is
// logged, so no request can hold a worker for ever (a hostile body that parses slowly, a hung
// outbound call, a bug).
//
// The board is one shared anonymous mapping the master creates before it forks: a slot per
// worker holding since when (steady clock, milliseconds; 0 = idle) the worker is busy. Workers
// only write their own slot, the master only reads them; both through lock-free atomics.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace portcullis::runtime {

class BusyBoard {
  struct Key {
    explicit Key() = default;
  };

 public:
  // nullptr when the mapping cannot be made (the pool then runs unwatched).
  static std::unique_ptr<BusyBoard> create(size_t slots);
  BusyBoard(Key, std::atomic<int64_t>* base, size_t slots) : base_(base), slots_(slots) {}
  ~BusyBoard();
  BusyBoard(const BusyBoard&) = delete;
  BusyBoard& operator=(const BusyBoard&) = delete;

  size_t size() const { return slots_; }
  std::atomic<int64_t>& slot(size_t i) { return base_[i]; }

 private:
  std::atomic<int64_t>* base_;
  size_t slots_;
};

// Milliseconds on the steady clock (CLOCK_MONOTONIC: the same in every process of the host).
int64_t steady_ms();

// Worker side. The master points a freshly forked worker at its slot; the request loop
// (serve_fastcgi) marks each request's start and end. A worker without a slot (no master, tests)
// makes these no-ops. request_finished() may be called early, once the response has left, so
// work done after it (batched event writes, periodic tasks) is not counted as the request's.
void watch_this_worker(std::atomic<int64_t>* slot);
void request_started();
void request_finished();

}  // namespace portcullis::runtime

#include "runtime/watchdog.h"

#include <sys/mman.h>

#include <chrono>
#include <new>

namespace portcullis::runtime {
namespace {

std::atomic<int64_t>* g_slot = nullptr;  // this worker's slot on its master's board

static_assert(std::atomic<int64_t>::is_always_lock_free,
              "the board is shared between processes: its atomics must not hide a lock");

}  // namespace

std::unique_ptr<BusyBoard> BusyBoard::create(size_t slots) {
  if (slots == 0) return nullptr;
  void* mem = ::mmap(nullptr, slots * sizeof(std::atomic<int64_t>), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* base = static_cast<std::atomic<int64_t>*>(mem);
  for (size_t i = 0; i < slots; ++i) new (&base[i]) std::atomic<int64_t>(0);
  return std::make_unique<BusyBoard>(Key{}, base, slots);
}

BusyBoard::~BusyBoard() {
  ::munmap(base_, slots_ * sizeof(std::atomic<int64_t>));
}

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void watch_this_worker(std::atomic<int64_t>* slot) {
  g_slot = slot;
  if (g_slot) g_slot->store(0, std::memory_order_relaxed);
}

void request_started() {
  // Never 0 while busy, even on a clock that starts at 0.
  if (g_slot) g_slot->store(steady_ms() | 1, std::memory_order_relaxed);
}

void request_finished() {
  if (g_slot) g_slot->store(0, std::memory_order_relaxed);
}

}  // namespace portcullis::runtime

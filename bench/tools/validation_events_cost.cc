// The validator's per-request cost of the token.validated log (issue 12: at most 10 % of its
// throughput): ValidationEvents::record for a realistic mix of valid tokens (1,000 users, each
// request one of their tokens), drained into a Recorder once a second of requests as the
// worker does. Prints nanoseconds per request; bench/README.md ("Events") sets it against the
// validator's measured time per request. Usage: portcullis-bench-validation-events [REQUESTS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "events/recorder.h"
#include "validation/validation_events.h"

using namespace portcullis;

int main(int argc, char** argv) {
  const long requests = argc > 1 ? std::atol(argv[1]) : 5000000;
  std::vector<validation::Verdict> verdicts;
  for (int u = 0; u < 1000; ++u) {
    auto claims = std::make_shared<validation::AccessClaims>();
    claims->sub = "usr_01jd3k6v2q8x4n7r9t0w5y" + std::to_string(1000 + u);
    claims->client_id = "dcr_01jd3k6v2q8x4n7r9t0w5y1z3a";
    claims->scope = "todo:read todo:write";
    validation::Verdict v;
    v.outcome = validation::Outcome::kValid;
    v.claims = claims;
    verdicts.push_back(std::move(v));
  }
  validation::ValidationEvents events(1000);
  events::Recorder recorder;
  const long per_drain = 10000;  // requests per "second" of a busy worker
  size_t written = 0;
  const auto started = std::chrono::steady_clock::now();
  for (long i = 0; i < requests; ++i) {
    events.record(verdicts[static_cast<size_t>(i % 1000)], "res_01jd3k6v2q8x4n7r9t0w5y1z3a",
                  "todo:read", "203.0.113.7", "mcp-client/1.0");
    if ((i + 1) % per_drain == 0) {
      events.drain_if_due(recorder, (i + 1) / per_drain * 1000);
      written += recorder.size();
      recorder = events::Recorder();  // what a flush leaves behind (the INSERT is not timed)
    }
  }
  const double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now() - started)
                                            .count());
  std::printf("%ld requests, %zu events, %.0f ns per request\n", requests, written,
              ns / static_cast<double>(requests));
  return 0;
}

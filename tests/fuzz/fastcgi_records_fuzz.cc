// The FastCGI reader (lib/runtime/fastcgi_records.cc) on arbitrary bytes, as any process that
// connects to a worker's socket could send them: it never crashes, keeps its limits, and reads
// the same requests whether the bytes arrive at once or in pieces (the first byte of the input
// sets the piece size).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/fastcgi_records.h"

namespace {

namespace rec = portcullis::runtime::fastcgi;

struct Outcome {
  std::vector<rec::Request> requests;
  std::string output;
  bool closed = false;
};

Outcome read_all(std::string_view input, std::size_t piece, const rec::Limits& limits) {
  Outcome o;
  rec::Reader reader(limits);
  for (std::size_t at = 0; at < input.size() && !o.closed; at += piece) {
    reader.feed(input.substr(at, piece));
    for (;;) {
      const auto next = reader.next();
      o.output += reader.pending_output();
      reader.pending_output().clear();
      if (next == rec::Reader::Next::kClose) {
        o.closed = true;
        break;
      }
      if (next == rec::Reader::Next::kNeedMore) break;
      o.requests.push_back(reader.take_request());
      const rec::Request& r = o.requests.back();
      if (r.body.size() > limits.max_body_bytes) std::abort();
      std::size_t params = 0;
      for (const auto& [n, v] : r.params) params += n.size() + v.size();
      if (params > limits.max_params_bytes) std::abort();
      // An answer to it is well-formed records.
      std::string wire;
      rec::append_response(wire, r.id, r.body);
      if (wire.size() < r.body.size() + 3 * rec::kHeaderBytes) std::abort();
    }
  }
  return o;
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.closed != b.closed || a.output != b.output || a.requests.size() != b.requests.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    const auto& x = a.requests[i];
    const auto& y = b.requests[i];
    if (x.id != y.id || x.keep_conn != y.keep_conn || x.params != y.params || x.body != y.body ||
        x.body_overflow != y.body_overflow) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = data[0] % 16 + 1;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  rec::Limits limits;
  limits.max_params_bytes = 512;
  limits.max_body_bytes = 256;
  const Outcome whole = read_all(input, input.size() + 1, limits);
  const Outcome pieces = read_all(input, piece, limits);
  if (!same(whole, pieces)) std::abort();
  return 0;
}

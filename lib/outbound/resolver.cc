#include "outbound/resolver.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <memory>

namespace portcullis::outbound {
namespace {

// Everything glibc's helper thread may still touch while the lookup runs: it must outlive the
// lookup, which may be longer than our wait (see the timeout path below).
struct Lookup {
  std::string name;
  addrinfo hints{};
  gaicb request{};
};

struct AddrinfoFree {
  void operator()(addrinfo* list) const { ::freeaddrinfo(list); }
};
using AddrinfoList = std::unique_ptr<addrinfo, AddrinfoFree>;

timespec to_timespec(std::chrono::nanoseconds d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  return {static_cast<time_t>(s.count()), static_cast<long>((d - s).count())};
}

}  // namespace

Result<std::vector<IpAddress>> resolve_host(const std::string& host,
                                            std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  auto lookup = std::make_unique<Lookup>();
  lookup->name = host;
  // Both families, and no AI_ADDRCONFIG: every address the name has is checked, including
  // those of a family this machine cannot reach.
  lookup->hints.ai_family = AF_UNSPEC;
  lookup->hints.ai_socktype = SOCK_STREAM;
  lookup->request.ar_name = lookup->name.c_str();
  lookup->request.ar_request = &lookup->hints;
  gaicb* list[] = {&lookup->request};
  if (int rc = ::getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr); rc != 0) {
    return Status::unavailable("the host name lookup failed");
  }

  int state = EAI_INPROGRESS;
  while ((state = ::gai_error(&lookup->request)) == EAI_INPROGRESS) {
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) break;
    timespec wait = to_timespec(left);
    ::gai_suspend(list, 1, &wait);  // returns early on completion, signal or timeout
  }
  if (state == EAI_INPROGRESS) {
    if (::gai_cancel(&lookup->request) == EAI_NOTCANCELED) {
      // glibc's thread still owns the request and will write its answer into it later. Freeing
      // it would be a use-after-free; leaking these few bytes once per stuck lookup is not.
      (void)lookup.release();
    } else if (lookup->request.ar_result) {
      ::freeaddrinfo(lookup->request.ar_result);  // finished between the wait and the cancel
    }
    return Status::unavailable("the host name lookup timed out");
  }
  AddrinfoList result(lookup->request.ar_result);
  if (state == EAI_NONAME || state == EAI_NODATA || state == EAI_ADDRFAMILY) {
    return Status::unavailable("the host name does not resolve");
  }
  if (state != 0) return Status::unavailable("the host name lookup failed");

  std::vector<IpAddress> addresses;
  for (const addrinfo* ai = result.get(); ai; ai = ai->ai_next) {
    auto a = from_sockaddr(ai->ai_addr);
    if (a && std::find(addresses.begin(), addresses.end(), *a) == addresses.end()) {
      addresses.push_back(*a);
    }
  }
  if (addresses.empty()) return Status::unavailable("the host name does not resolve");
  return addresses;
}

}  // namespace portcullis::outbound

// Host name resolution with a deadline. getaddrinfo(3) blocks for as long as resolv.conf lets
// it (timeout × attempts × servers, easily 20 s or more), so a client_id on a domain whose name
// servers never answer would hold a worker that long. glibc's getaddrinfo_a runs the same
// lookup on a helper thread and lets us stop waiting at the deadline.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "outbound/address.h"

namespace portcullis::outbound {

// Every address the name resolves to (IPv4 and IPv6, duplicates removed), or Unavailable:
// "the host name does not resolve" / "the host name lookup timed out" / "... failed".
Result<std::vector<IpAddress>> resolve_host(const std::string& host,
                                            std::chrono::milliseconds timeout);

// The resolver an outbound request uses; tests substitute one to play a DNS server.
using Resolver = std::function<Result<std::vector<IpAddress>>(const std::string& host,
                                                              std::chrono::milliseconds timeout)>;

}  // namespace portcullis::outbound

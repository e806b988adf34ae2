// Which nameserver DNS lookups ask (PORTCULLIS_DNS_NAMESERVER). Empty: the system's resolvers
// from /etc/resolv.conf. Otherwise an IPv4 address with an optional port ("192.0.2.53",
// "127.0.0.1:5353"): tests point the service at a DNS server of their own on a loopback port,
// and a deployment can name its internal resolver without touching the host's configuration.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::dns {

struct Nameserver {
  std::string address;  // dotted IPv4; empty = the system's resolvers
  uint16_t port = 53;

  bool is_system() const { return address.empty(); }
  // "127.0.0.1:19053", or "the system resolvers" (for messages).
  std::string describe() const;
};

// InvalidArgument naming the problem for anything but "", "a.b.c.d" or "a.b.c.d:port".
Result<Nameserver> parse_nameserver(std::string_view text);

}  // namespace portcullis::dns

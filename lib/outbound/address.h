// Which IP addresses an outbound request may connect to (contract §2.2, the SSRF guard).
//
// Everything RFC 6890 and the IANA special-purpose registries mark as not globally reachable
// is refused: loopback, private-use, link-local, CGNAT, multicast, documentation, benchmarking,
// NAT64 and the rest. IPv6 is checked by what it is allowed to be rather than by a list of
// exclusions alone: only global unicast (2000::/3) passes, so a block IANA assigns tomorrow
// outside 2000::/3 is refused until someone decides otherwise. An IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is judged by the IPv4 address it carries, since that is where a socket
// connecting to it ends up.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sockaddr;

namespace portcullis::outbound {

struct IpAddress {
  enum class Family { kV4, kV6 };
  Family family = Family::kV4;
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4

  bool operator==(const IpAddress&) const = default;
};

// A dotted-quad IPv4 address (exactly four decimal parts, no leading zeros) or an IPv6 address
// without brackets or zone; nullopt for anything else ("127.1", "0x7f.0.0.1", "fe80::1%eth0").
std::optional<IpAddress> parse_ip(std::string_view text);

// The address of an AF_INET or AF_INET6 sockaddr; nullopt for other families.
std::optional<IpAddress> from_sockaddr(const sockaddr* address);

// inet_ntop's form: "192.0.2.1", "2001:db8::1" (no brackets).
std::string to_string(const IpAddress& address);

// The name of the special-use block `address` falls in ("loopback", "private-use", ...), or an
// empty view when it is an ordinary global unicast address.
std::string_view special_use_block(const IpAddress& address);

inline bool is_special_use(const IpAddress& address) {
  return !special_use_block(address).empty();
}

}  // namespace portcullis::outbound

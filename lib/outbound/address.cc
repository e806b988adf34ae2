#include "outbound/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace portcullis::outbound {
namespace {

// A CIDR block written as text, parsed once; `name` is what logs and tests see.
struct Block {
  const char* prefix;
  int length;
  const char* name;
};

// IPv4 and IPv6 together (a block matches addresses of its own family only). Order matters
// only for the name reported: the more specific block comes first.
constexpr Block kSpecialUseBlocks[] = {
    {"255.255.255.255", 32, "limited broadcast"},
    {"0.0.0.0", 8, "this network"},
    {"10.0.0.0", 8, "private-use"},
    {"100.64.0.0", 10, "shared address space (CGNAT)"},
    {"127.0.0.0", 8, "loopback"},
    {"169.254.0.0", 16, "link-local"},
    {"172.16.0.0", 12, "private-use"},
    {"192.0.0.0", 24, "IETF protocol assignments"},
    {"192.0.2.0", 24, "documentation (TEST-NET-1)"},
    {"192.88.99.0", 24, "6to4 relay anycast"},
    {"192.168.0.0", 16, "private-use"},
    {"198.18.0.0", 15, "benchmarking"},
    {"198.51.100.0", 24, "documentation (TEST-NET-2)"},
    {"203.0.113.0", 24, "documentation (TEST-NET-3)"},
    {"224.0.0.0", 4, "multicast"},
    {"240.0.0.0", 4, "reserved"},
    // Blocks inside 2000::/3 (global unicast) that are still not globally reachable. Everything
    // outside 2000::/3 is refused wholesale (see special_use_block). 2001::/23 is refused as a
    // whole: RFC 6890 lists it as not globally reachable, and the few sub-blocks later registries
    // mark reachable (PCP/TURN anycast, AMT, AS112, ORCHIDv2, drone DET) never host a web server.
    {"::1", 128, "loopback"},
    {"::", 128, "unspecified"},
    {"64:ff9b::", 96, "NAT64"},
    {"64:ff9b:1::", 48, "local-use NAT64"},
    {"100::", 64, "discard-only"},
    {"fc00::", 7, "unique local"},
    {"fe80::", 10, "link-local"},
    {"fec0::", 10, "site-local (deprecated)"},
    {"ff00::", 8, "multicast"},
    {"2001::", 23, "IETF protocol assignments"},
    {"2001:db8::", 32, "documentation"},
    {"2002::", 16, "6to4"},
    {"3fff::", 20, "documentation"},
};

bool in_block(const IpAddress& address, const Block& block) {
  auto prefix = parse_ip(block.prefix);
  if (!prefix || prefix->family != address.family) return false;
  int full = block.length / 8;
  if (std::memcmp(address.bytes.data(), prefix->bytes.data(), full) != 0) return false;
  int bits = block.length % 8;
  if (bits == 0) return true;
  auto mask = static_cast<uint8_t>(0xff << (8 - bits));
  return (address.bytes[full] & mask) == (prefix->bytes[full] & mask);
}

template <size_t N>
std::string_view find_block(const IpAddress& address, const Block (&blocks)[N]) {
  for (const Block& b : blocks) {
    if (in_block(address, b)) return b.name;
  }
  return {};
}

bool is_v4_mapped(const IpAddress& a) {
  for (int i = 0; i < 10; ++i) {
    if (a.bytes[i] != 0) return false;
  }
  return a.bytes[10] == 0xff && a.bytes[11] == 0xff;
}

}  // namespace

std::optional<IpAddress> parse_ip(std::string_view text) {
  // inet_pton needs a NUL-terminated string; anything longer than an IPv6 address is not one.
  char buf[INET6_ADDRSTRLEN + 1];
  if (text.empty() || text.size() >= sizeof buf) return std::nullopt;
  if (text.find('\0') != std::string_view::npos) return std::nullopt;  // "1.2.3.4\0junk"
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress a;
  // glibc's inet_pton(AF_INET) already refuses short forms, hex and octal ("127.1", "0x7f…",
  // "010.0.0.1"): exactly the dotted quads every other parser reads the same way.
  if (::inet_pton(AF_INET, buf, a.bytes.data()) == 1) return a;
  a.family = IpAddress::Family::kV6;
  if (::inet_pton(AF_INET6, buf, a.bytes.data()) == 1) return a;
  return std::nullopt;
}

std::optional<IpAddress> from_sockaddr(const sockaddr* address) {
  if (!address) return std::nullopt;
  IpAddress a;
  if (address->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof in);
    std::memcpy(a.bytes.data(), &in.sin_addr, 4);
    return a;
  }
  if (address->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof in6);
    a.family = IpAddress::Family::kV6;
    std::memcpy(a.bytes.data(), &in6.sin6_addr, 16);
    return a;
  }
  return std::nullopt;
}

std::string to_string(const IpAddress& address) {
  char buf[INET6_ADDRSTRLEN];
  int family = address.family == IpAddress::Family::kV4 ? AF_INET : AF_INET6;
  if (!::inet_ntop(family, address.bytes.data(), buf, sizeof buf)) return "?";
  return buf;
}

std::string_view special_use_block(const IpAddress& address) {
  if (address.family == IpAddress::Family::kV4) return find_block(address, kSpecialUseBlocks);
  if (is_v4_mapped(address)) {
    IpAddress v4;
    std::memcpy(v4.bytes.data(), address.bytes.data() + 12, 4);
    return find_block(v4, kSpecialUseBlocks);
  }
  std::string_view named = find_block(address, kSpecialUseBlocks);
  if (!named.empty()) return named;
  // Only 2000::/3 is global unicast; this also covers ::/8 (IPv4-compatible, SIIT), 5f00::/16
  // (SRv6) and whatever is still unassigned.
  if ((address.bytes[0] & 0xe0) != 0x20) return "not global unicast";
  return {};
}

}  // namespace portcullis::outbound

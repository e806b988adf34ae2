#include "dns/nameserver.h"

#include <charconv>

#include "outbound/address.h"

namespace portcullis::dns {

std::string Nameserver::describe() const {
  if (is_system()) return "the system resolvers";
  return address + ":" + std::to_string(port);
}

Result<Nameserver> parse_nameserver(std::string_view text) {
  Nameserver out;
  if (text.empty()) return out;
  std::string_view host = text;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    std::string_view port = text.substr(colon + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
        value > 65535) {
      return Status::invalid_argument("PORTCULLIS_DNS_NAMESERVER: the port must be 1..65535");
    }
    out.port = static_cast<uint16_t>(value);
  }
  auto ip = outbound::parse_ip(host);
  if (!ip || ip->family != outbound::IpAddress::Family::kV4) {
    return Status::invalid_argument(
        "PORTCULLIS_DNS_NAMESERVER must be an IPv4 address with an optional port "
        "(127.0.0.1:5353)");
  }
  out.address = std::string(host);
  return out;
}

}  // namespace portcullis::dns

#include "dns/txt_lookup.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include "dns/txt_response.h"

namespace portcullis::dns {
namespace {

// A res_state that res_nclose always releases.
class ResolverState {
 public:
  ResolverState() { std::memset(&state_, 0, sizeof state_); }
  ~ResolverState() {
    if (open_) res_nclose(&state_);
  }
  ResolverState(const ResolverState&) = delete;
  ResolverState& operator=(const ResolverState&) = delete;

  bool init() {
    open_ = res_ninit(&state_) == 0;
    return open_;
  }
  res_state get() { return &state_; }

 private:
  struct __res_state state_;
  bool open_ = false;
};

std::string_view rcode_name(int rcode) {
  switch (rcode) {
    case 1:
      return "FORMERR";
    case 2:
      return "SERVFAIL";
    case 4:
      return "NOTIMP";
    case 5:
      return "REFUSED";
    default:
      return "an error";
  }
}

}  // namespace

Result<TxtLookup> lookup_txt(const Nameserver& nameserver, const std::string& name) {
  const std::string where = "the nameserver (" + nameserver.describe() + ")";
  ResolverState resolver;
  if (!resolver.init()) return Status::unavailable("the DNS resolver could not be initialised");
  res_state st = resolver.get();
  // One server only, so the wait is bounded by kTimeoutSeconds * kTries however many servers
  // resolv.conf lists (res_nsend would try each in turn).
  if (st->nscount > 1) st->nscount = 1;
  if (!nameserver.is_system()) {
    // The configured address and port; res_nsend notices the changed list and reopens its
    // sockets.
    st->nscount = 1;
    std::memset(&st->nsaddr_list[0], 0, sizeof st->nsaddr_list[0]);
    st->nsaddr_list[0].sin_family = AF_INET;
    st->nsaddr_list[0].sin_port = htons(nameserver.port);
    inet_pton(AF_INET, nameserver.address.c_str(), &st->nsaddr_list[0].sin_addr);
  }
  st->retrans = kTimeoutSeconds;
  st->retry = kTries;
  // The name is absolute: no search list, no appended default domain.
  st->options &= ~(RES_DNSRCH | RES_DEFNAMES);

  unsigned char query[NS_PACKETSZ];
  int query_len = res_nmkquery(st, ns_o_query, name.c_str(), ns_c_in, ns_t_txt, nullptr, 0, nullptr,
                               query, sizeof query);
  if (query_len < 0) return Status::invalid_argument("cannot build a DNS query for " + name);

  std::string answer(NS_MAXMSG, '\0');
  auto started = std::chrono::steady_clock::now();
  errno = 0;
  int answer_len = res_nsend(st, query, query_len, reinterpret_cast<unsigned char*>(answer.data()),
                             static_cast<int>(answer.size()));
  if (answer_len < 0) {
    int error = errno;
    auto waited = std::chrono::steady_clock::now() - started;
    if (error == ECONNREFUSED) {
      return Status::unavailable(where + " refused the connection: no DNS server listens there");
    }
    // res_nsend reports a REFUSED or SERVFAIL answer as ETIMEDOUT too; only the time spent
    // tells the two apart.
    if (waited >= std::chrono::seconds(kTimeoutSeconds)) {
      return Status::unavailable(where + " did not answer the TXT query for " + name + " within " +
                                 std::to_string(kTimeoutSeconds) + " s (" + std::to_string(kTries) +
                                 " tries)");
    }
    return Status::unavailable(where + " refused or failed the TXT query for " + name);
  }
  answer.resize(static_cast<size_t>(answer_len));
  auto parsed = parse_txt_response(answer, name);
  if (!parsed) {
    return Status::unavailable(where + " sent an unreadable answer for " + name + " (" +
                               parsed.status().message() + ")");
  }
  TxtLookup out;
  if (parsed->rcode == kRcodeNxDomain) {
    out.outcome = TxtLookup::Outcome::kNoSuchName;
    return out;
  }
  if (parsed->rcode != kRcodeNoError) {
    return Status::unavailable(where + " answered " + std::string(rcode_name(parsed->rcode)) +
                               " for the TXT query for " + name);
  }
  out.records = std::move(parsed->records);
  out.outcome = out.records.empty() ? TxtLookup::Outcome::kNoRecords : TxtLookup::Outcome::kRecords;
  return out;
}

}  // namespace portcullis::dns

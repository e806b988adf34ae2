// Sign-in e-mail addresses and organization domain names (user input that ends up in SMTP
// commands, mail headers, DNS queries and database keys) on arbitrary bytes: never crashes,
// what is accepted is plain printable ASCII within the bounds, and normalising is idempotent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "domains/domain_name.h"
#include "identity/email_address.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis;
  if (auto email = identity::normalize_email(input)) {
    if (email->size() > identity::kMaxEmailBytes) std::abort();
    for (char c : *email) {
      if (c <= 0x20 || c >= 0x7f) std::abort();  // nothing that could break a header or command
    }
    auto again = identity::normalize_email(*email);
    if (!again || *again != *email) std::abort();
    if (identity::email_key(identity::email_key(*email)) != identity::email_key(*email))
      std::abort();
  }
  if (auto domain = domains::normalize_domain(input)) {
    if (domain->empty() || domain->size() > domains::kMaxDomainBytes) std::abort();
    auto again = domains::normalize_domain(*domain);
    if (!again || *again != *domain) std::abort();
    (void)domains::verification_record_name(*domain);
  }
  return 0;
}

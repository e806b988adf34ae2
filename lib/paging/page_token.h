// Opaque page tokens for keyset pagination (keyset.h).
//
// A token names a position in a listing's order, (create_time, id) of a row, and the direction
// to read from it. It is integrity-protected, not encrypted: HMAC-SHA-256 under a key derived
// from the master key, over the position, the direction and the listing it was issued for
// (the listing's name and its canonical filter). So a token
//   - cannot be forged or edited (it would let a caller pick arbitrary SQL bind values and
//     walk an order in ways the API never offered),
//   - only works on the listing that issued it: a token of /api/v1/resources is refused by
//     the clients of a resource, and one of organization A's users by organization B's.
// The position itself is not secret: it is the creation time and id of a row the caller has
// already seen on a page.
//
// Wire format, base64url without padding:
//   0x01 | 'f' or 'b' | create_time | 0x00 | id | first 16 bytes of the HMAC
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/aead.h"

namespace portcullis::paging {

// The listing a token belongs to. `filter` is the caller's canonical spelling of everything
// that selects the listed rows ("resource_id=res_…", "organization_id=org_…&active=true");
// two requests whose filters differ must not share tokens.
struct Listing {
  std::string name;
  std::string filter;
};

enum class Direction { kForward, kBackward };

// A point in the order (create_time, id), between rows: forward reads the rows after it,
// backward the rows before it.
struct Position {
  std::string create_time;  // DATETIME(6) text, as the database returns it
  std::string id;
};

struct PageToken {
  Direction direction = Direction::kForward;
  Position position;
};

// Issues and checks the tokens of one listing.
class TokenCodec {
 public:
  // `key`: a secret of at least 32 bytes, the same in every worker and node.
  TokenCodec(std::string key, Listing listing);
  // The usual construction: the key derived from the master key for page tokens.
  static Result<TokenCodec> for_listing(const crypto::MasterKey& master_key, Listing listing);

  std::string encode(const PageToken& token) const;
  // InvalidArgument for anything encode() did not produce with this key and listing:
  // malformed, truncated, edited, or issued for another listing.
  Result<PageToken> decode(std::string_view text) const;

 private:
  std::string mac(std::string_view payload) const;

  std::string key_;
  Listing listing_;
};

}  // namespace portcullis::paging

// Structural checks of a SAML 2.0 Response (the XML text, before Lasso verifies any signature),
// against the attacks that live in the document's shape rather than in its cryptography:
//
//  - DTDs are refused (no entity expansion, no external entities; libxml2 runs without network
//    access and without entity substitution);
//  - exactly one <saml:Assertion>, a direct child of the <samlp:Response> root, and no
//    EncryptedAssertion: a second assertion anywhere — beside, inside Extensions, inside a
//    Signature's Object — is how XML signature wrapping smuggles an unsigned one in;
//  - every <ds:Signature> is a direct child of the Response or of the Assertion, at most one
//    each, with exactly one Reference whose URI is "#" + its parent's ID, and no two elements
//    share an ID: the signature covers the very element that is read;
//  - at least one signature (the Response's or the Assertion's);
//  - no comment or processing instruction anywhere inside the Assertion: exclusive c14n drops
//    comments, so "user@evil.com<!---->.victim.com" would verify yet read differently.
//
// The reason of a refusal is a stable token for the user.login.failed event (docs/sso.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::sso {

inline constexpr size_t kMaxSamlResponseBytes = 256 * 1024;

// Ok, or InvalidArgument with `reason` set: malformed_xml, too_large, dtd_forbidden,
// not_a_response, assertion_count, encrypted_assertion, signature_wrapping, double_signature,
// duplicate_id, unsigned, xml_comment.
Status check_response_shape(std::string_view xml, std::string& reason);

}  // namespace portcullis::sso

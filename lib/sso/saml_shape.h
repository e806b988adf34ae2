// Structural checks of a SAML 2.0 Response (the XML text, before Lasso verifies any signature),
// against the attacks that live in the document's shape rather than in its cryptography:
//
//  - DTDs are refused (no entity expansion, no external entities; libxml2 runs without network
//    access and without entity substitution);
//  - exactly one <saml:Assertion> or one <saml:EncryptedAssertion>, a direct child of the
//    <samlp:Response> root: a second assertion anywhere — beside, inside Extensions, inside a
//    Signature's Object — is how XML signature wrapping smuggles an unsigned one in;
//  - every <ds:Signature> is a direct child of the Response or of the Assertion, at most one
//    each, with exactly one Reference whose URI is "#" + its parent's ID, and no two elements
//    share an ID: the signature covers the very element that is read;
//  - at least one signature (the Response's or the Assertion's);
//  - no comment or processing instruction anywhere inside the Assertion: exclusive c14n drops
//    comments, so "user@evil.com<!---->.victim.com" would verify yet read differently.
//
// An encrypted assertion gets the same checks once Lasso has decrypted it
// (check_assertion_shape), before anything in it is read.
//
// The reason of a refusal is a stable token for the user.login.failed event (docs/sso.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

struct _xmlNode;  // libxml2's xmlNode

namespace portcullis::sso {

inline constexpr size_t kMaxSamlResponseBytes = 256 * 1024;

struct ResponseShape {
  bool encrypted = false;        // the assertion is an EncryptedAssertion
  bool response_signed = false;  // the Response carries a signature (of itself)
};

// Ok, or InvalidArgument with `reason` set: malformed_xml, too_large, dtd_forbidden,
// not_a_response, assertion_count, signature_wrapping, double_signature, duplicate_id,
// unsigned, xml_comment, decryption_failed (an EncryptedAssertion without the AES
// EncryptedData and the EncryptedKey decryption needs). `shape`, when given, says what was found.
Status check_response_shape(std::string_view xml, std::string& reason,
                            ResponseShape* shape = nullptr);

// A decrypted Assertion element, as the plain one is checked inside a Response: no assertion
// within it, its signature a direct child referencing its ID (at most one), no comment or
// processing instruction, no ID twice, and signed unless `response_signed`.
Status check_assertion_shape(const _xmlNode* assertion, bool response_signed, std::string& reason);
// The same for an Assertion document's text (parsed as a Response is: no DTD, no network).
Status check_assertion_shape(std::string_view xml, bool response_signed, std::string& reason);

}  // namespace portcullis::sso

#include "sso/saml_shape.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace portcullis::sso {
namespace {

constexpr const char* kProtocolNs = "urn:oasis:names:tc:SAML:2.0:protocol";
constexpr const char* kAssertionNs = "urn:oasis:names:tc:SAML:2.0:assertion";
constexpr const char* kDsigNs = "http://www.w3.org/2000/09/xmldsig#";
constexpr const char* kXencNs = "http://www.w3.org/2001/04/xmlenc#";

struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
struct XmlFree {
  void operator()(xmlChar* s) const { xmlFree(s); }
};

bool is(const xmlNode* n, const char* ns, const char* name) {
  return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
         xmlStrEqual(n->ns->href, reinterpret_cast<const xmlChar*>(ns)) &&
         xmlStrEqual(n->name, reinterpret_cast<const xmlChar*>(name));
}

std::string attribute(const xmlNode* n, const char* name) {
  std::unique_ptr<xmlChar, XmlFree> v(xmlGetNoNsProp(n, reinterpret_cast<const xmlChar*>(name)));
  return v ? std::string(reinterpret_cast<const char*>(v.get())) : std::string();
}

Status refuse(std::string& reason, const char* why) {
  reason = why;
  return Status::invalid_argument(std::string("the SAML response was refused: ") + why);
}

struct Walk {
  const xmlNode* assertion = nullptr;
  const xmlNode* encrypted = nullptr;
  int assertions = 0;
  int encrypted_assertions = 0;
  bool comment_in_assertion = false;
  bool duplicate_id = false;
  std::set<std::string> ids;
  std::vector<const xmlNode*> signatures;

  void visit(const xmlNode* n, bool in_assertion) {
    if ((n->type == XML_COMMENT_NODE || n->type == XML_PI_NODE) && in_assertion) {
      comment_in_assertion = true;
    }
    if (n->type != XML_ELEMENT_NODE) return;
    for (const xmlAttr* a = n->properties; a; a = a->next) {
      // Any attribute spelled ID (SAML's xs:ID attributes) names an element a signature could
      // reference; a name used twice makes "which element is signed" ambiguous.
      if (xmlStrEqual(a->name, reinterpret_cast<const xmlChar*>("ID"))) {
        std::string id = attribute(n, "ID");
        if (!ids.insert(id).second) duplicate_id = true;
      }
    }
    bool here = in_assertion;
    if (is(n, kAssertionNs, "Assertion")) {
      ++assertions;
      assertion = n;
      here = true;
    } else if (is(n, kAssertionNs, "EncryptedAssertion")) {
      ++encrypted_assertions;
      encrypted = n;
    } else if (is(n, kDsigNs, "Signature")) {
      signatures.push_back(n);
    }
    for (const xmlNode* c = n->children; c; c = c->next) visit(c, here);
  }
};

// The one Reference of a Signature's SignedInfo must point at the signature's parent.
bool references_parent(const xmlNode* signature) {
  const xmlNode* signed_info = nullptr;
  for (const xmlNode* c = signature->children; c; c = c->next) {
    if (is(c, kDsigNs, "SignedInfo")) {
      if (signed_info) return false;
      signed_info = c;
    }
  }
  if (!signed_info) return false;
  const xmlNode* reference = nullptr;
  for (const xmlNode* c = signed_info->children; c; c = c->next) {
    if (is(c, kDsigNs, "Reference")) {
      if (reference) return false;
      reference = c;
    }
  }
  if (!reference) return false;
  const std::string id = attribute(signature->parent, "ID");
  return !id.empty() && attribute(reference, "URI") == "#" + id;
}

// The first element child of `n` named `name` in `ns`, or null.
const xmlNode* child(const xmlNode* n, const char* ns, const char* name) {
  for (const xmlNode* c = n ? n->children : nullptr; c; c = c->next) {
    if (is(c, ns, name)) return c;
  }
  return nullptr;
}

// What Lasso needs to decrypt an EncryptedAssertion, checked before it tries: an EncryptedData
// whose EncryptionMethod is AES (no 3DES), and an EncryptedKey beside it or in its KeyInfo.
// Lasso 2.8 leaks the SP's duplicated key on each of these failures
// (lasso/xml/tools.c lasso_node_decrypt_xmlnode, found by tests/fuzz/saml_read_response_fuzz.cc),
// so such a document must never reach it.
bool decryptable(const xmlNode* encrypted_assertion) {
  const xmlNode* data = child(encrypted_assertion, kXencNs, "EncryptedData");
  const xmlNode* method = child(data, kXencNs, "EncryptionMethod");
  if (!method || attribute(method, "Algorithm").find("#aes") == std::string::npos) return false;
  for (const xmlNode* c = encrypted_assertion->children; c; c = c->next) {
    // Lasso takes the first child named EncryptedKey when there is any such child.
    if (c->type == XML_ELEMENT_NODE && xmlStrEqual(c->name, BAD_CAST "EncryptedKey")) {
      return is(c, kXencNs, "EncryptedKey");
    }
  }
  return child(child(data, kDsigNs, "KeyInfo"), kXencNs, "EncryptedKey") != nullptr;
}

using Doc = std::unique_ptr<xmlDoc, DocFree>;

// The document, or a refusal: too large, not well-formed, or declaring a DTD.
Result<Doc> parse(std::string_view xml, std::string& reason) {
  if (xml.size() > kMaxSamlResponseBytes) return refuse(reason, "too_large");
  // No network, no entity substitution, no DTD loading: whatever a document declares stays
  // unexpanded, and a document that declares anything is refused below.
  Doc doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "saml.xml", nullptr,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (!doc) return refuse(reason, "malformed_xml");
  if (doc->intSubset || doc->extSubset) return refuse(reason, "dtd_forbidden");
  for (const xmlNode* n = doc->children; n; n = n->next) {
    if (n->type == XML_DTD_NODE || n->type == XML_ENTITY_DECL) {
      return refuse(reason, "dtd_forbidden");
    }
  }
  return doc;
}

// The signatures of a walk: each a direct child of `response` (may be null) or `assertion`,
// referencing its parent, at most one each; counts them.
Status check_signatures(const Walk& walk, const xmlNode* response, const xmlNode* assertion,
                        int& on_response, int& on_assertion, std::string& reason) {
  for (const xmlNode* s : walk.signatures) {
    if (response && s->parent == response) {
      ++on_response;
    } else if (assertion && s->parent == assertion) {
      ++on_assertion;
    } else {
      return refuse(reason, "signature_wrapping");
    }
    if (!references_parent(s)) return refuse(reason, "signature_wrapping");
  }
  if (on_response > 1 || on_assertion > 1) return refuse(reason, "double_signature");
  return Status::ok();
}

}  // namespace

Status check_response_shape(std::string_view xml, std::string& reason, ResponseShape* shape) {
  PORTCULLIS_ASSIGN_OR_RETURN(Doc doc, parse(xml, reason));
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!is(root, kProtocolNs, "Response")) return refuse(reason, "not_a_response");

  Walk walk;
  walk.visit(root, false);
  const bool encrypted = walk.encrypted_assertions > 0;
  if (encrypted) {
    // The assertion is inside: one EncryptedAssertion, no plain one beside it.
    if (walk.encrypted_assertions != 1 || walk.assertions != 0) {
      return refuse(reason, "assertion_count");
    }
    if (walk.encrypted->parent != root) return refuse(reason, "signature_wrapping");
    if (!decryptable(walk.encrypted)) return refuse(reason, "decryption_failed");
  } else {
    if (walk.assertions != 1) return refuse(reason, "assertion_count");
    if (walk.assertion->parent != root) return refuse(reason, "signature_wrapping");
  }
  if (walk.duplicate_id) return refuse(reason, "duplicate_id");
  int on_response = 0;
  int on_assertion = 0;
  PORTCULLIS_RETURN_IF_ERROR(
      check_signatures(walk, root, walk.assertion, on_response, on_assertion, reason));
  // An encrypted assertion's own signature is inside it: check_assertion_shape decides.
  if (!encrypted && on_response + on_assertion == 0) return refuse(reason, "unsigned");
  if (walk.comment_in_assertion) return refuse(reason, "xml_comment");
  if (shape) *shape = ResponseShape{encrypted, on_response == 1};
  return Status::ok();
}

Status check_assertion_shape(std::string_view xml, bool response_signed, std::string& reason) {
  PORTCULLIS_ASSIGN_OR_RETURN(Doc doc, parse(xml, reason));
  return check_assertion_shape(xmlDocGetRootElement(doc.get()), response_signed, reason);
}

Status check_assertion_shape(const xmlNode* assertion, bool response_signed, std::string& reason) {
  if (!is(assertion, kAssertionNs, "Assertion")) return refuse(reason, "assertion_count");
  Walk walk;
  walk.visit(assertion, false);
  if (walk.assertions != 1 || walk.encrypted_assertions != 0) {
    return refuse(reason, "assertion_count");
  }
  if (walk.duplicate_id) return refuse(reason, "duplicate_id");
  int on_response = 0;
  int on_assertion = 0;
  PORTCULLIS_RETURN_IF_ERROR(
      check_signatures(walk, nullptr, assertion, on_response, on_assertion, reason));
  if (!response_signed && on_assertion == 0) return refuse(reason, "unsigned");
  if (walk.comment_in_assertion) return refuse(reason, "xml_comment");
  return Status::ok();
}

}  // namespace portcullis::sso

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
  const xmlNode* root = nullptr;
  const xmlNode* assertion = nullptr;
  int assertions = 0;
  bool encrypted = false;
  bool comment_in_assertion = false;
  bool duplicate_id = false;
  std::set<std::string> ids;
  std::vector<const xmlNode*> signatures;

  void visit(const xmlNode* n, bool in_assertion) {
    for (; n; n = n->next) {
      if ((n->type == XML_COMMENT_NODE || n->type == XML_PI_NODE) && in_assertion) {
        comment_in_assertion = true;
      }
      if (n->type != XML_ELEMENT_NODE) continue;
      for (const xmlAttr* a = n->properties; a; a = a->next) {
        // Any attribute spelled ID (SAML's xs:ID attributes) names an element a signature
        // could reference; a name used twice makes "which element is signed" ambiguous.
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
        encrypted = true;
      } else if (is(n, kDsigNs, "Signature")) {
        signatures.push_back(n);
      }
      visit(n->children, here);
    }
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

}  // namespace

Status check_response_shape(std::string_view xml, std::string& reason) {
  if (xml.size() > kMaxSamlResponseBytes) return refuse(reason, "too_large");
  // No network, no entity substitution, no DTD loading: whatever a document declares stays
  // unexpanded, and a document that declares anything is refused below.
  std::unique_ptr<xmlDoc, DocFree> doc(
      xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "saml-response.xml", nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (!doc) return refuse(reason, "malformed_xml");
  if (doc->intSubset || doc->extSubset) return refuse(reason, "dtd_forbidden");
  for (const xmlNode* n = doc->children; n; n = n->next) {
    if (n->type == XML_DTD_NODE || n->type == XML_ENTITY_DECL) {
      return refuse(reason, "dtd_forbidden");
    }
  }
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!is(root, kProtocolNs, "Response")) return refuse(reason, "not_a_response");

  Walk walk;
  walk.root = root;
  walk.visit(root, false);
  if (walk.encrypted) return refuse(reason, "encrypted_assertion");
  if (walk.assertions != 1) return refuse(reason, "assertion_count");
  if (walk.assertion->parent != root) return refuse(reason, "signature_wrapping");
  if (walk.duplicate_id) return refuse(reason, "duplicate_id");
  int on_response = 0;
  int on_assertion = 0;
  for (const xmlNode* s : walk.signatures) {
    if (s->parent == root) {
      ++on_response;
    } else if (s->parent == walk.assertion) {
      ++on_assertion;
    } else {
      return refuse(reason, "signature_wrapping");
    }
    if (!references_parent(s)) return refuse(reason, "signature_wrapping");
  }
  if (on_response > 1 || on_assertion > 1) return refuse(reason, "double_signature");
  if (on_response + on_assertion == 0) return refuse(reason, "unsigned");
  if (walk.comment_in_assertion) return refuse(reason, "xml_comment");
  return Status::ok();
}

}  // namespace portcullis::sso

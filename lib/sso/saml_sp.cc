#include "sso/saml_sp.h"

#include <lasso/lasso.h>
#include <lasso/xml/misc_text_node.h>
#include <lasso/xml/saml-2.0/saml2_attribute.h>
#include <lasso/xml/saml-2.0/saml2_attribute_statement.h>
#include <lasso/xml/saml-2.0/saml2_attribute_value.h>
#include <lasso/xml/saml-2.0/saml2_audience_restriction.h>
#include <lasso/xml/saml-2.0/saml2_conditions.h>
#include <lasso/xml/saml-2.0/saml2_name_id.h>
#include <lasso/xml/saml-2.0/saml2_subject.h>
#include <lasso/xml/saml-2.0/saml2_subject_confirmation.h>
#include <lasso/xml/saml-2.0/saml2_subject_confirmation_data.h>
#include <lasso/xml/saml-2.0/samlp2_authn_request.h>
#include <lasso/xml/saml-2.0/samlp2_name_id_policy.h>
#include <lasso/xml/saml-2.0/samlp2_response.h>

#include <ctime>
#include <map>
#include <memory>
#include <optional>

#include "crypto/base64.h"
#include "log/log.h"
#include "pages/html.h"
#include "sso/saml_shape.h"

namespace portcullis::sso {
namespace {

struct GObjectUnref {
  void operator()(gpointer p) const {
    if (p) g_object_unref(p);
  }
};
template <class T>
using GPtr = std::unique_ptr<T, GObjectUnref>;

struct GFree {
  void operator()(gpointer p) const { g_free(p); }
};

// Replaces a string member Lasso owns (g_malloc'd).
void assign(char*& member, const char* value) {
  g_free(member);
  member = g_strdup(value);
}

bool lasso_ready() {
  static const bool ready = lasso_init() == 0;
  return ready;
}

// The base64 body of a PEM certificate (what <ds:X509Certificate> holds).
std::string pem_body(const std::string& pem) {
  const std::string begin = "-----BEGIN CERTIFICATE-----";
  const std::string end = "-----END CERTIFICATE-----";
  size_t b = pem.find(begin);
  size_t e = pem.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return "";
  std::string body;
  for (char c : pem.substr(b + begin.size(), e - b - begin.size())) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') body += c;
  }
  return body;
}

std::string idp_metadata(const Connection& c) {
  if (!c.idp_metadata_xml.empty()) return c.idp_metadata_xml;
  std::string keys;
  for (const auto& pem : c.idp_certificates) {
    keys += "<md:KeyDescriptor use=\"signing\"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>" +
            pem_body(pem) + "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>";
  }
  return "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" "
         "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" entityID=\"" +
         pages::escape(c.idp_entity_id) +
         "\"><md:IDPSSODescriptor "
         "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">" +
         keys +
         "<md:SingleSignOnService "
         "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" Location=\"" +
         pages::escape(c.idp_sso_url) + "\"/></md:IDPSSODescriptor></md:EntityDescriptor>";
}

// One Lasso server (our SP plus the connection's IdP) per connection, per worker, at most
// kMaxCachedServers of them.
struct CachedServer {
  std::string version;
  std::shared_ptr<LassoServer> server;
  std::string idp_id;
};
std::map<std::string, CachedServer>& server_cache() {
  static std::map<std::string, CachedServer> cache;
  return cache;
}

// A server of our SP with its keys: the signing key (and certificate) sign AuthnRequests with
// RSA-SHA256; the encryption key alone decrypts assertions (never the signing key).
Result<std::shared_ptr<LassoServer>> new_server(const SamlSp& sp) {
  const std::string sp_xml = sp_metadata(sp, false);
  std::shared_ptr<LassoServer> server(
      lasso_server_new_from_buffers(sp_xml.c_str(), nullptr, nullptr, nullptr), [](LassoServer* s) {
        if (s) g_object_unref(s);
      });
  if (!server) return Status::internal("Lasso refused the SP metadata");
  server->signature_method = LASSO_SIGNATURE_METHOD_RSA_SHA256;
  if (sp.certificates.signing.empty() || !sp.keys) return server;
  PORTCULLIS_ASSIGN_OR_RETURN(SpKeys keys, sp.keys());
  assign(server->private_key, keys.signing_key.c_str());
  assign(server->certificate, keys.certificates.signing.c_str());
  if (lasso_server_set_encryption_private_key_with_password(
          server.get(), keys.encryption_key.c_str(), nullptr) != 0) {
    return Status::internal("Lasso refused the SP encryption key");
  }
  return server;
}

Result<CachedServer> server_for(const Connection& c, const SamlSp& sp) {
  if (!lasso_ready()) return Status::internal("Lasso could not be initialised");
  // Keyed by what the server is made of, so a changed connection is never served stale.
  const std::string idp_xml = idp_metadata(c);
  const std::string version = sp.entity_id + "\n" + sp.certificates.signing + "\n" +
                              sp.certificates.encryption + "\n" + idp_xml;
  auto& cache = server_cache();
  if (auto hit = cache.find(c.id); hit != cache.end() && hit->second.version == version) {
    return hit->second;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(std::shared_ptr<LassoServer> server, new_server(sp));
  int rc = lasso_server_add_provider_from_buffer(server.get(), LASSO_PROVIDER_ROLE_IDP,
                                                 idp_xml.c_str(), nullptr, nullptr);
  if (rc != 0) {
    return Status::failed_precondition(std::string("the IdP metadata cannot be used: ") +
                                       lasso_strerror(rc));
  }
  if (g_hash_table_size(server->providers) != 1) {
    return Status::failed_precondition("the IdP metadata must describe exactly one IdP");
  }
  GList* keys = g_hash_table_get_keys(server->providers);
  std::string idp_id = keys && keys->data ? static_cast<const char*>(keys->data) : "";
  g_list_free(keys);
  CachedServer entry{version, server, idp_id};
  // One line per build: inside a request it carries the request's id, which is how the tests
  // show that no sign-in pays for one (warm.h does it between requests).
  log::info("SSO connection prepared", {{"connection", c.id}, {"what", "saml server"}});
  if (cache.size() >= kMaxCachedServers && cache.find(c.id) == cache.end()) {
    cache.erase(cache.begin());  // any other: the warm-up (warm.h) keeps the active ones
  }
  cache[c.id] = entry;
  return entry;
}

bool idp_wants_signed_requests(const CachedServer& s) {
  LassoProvider* idp = lasso_server_get_provider(s.server.get(), s.idp_id.c_str());
  if (!idp) return false;
  std::unique_ptr<gchar, GFree> want(
      lasso_provider_get_metadata_one(idp, "WantAuthnRequestsSigned"));
  return want && std::string_view(want.get()) == "true";
}

// xs:dateTime in UTC ("2026-11-25T12:00:00Z", fractions allowed); nullopt otherwise.
std::optional<int64_t> saml_time(const char* text) {
  if (!text) return std::nullopt;
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  const char* rest = text + consumed;
  if (*rest == '.') {
    ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  if (std::string_view(rest) != "Z") return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm));
}

Status refuse(std::string& reason, const char* why, const std::string& detail = "") {
  reason = why;
  return Status::permission_denied(std::string("the SAML response was refused: ") + why +
                                   (detail.empty() ? "" : " (" + detail + ")"));
}

std::string text_of(GList* any) {
  std::string out;
  for (GList* i = any; i; i = i->next) {
    if (LASSO_IS_MISC_TEXT_NODE(i->data)) {
      const char* content = LASSO_MISC_TEXT_NODE(i->data)->content;
      if (content) out += content;
    }
  }
  return out;
}

// Conditions (SAML 2.0 Core §2.5): the time window with skew, and an AudienceRestriction
// naming this SP. An assertion without one could be meant for any SP.
Status check_conditions(const LassoSaml2Assertion* a, const SamlSp& sp, int64_t now,
                        std::string& reason) {
  const LassoSaml2Conditions* conditions = a->Conditions;
  if (!conditions || !LASSO_IS_SAML2_CONDITIONS(conditions)) {
    return refuse(reason, "wrong_audience", "no Conditions");
  }
  if (conditions->Condition) return refuse(reason, "unsupported_condition");
  if (conditions->NotBefore) {
    auto t = saml_time(conditions->NotBefore);
    if (!t || *t > now + kSamlSkewSeconds) return refuse(reason, "not_yet_valid");
  }
  if (conditions->NotOnOrAfter) {
    auto t = saml_time(conditions->NotOnOrAfter);
    if (!t || now >= *t + kSamlSkewSeconds) return refuse(reason, "expired");
  }
  bool audience = false;
  for (GList* i = conditions->AudienceRestriction; i; i = i->next) {
    if (!LASSO_IS_SAML2_AUDIENCE_RESTRICTION(i->data)) return refuse(reason, "wrong_audience");
    const char* aud = LASSO_SAML2_AUDIENCE_RESTRICTION(i->data)->Audience;
    if (!aud || sp.entity_id != aud) return refuse(reason, "wrong_audience");
    audience = true;
  }
  if (!audience) return refuse(reason, "wrong_audience", "no AudienceRestriction");
  return Status::ok();
}

// The bearer SubjectConfirmation (Profiles §4.1.4.2): Recipient = our ACS, NotOnOrAfter in the
// future, NotBefore absent or past; its InResponseTo is returned.
Result<std::string> check_subject(const LassoSaml2Assertion* a, const SamlSp& sp, int64_t now,
                                  std::string& reason, int64_t& not_on_or_after) {
  const LassoSaml2Subject* subject = a->Subject;
  if (!subject || !LASSO_IS_SAML2_SUBJECT(subject)) return refuse(reason, "no_subject");
  const LassoSaml2SubjectConfirmation* sc = subject->SubjectConfirmation;
  if (!sc || !LASSO_IS_SAML2_SUBJECT_CONFIRMATION(sc) || !sc->Method ||
      std::string_view(sc->Method) != "urn:oasis:names:tc:SAML:2.0:cm:bearer") {
    return refuse(reason, "no_subject", "no bearer SubjectConfirmation");
  }
  const LassoSaml2SubjectConfirmationData* scd = sc->SubjectConfirmationData;
  if (!scd || !LASSO_IS_SAML2_SUBJECT_CONFIRMATION_DATA(scd)) {
    return refuse(reason, "wrong_recipient", "no SubjectConfirmationData");
  }
  if (!scd->Recipient || sp.acs_url != scd->Recipient) return refuse(reason, "wrong_recipient");
  auto until = saml_time(scd->NotOnOrAfter);
  if (!until) return refuse(reason, "expired", "no NotOnOrAfter");
  if (now >= *until + kSamlSkewSeconds) return refuse(reason, "expired");
  if (scd->NotBefore) {
    auto t = saml_time(scd->NotBefore);
    if (!t || *t > now + kSamlSkewSeconds) return refuse(reason, "not_yet_valid");
  }
  not_on_or_after = *until;
  return std::string(scd->InResponseTo ? scd->InResponseTo : "");
}

const char* lasso_reason(int rc) {
  switch (rc) {
    case LASSO_DS_ERROR_SIGNATURE_NOT_FOUND:
      return "unsigned";
    case LASSO_DS_ERROR_INVALID_SIGNATURE:
    case LASSO_PROFILE_ERROR_CANNOT_VERIFY_SIGNATURE:
      return "invalid_signature";
    case LASSO_PROFILE_ERROR_INVALID_ISSUER:
    case LASSO_PROFILE_ERROR_UNKNOWN_PROVIDER:
    case LASSO_SERVER_ERROR_PROVIDER_NOT_FOUND:
      return "wrong_issuer";
    case LASSO_LOGIN_ERROR_STATUS_NOT_SUCCESS:
    case LASSO_LOGIN_ERROR_REQUEST_DENIED:
      return "idp_error";
    default:
      // Every other xmldsig failure (LASSO_DS_ERROR_*: 101..199) is a signature that does not
      // verify with the IdP's key.
      return (rc > 101 && rc < 200) || (rc < -101 && rc > -200) ? "invalid_signature"
                                                                : "invalid_response";
  }
}

}  // namespace

SamlSp sp_of(const std::string& base_url, const std::string& connection_id) {
  const std::string root = base_url + "/sso/saml/" + connection_id;
  return SamlSp{root + "/metadata", root + "/acs"};
}

std::string sp_metadata(const SamlSp& sp, bool authn_requests_signed) {
  auto key = [](const char* use, const std::string& pem, const char* methods) {
    return std::string("    <md:KeyDescriptor use=\"") + use +
           "\"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>" + pem_body(pem) +
           "</ds:X509Certificate></ds:X509Data></ds:KeyInfo>" + methods + "</md:KeyDescriptor>\n";
  };
  std::string keys;
  if (!sp.certificates.signing.empty()) keys += key("signing", sp.certificates.signing, "");
  if (!sp.certificates.encryption.empty()) {
    // What Lasso (xmlsec1) decrypts: AES content keys wrapped with RSA-OAEP.
    keys += key("encryption", sp.certificates.encryption,
                "<md:EncryptionMethod Algorithm=\"http://www.w3.org/2009/xmlenc11#aes256-gcm\"/>"
                "<md:EncryptionMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#aes256-cbc\"/>"
                "<md:EncryptionMethod "
                "Algorithm=\"http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p\"/>");
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" "
         "xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" entityID=\"" +
         pages::escape(sp.entity_id) + "\">\n  <md:SPSSODescriptor AuthnRequestsSigned=\"" +
         (authn_requests_signed ? "true" : "false") +
         "\" WantAssertionsSigned=\"true\" "
         "protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">\n" +
         keys +
         "    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
         "</md:NameIDFormat>\n"
         "    <md:AssertionConsumerService "
         "Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" Location=\"" +
         pages::escape(sp.acs_url) +
         "\" index=\"0\" isDefault=\"true\"/>\n  </md:SPSSODescriptor>\n</md:EntityDescriptor>\n";
}

Result<bool> signs_authn_requests(const Connection& c, const SamlSp& sp) {
  if (c.sign_authn_requests) return true;
  PORTCULLIS_ASSIGN_OR_RETURN(CachedServer s, server_for(c, sp));
  return idp_wants_signed_requests(s);
}

Status prepare_server(const Connection& c, const SamlSp& sp) {
  return server_for(c, sp).status();
}

void keep_servers_of(const std::set<std::string>& connection_ids) {
  std::erase_if(server_cache(), [&](const auto& entry) {
    return connection_ids.find(entry.first) == connection_ids.end();
  });
}

Status check_idp_metadata(const Connection& c, const SamlSp& sp) {
  PORTCULLIS_ASSIGN_OR_RETURN(CachedServer s, server_for(c, sp));
  LassoProvider* idp = lasso_server_get_provider(s.server.get(), s.idp_id.c_str());
  if (!idp) return Status::failed_precondition("the IdP metadata names no IdP");
  std::unique_ptr<gchar, GFree> sso(
      lasso_provider_get_metadata_one(idp, "SingleSignOnService HTTP-Redirect"));
  if (!sso) {
    return Status::failed_precondition("the IdP has no HTTP-Redirect SingleSignOnService");
  }
  return Status::ok();
}

Result<SamlRedirect> authn_request(const Connection& c, const SamlSp& sp,
                                   const std::string& relay_state) {
  PORTCULLIS_ASSIGN_OR_RETURN(CachedServer s, server_for(c, sp));
  GPtr<LassoLogin> login(lasso_login_new(s.server.get()));
  if (!login) return Status::internal("Lasso could not start a login");
  LassoProfile* profile = LASSO_PROFILE(login.get());
  // Signed (Bindings §3.4.4.1: SigAlg and Signature over the query) when the connection or the
  // IdP asks; otherwise not, whatever Lasso's defaults.
  const bool sign = c.sign_authn_requests || idp_wants_signed_requests(s);
  if (sign && !s.server->private_key) {
    return Status::failed_precondition("the IdP wants signed requests and the SP has no key");
  }
  lasso_profile_set_signature_hint(
      profile, sign ? LASSO_PROFILE_SIGNATURE_HINT_FORCE : LASSO_PROFILE_SIGNATURE_HINT_FORBID);
  std::string idp = s.idp_id;
  int rc = lasso_login_init_authn_request(login.get(), idp.data(), LASSO_HTTP_METHOD_REDIRECT);
  if (rc != 0) {
    return Status::failed_precondition(std::string("no AuthnRequest for this IdP: ") +
                                       lasso_strerror(rc));
  }
  LassoSamlp2AuthnRequest* request = LASSO_SAMLP2_AUTHN_REQUEST(profile->request);
  if (request->NameIDPolicy) {
    request->NameIDPolicy->AllowCreate = TRUE;
  }
  request->ForceAuthn = FALSE;
  request->IsPassive = FALSE;
  assign(request->AssertionConsumerServiceURL, sp.acs_url.c_str());
  assign(request->ProtocolBinding, LASSO_SAML2_METADATA_BINDING_POST);
  assign(profile->msg_relayState, relay_state.c_str());
  rc = lasso_login_build_authn_request_msg(login.get());
  if (rc != 0 || !profile->msg_url) {
    return Status::internal(std::string("Lasso could not build the AuthnRequest: ") +
                            lasso_strerror(rc));
  }
  const char* id = LASSO_SAMLP2_REQUEST_ABSTRACT(request)->ID;
  return SamlRedirect{profile->msg_url, id ? id : ""};
}

Result<SamlLogin> read_response(const Connection& c, const SamlSp& sp,
                                const std::string& saml_response, int64_t now,
                                std::string& reason) {
  if (saml_response.size() > kMaxSamlResponseBytes * 4 / 3 + 4096) {
    return refuse(reason, "too_large");
  }
  std::string compact;
  for (char ch : saml_response) {
    if (ch != '\r' && ch != '\n' && ch != ' ' && ch != '\t') compact += ch;
  }
  auto xml = crypto::base64_decode(compact);
  if (!xml) return refuse(reason, "malformed_xml", "not base64");
  ResponseShape shape;
  PORTCULLIS_RETURN_IF_ERROR(check_response_shape(*xml, reason, &shape));

  PORTCULLIS_ASSIGN_OR_RETURN(CachedServer s, server_for(c, sp));
  GPtr<LassoLogin> login(lasso_login_new(s.server.get()));
  if (!login) return Status::internal("Lasso could not start a login");
  LassoProfile* profile = LASSO_PROFILE(login.get());
  // MAYBE, Lasso's default, is the right rule (lasso/saml-2.0/login.c): a valid Response
  // signature, or else a valid Assertion signature; any invalid signature refuses. FORCE would
  // demand both, which Entra ID's default (assertion only) does not send.
  lasso_profile_set_signature_verify_hint(profile, LASSO_PROFILE_SIGNATURE_VERIFY_HINT_MAYBE);
  int rc = lasso_login_process_authn_response_msg(login.get(), compact.data());
  // Lasso ignores a failed decryption and then finds no assertion at all.
  if (rc == LASSO_PROFILE_ERROR_MISSING_ASSERTION && shape.encrypted) {
    return refuse(reason, "decryption_failed", lasso_strerror(rc));
  }
  if (rc != 0) return refuse(reason, lasso_reason(rc), lasso_strerror(rc));

  LassoSamlp2Response* response = LASSO_SAMLP2_RESPONSE(profile->response);
  const LassoSamlp2StatusResponse* status = LASSO_SAMLP2_STATUS_RESPONSE(response);
  if (!status->Destination || sp.acs_url != status->Destination) {
    return refuse(reason, "wrong_destination");
  }
  if (g_list_length(response->Assertion) != 1 ||
      !LASSO_IS_SAML2_ASSERTION(response->Assertion->data)) {
    return refuse(reason, "assertion_count");
  }
  auto* assertion = LASSO_SAML2_ASSERTION(response->Assertion->data);
  if (shape.encrypted) {
    // The decrypted assertion, as Lasso verified its signature: the shape checks a plain one
    // had before Lasso saw it.
    const xmlNode* decrypted = lasso_node_get_original_xmlnode(LASSO_NODE(assertion));
    if (!decrypted) return refuse(reason, "decryption_failed", "no decrypted assertion");
    PORTCULLIS_RETURN_IF_ERROR(check_assertion_shape(decrypted, shape.response_signed, reason));
  }
  if (!assertion->ID || !*assertion->ID) return refuse(reason, "invalid_response", "no ID");
  PORTCULLIS_RETURN_IF_ERROR(check_conditions(assertion, sp, now, reason));
  SamlLogin out;
  PORTCULLIS_ASSIGN_OR_RETURN(out.in_response_to,
                              check_subject(assertion, sp, now, reason, out.not_on_or_after));
  // The Response's own InResponseTo, when present, must agree with the confirmation's.
  if (status->InResponseTo && out.in_response_to != status->InResponseTo) {
    return refuse(reason, "in_response_to_mismatch");
  }
  const LassoSaml2NameID* name_id = assertion->Subject->NameID;
  if (name_id && LASSO_IS_SAML2_NAME_ID(name_id) && name_id->content) {
    out.name_id = name_id->content;
    out.name_id_format = name_id->Format ? name_id->Format : "";
  }
  out.assertion_id = assertion->ID;
  for (GList* st = assertion->AttributeStatement; st; st = st->next) {
    if (!LASSO_IS_SAML2_ATTRIBUTE_STATEMENT(st->data)) continue;
    for (GList* at = LASSO_SAML2_ATTRIBUTE_STATEMENT(st->data)->Attribute; at; at = at->next) {
      if (!LASSO_IS_SAML2_ATTRIBUTE(at->data)) continue;
      const LassoSaml2Attribute* attribute = LASSO_SAML2_ATTRIBUTE(at->data);
      if (!attribute->Name) continue;
      auto& values = out.attributes[attribute->Name];
      for (GList* v = attribute->AttributeValue; v; v = v->next) {
        if (LASSO_IS_SAML2_ATTRIBUTE_VALUE(v->data)) {
          values.push_back(text_of(LASSO_SAML2_ATTRIBUTE_VALUE(v->data)->any));
        }
      }
    }
  }
  return out;
}

AssertedUser user_from_saml(const SamlLogin& login, const AttributeMapping& mapping) {
  auto first = [&login](std::initializer_list<std::string> names) -> std::string {
    for (const auto& n : names) {
      auto it = login.attributes.find(n);
      if (it != login.attributes.end() && !it->second.empty() && !it->second[0].empty()) {
        return it->second[0];
      }
    }
    return "";
  };
  constexpr const char* kClaims = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/";
  const std::string claims(kClaims);
  AssertedUser u;
  u.email = first({mapping.email, claims + "emailaddress"});
  if (u.email.empty() && login.name_id.find('@') != std::string::npos) u.email = login.name_id;
  u.given_name = first({mapping.given_name, claims + "givenname", "firstName"});
  u.family_name = first({mapping.family_name, claims + "surname", "lastName"});
  u.subject = login.name_id;
  u.external_id = mapping.external_id.empty() ? u.subject : first({mapping.external_id});
  return u;
}

}  // namespace portcullis::sso

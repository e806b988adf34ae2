#include "dpop/presentation.h"

#include "dpop/proof_key.h"
#include "format/json.h"

namespace portcullis::dpop {
namespace {

Status refused(std::string reason, std::string message) {
  return Status::unauthenticated(std::move(message)).with_reason(std::move(reason));
}

}  // namespace

std::string bound_key(const Json::Value& claims) {
  const Json::Value* cnf = json::find_member(claims, "cnf");
  if (cnf == nullptr) return std::string();
  const Json::Value* jkt = json::find_member(*cnf, "jkt");
  return jkt != nullptr && jkt->isString() ? jkt->asString() : std::string();
}

Status check_presentation(std::string_view cnf_jkt, const Presentation& p,
                          const RememberProof& remember) {
  if (cnf_jkt.empty()) {
    if (!p.dpop_scheme) return Status::ok();
    return refused("invalid_token", "the access token is not DPoP-bound; send it as Bearer");
  }
  // RFC 9449 §7.2: a bound token sent as Bearer is refused, so a stolen one is worth nothing.
  if (!p.dpop_scheme) {
    return refused("invalid_token", "the access token is DPoP-bound; send it with the DPoP scheme");
  }
  if (!p.proof) return refused("invalid_dpop_proof", "a DPoP-bound token needs a DPoP proof");
  ProofRequest expected;
  expected.method = p.method;
  expected.url = p.url;
  expected.now = p.now;
  expected.iat_leeway_seconds = p.iat_leeway_seconds;
  expected.access_token = p.access_token;
  Result<VerifiedProof> proof = verify_proof(*p.proof, expected);
  if (!proof) {
    if (proof.status().reason() != "invalid_dpop_proof") return proof.status();
    return refused("invalid_dpop_proof", proof.status().message());
  }
  if (proof->jkt != cnf_jkt) {
    return refused("invalid_dpop_proof", "the DPoP proof was made with another key");
  }
  if (Status st = remember(*proof); !st.is_ok()) {
    if (st.reason() != "invalid_dpop_proof") return st;
    return refused("invalid_dpop_proof", st.message());
  }
  return Status::ok();
}

std::string supported_algs_param() {
  std::string algs;
  for (std::string_view alg : kProofAlgorithms) {
    if (!algs.empty()) algs += ' ';
    algs += alg;
  }
  return "algs=\"" + algs + "\"";
}

}  // namespace portcullis::dpop

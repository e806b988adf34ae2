// portcullis-bench-page-token: issues the page token a listing would issue for a given position,
// with the deployment's own key (derived from the master key named by the config). bench/listing
// uses it to reach a page at depth 1,000,000 without walking 10,000 pages first; the token is
// exactly what the service hands out, so the request it makes is one a client could make.
//
//   portcullis-bench-page-token --config FILE --listing NAME [--filter FILTER]
//       --create-time 'YYYY-MM-DD HH:MM:SS.ffffff' --id ID [--backward]
//
// Holding the master key is holding every secret of the deployment: this tool grants nothing
// the operator running it does not already have.
#include "paging/page_token.h"

#include <iostream>
#include <map>
#include <string>

#include "config/config.h"
#include "crypto/aead.h"

int main(int argc, char** argv) {
  using namespace portcullis;
  std::map<std::string, std::string> opts;
  bool backward = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--backward") {
      backward = true;
    } else if (arg.rfind("--", 0) == 0 && i + 1 < argc) {
      opts[arg.substr(2)] = argv[++i];
    } else {
      std::cerr << "unexpected argument " << arg << "\n";
      return 2;
    }
  }
  for (const char* required : {"config", "listing", "create-time", "id"}) {
    if (!opts.count(required)) {
      std::cerr << "usage: portcullis-bench-page-token --config FILE --listing NAME [--filter F] "
                   "--create-time 'YYYY-MM-DD HH:MM:SS.ffffff' --id ID [--backward]\n";
      return 2;
    }
  }
  auto config = config::load(opts["config"]);
  if (!config) {
    std::cerr << config.status().to_string() << "\n";
    return 1;
  }
  auto master_key = crypto::MasterKey::load_file(config->master_key_file);
  if (!master_key) {
    std::cerr << master_key.status().to_string() << "\n";
    return 1;
  }
  auto codec = paging::TokenCodec::for_listing(*master_key,
                                               paging::Listing{opts["listing"], opts["filter"]});
  if (!codec) {
    std::cerr << codec.status().to_string() << "\n";
    return 1;
  }
  paging::PageToken token{backward ? paging::Direction::kBackward : paging::Direction::kForward,
                          paging::Position{opts["create-time"], opts["id"]}};
  std::cout << codec->encode(token) << "\n";
  return 0;
}

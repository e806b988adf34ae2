#include "runtime/fastcgi_records.h"

#include <algorithm>
#include <optional>

namespace portcullis::runtime::fastcgi {
namespace {

using namespace wire;

std::uint8_t byte_at(std::string_view s, std::size_t i) {
  return static_cast<std::uint8_t>(s[i]);
}

void append_header(std::string& out, std::uint8_t type, std::uint16_t id, std::size_t length) {
  const char h[kHeaderBytes] = {static_cast<char>(kVersion1),
                                static_cast<char>(type),
                                static_cast<char>(id >> 8),
                                static_cast<char>(id & 0xff),
                                static_cast<char>((length >> 8) & 0xff),
                                static_cast<char>(length & 0xff),
                                0,
                                0};
  out.append(h, kHeaderBytes);
}

void append_end_request(std::string& out, std::uint16_t id, std::uint8_t protocol_status) {
  append_header(out, kEndRequest, id, 8);
  const char body[8] = {0, 0, 0, 0, static_cast<char>(protocol_status), 0, 0, 0};
  out.append(body, sizeof body);
}

// One name-value pair length (FastCGI 1.0 §3.4): one byte below 128, else four with the top bit
// set. nullopt when `in` ends first.
std::optional<std::size_t> read_length(std::string_view& in) {
  if (in.empty()) return std::nullopt;
  if ((byte_at(in, 0) & 0x80) == 0) {
    const std::size_t n = byte_at(in, 0);
    in.remove_prefix(1);
    return n;
  }
  if (in.size() < 4) return std::nullopt;
  const std::size_t n = (std::size_t{byte_at(in, 0) & 0x7fu} << 24) |
                        (std::size_t{byte_at(in, 1)} << 16) | (std::size_t{byte_at(in, 2)} << 8) |
                        byte_at(in, 3);
  in.remove_prefix(4);
  return n;
}

// Decodes a whole name-value stream; false when a length runs past the end.
bool decode_pairs(std::string_view in, std::vector<std::pair<std::string, std::string>>& out) {
  while (!in.empty()) {
    auto name_len = read_length(in);
    if (!name_len) return false;
    auto value_len = read_length(in);
    if (!value_len) return false;
    if (*name_len > in.size() || *value_len > in.size() - *name_len) return false;
    out.emplace_back(std::string(in.substr(0, *name_len)),
                     std::string(in.substr(*name_len, *value_len)));
    in.remove_prefix(*name_len + *value_len);
  }
  return true;
}

void append_length(std::string& out, std::size_t n) {
  if (n < 128) {
    out.push_back(static_cast<char>(n));
    return;
  }
  out.push_back(static_cast<char>(((n >> 24) & 0x7f) | 0x80));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
}

// FCGI_GET_VALUES_RESULT for the variables asked about that we know; false if malformed.
bool answer_get_values(std::string_view content, std::string& out) {
  std::vector<std::pair<std::string, std::string>> asked;
  if (!decode_pairs(content, asked)) return false;
  std::string pairs;
  for (const auto& [name, ignored] : asked) {
    std::string_view value;
    if (name == "FCGI_MPXS_CONNS") {
      value = "0";
    } else if (name == "FCGI_MAX_REQS") {
      value = "1";
    } else {
      continue;  // FCGI_MAX_CONNS depends on the pool: not answered, as the spec allows
    }
    append_length(pairs, name.size());
    append_length(pairs, value.size());
    pairs += name;
    pairs += value;
  }
  if (pairs.size() > kMaxContentBytes) return false;
  append_header(out, kGetValuesResult, 0, pairs.size());
  out += pairs;
  return true;
}

}  // namespace

const std::string* Request::param(std::string_view name) const {
  for (const auto& [n, v] : params) {
    if (n == name) return &v;
  }
  return nullptr;
}

void Reader::feed(std::string_view bytes) {
  if (phase_ == Phase::kClosed) return;
  // Drop what was parsed before growing the buffer, so it holds at most one partial record and
  // what arrived after it.
  if (consumed_ > 0) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(bytes);
}

Reader::Next Reader::close(std::string reason) {
  phase_ = Phase::kClosed;
  close_reason_ = std::move(reason);
  buffer_.clear();
  consumed_ = 0;
  raw_params_.clear();
  request_ = {};
  return Next::kClose;
}

Reader::Next Reader::next() {
  for (;;) {
    if (phase_ == Phase::kClosed) return Next::kClose;
    if (phase_ == Phase::kReady) return Next::kRequest;
    const std::string_view rest = std::string_view(buffer_).substr(consumed_);
    if (rest.size() < kHeaderBytes) return Next::kNeedMore;
    if (byte_at(rest, 0) != kVersion1) return close("unsupported FastCGI version");
    const std::uint8_t type = byte_at(rest, 1);
    const auto id = static_cast<std::uint16_t>((byte_at(rest, 2) << 8) | byte_at(rest, 3));
    const std::size_t length = (std::size_t{byte_at(rest, 4)} << 8) | byte_at(rest, 5);
    const std::size_t total = kHeaderBytes + length + byte_at(rest, 6);
    if (rest.size() < total) return Next::kNeedMore;
    const std::string_view content = rest.substr(kHeaderBytes, length);
    consumed_ += total;

    const bool open = phase_ == Phase::kParams || phase_ == Phase::kStdin;
    switch (type) {
      case kBeginRequest: {
        if (id == 0 || length < 8) return close("malformed FCGI_BEGIN_REQUEST");
        if (open) {
          if (id == request_.id) return close("FCGI_BEGIN_REQUEST for an open request");
          append_end_request(output_, id, kCantMpxConn);  // one request at a time
          break;
        }
        const auto role =
            static_cast<std::uint16_t>((byte_at(content, 0) << 8) | byte_at(content, 1));
        const bool keep = (byte_at(content, 2) & kKeepConn) != 0;
        if (role != kResponder) {
          append_end_request(output_, id, kUnknownRole);
          if (!keep) return close("unknown FastCGI role");
          break;
        }
        request_ = {};
        request_.id = id;
        request_.keep_conn = keep;
        raw_params_.clear();
        phase_ = Phase::kParams;
        break;
      }
      case kAbortRequest:
        if (open && id == request_.id) {
          append_end_request(output_, id, kRequestComplete);
          const bool keep = request_.keep_conn;
          request_ = {};
          raw_params_.clear();
          phase_ = Phase::kWaitBegin;
          if (!keep) return close("request aborted by the peer");
        }
        break;
      case kParams:
        if (!open || id != request_.id) break;  // records of no open request are ignored
        if (phase_ != Phase::kParams) return close("FCGI_PARAMS after the end of the stream");
        if (length == 0) {
          if (!decode_pairs(raw_params_, request_.params)) return close("malformed FCGI_PARAMS");
          raw_params_.clear();
          raw_params_.shrink_to_fit();
          phase_ = Phase::kStdin;
        } else if (raw_params_.size() + length > limits_.max_params_bytes) {
          return close("FCGI_PARAMS over the limit");
        } else {
          raw_params_.append(content);
        }
        break;
      case kStdin:
        if (!open || id != request_.id) break;
        if (phase_ != Phase::kStdin) return close("FCGI_STDIN before the end of FCGI_PARAMS");
        if (length == 0) {
          phase_ = Phase::kReady;
          return Next::kRequest;
        }
        {
          const std::size_t room = limits_.max_body_bytes - request_.body.size();
          request_.body.append(content.substr(0, std::min(room, content.size())));
          if (content.size() > room) request_.body_overflow = true;
        }
        break;
      case kGetValues:
        if (id != 0) break;
        if (!answer_get_values(content, output_)) return close("malformed FCGI_GET_VALUES");
        break;
      default:
        if (id == 0) {  // a management record we do not know: say so (FastCGI 1.0 §4.2)
          append_header(output_, kUnknownType, 0, 8);
          const char body[8] = {static_cast<char>(type), 0, 0, 0, 0, 0, 0, 0};
          output_.append(body, sizeof body);
        }
        break;  // FCGI_DATA, and the records only an application sends: ignored
    }
  }
}

Request Reader::take_request() {
  phase_ = Phase::kWaitBegin;
  return std::exchange(request_, Request{});
}

void append_response(std::string& out, std::uint16_t id, std::string_view cgi_output) {
  out.reserve(out.size() + cgi_output.size() +
              kHeaderBytes * (cgi_output.size() / kMaxContentBytes + 4));
  while (!cgi_output.empty()) {
    const std::size_t n = std::min(cgi_output.size(), kMaxContentBytes);
    append_header(out, kStdout, id, n);
    out.append(cgi_output.substr(0, n));
    cgi_output.remove_prefix(n);
  }
  append_header(out, kStdout, id, 0);
  append_end_request(out, id, kRequestComplete);
}

}  // namespace portcullis::runtime::fastcgi

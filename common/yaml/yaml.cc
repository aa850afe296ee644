// Bounded YAML (yaml.h): libfyaml's event parser feeding a tree builder that counts what
// it builds and stops at the first limit hit.
#include "common/yaml/yaml.h"

#include <libfyaml.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace blkbench::yaml {
namespace {

const std::string kEmpty;
const std::vector<Node> kNoItems;
const std::vector<Node::Entry> kNoEntries;

// How often (in events) the wall-time limit is checked: a clock read per event would
// cost more than the parse.
constexpr size_t kEventsPerClockCheck = 256;

Mark MarkOf(struct fy_event* e) {
  const struct fy_mark* m = fy_event_start_mark(e);
  if (m == nullptr || m->line < 0 || m->column < 0) return Mark{};
  return Mark{m->line + 1, m->column + 1};
}

std::string TokenText(struct fy_token* t) {
  if (t == nullptr) return "";
  size_t len = 0;
  const char* text = fy_token_get_text(t, &len);
  return text == nullptr ? "" : std::string(text, len);
}

// libfyaml reports errors as diagnostic text, "SOURCE:LINE:COL: error: MESSAGE\n"
// followed by the source line and a caret; the first such line is kept.
struct DiagSink {
  std::string first;
  static void Output(struct fy_diag* /*diag*/, void* user, const char* buf, size_t len) {
    auto* sink = static_cast<DiagSink*>(user);
    if (sink->first.empty()) sink->first.assign(buf, len);
  }
};

ParseError ErrorFromDiag(const std::string& diag) {
  const size_t at = diag.find(": error: ");
  if (at == std::string::npos) {
    return ParseError{Mark{}, diag.empty() ? "invalid YAML" : std::string(diag)};
  }
  std::string message = diag.substr(at + 9);
  if (size_t nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  // Walk back over ":LINE:COL" before ": error:".
  Mark mark;
  const size_t col_colon = diag.rfind(':', at - 1);
  if (col_colon != std::string::npos && col_colon > 0) {
    const size_t line_colon = diag.rfind(':', col_colon - 1);
    int line = 0, column = 0;
    if (line_colon != std::string::npos &&
        absl::SimpleAtoi(diag.substr(line_colon + 1, col_colon - line_colon - 1), &line) &&
        absl::SimpleAtoi(diag.substr(col_colon + 1, at - col_colon - 1), &column)) {
      mark = Mark{line, column};
    }
  }
  return ParseError{mark, absl::StrCat("YAML syntax error: ", message)};
}

bool IsNullText(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

}  // namespace

const std::string& Node::Scalar() const { return data_ ? data_->scalar : kEmpty; }

const std::vector<Node>& Node::items() const { return IsSequence() ? data_->items : kNoItems; }

const std::vector<Node::Entry>& Node::entries() const {
  return IsMap() ? data_->entries : kNoEntries;
}

size_t Node::size() const {
  if (IsSequence()) return data_->items.size();
  if (IsMap()) return data_->entries.size();
  return 0;
}

Node Node::operator[](std::string_view key) const {
  for (const Entry& e : entries()) {
    if (e.first.IsScalar() && e.first.Scalar() == key) return e.second;
  }
  return Node();
}

Node Node::operator[](size_t i) const {
  const std::vector<Node>& list = items();
  return i < list.size() ? list[i] : Node();
}

std::string_view Node::Kind() const {
  switch (type()) {
    case Type::kMap:
      return "a map";
    case Type::kSequence:
      return "a list";
    case Type::kScalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

std::optional<int64_t> Node::AsInt() const {
  int64_t v = 0;
  if (!IsScalar() || !absl::SimpleAtoi(Scalar(), &v)) return std::nullopt;
  return v;
}

std::optional<double> Node::AsDouble() const {
  double v = 0;
  if (!IsScalar() || !absl::SimpleAtod(Scalar(), &v)) return std::nullopt;
  return v;
}

std::optional<bool> Node::AsBool() const {
  if (!IsScalar()) return std::nullopt;
  const std::string s = absl::AsciiStrToLower(Scalar());
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

// Builds the tree from parser events, counting nodes (an alias counts its whole
// subtree again: code that walks the tree walks it again) and depth.
class TreeBuilder {
 public:
  explicit TreeBuilder(const Limits& limits) : limits_(limits) {}

  // Consumes one event; false (with error()) when the document must be rejected.
  bool Add(struct fy_event* e);
  bool done() const { return done_; }
  const std::optional<ParseError>& error() const { return error_; }
  Node root() const { return root_; }
  // The document of empty text (or only comments): null, as YAML says.
  static Node NullNode() { return Node(std::make_shared<const Node::Data>()); }

 private:
  struct Frame {
    std::shared_ptr<Node::Data> data;
    std::string anchor;
    size_t nodes = 1;  // this subtree's size, aliases expanded
    Node pending_key;  // a map's key waiting for its value
    bool has_key = false;
  };

  bool Fail(Mark mark, std::string message) {
    error_ = ParseError{mark, std::move(message)};
    return false;
  }
  // Counts `n` more nodes against the limit.
  bool Count(size_t n, Mark mark);
  // Attaches a finished node (with its subtree size) to the open parent, or makes it the root.
  bool Attach(Node node, size_t nodes, const std::string& anchor);

  const Limits& limits_;
  std::vector<Frame> stack_;
  struct Anchored {
    Node node;
    size_t nodes;
  };
  std::map<std::string, Anchored> anchors_;
  size_t nodes_ = 0;
  Mark last_mark_;
  int documents_ = 0;
  bool done_ = false;
  Node root_;
  std::optional<ParseError> error_;
};

bool TreeBuilder::Count(size_t n, Mark mark) {
  nodes_ += n;
  if (nodes_ <= limits_.max_nodes) return true;
  return Fail(mark, absl::StrCat("more than ", limits_.max_nodes,
                                 " YAML nodes (aliases count each time they are used)"));
}

bool TreeBuilder::Attach(Node node, size_t nodes, const std::string& anchor) {
  if (!anchor.empty()) anchors_[anchor] = Anchored{node, nodes};
  if (stack_.empty()) {
    root_ = std::move(node);
    return true;
  }
  Frame& parent = stack_.back();
  parent.nodes += nodes;
  if (parent.data->type == Node::Type::kSequence) {
    parent.data->items.push_back(std::move(node));
  } else if (!parent.has_key) {
    parent.pending_key = std::move(node);
    parent.has_key = true;
  } else {
    parent.data->entries.emplace_back(std::move(parent.pending_key), std::move(node));
    parent.pending_key = Node();
    parent.has_key = false;
  }
  return true;
}

bool TreeBuilder::Add(struct fy_event* e) {
  // An empty value ("key:") has no place of its own: it is where the last token was.
  Mark mark = MarkOf(e);
  if (mark.known()) {
    last_mark_ = mark;
  } else {
    mark = last_mark_;
  }
  switch (e->type) {
    case FYET_DOCUMENT_START:
      if (++documents_ > 1) {
        // The event's mark is where the previous document ended; the '---' token is
        // the place to show.
        Mark at = mark;
        if (const struct fy_mark* m = fy_token_start_mark(e->document_start.document_start)) {
          at = Mark{m->line + 1, m->column + 1};
        }
        return Fail(at, "more than one YAML document (a second '---'); one is expected");
      }
      return true;
    case FYET_STREAM_END:
      done_ = true;
      return true;
    case FYET_SCALAR: {
      if (!Count(1, mark)) return false;
      auto data = std::make_shared<Node::Data>();
      data->mark = mark;
      data->scalar = TokenText(e->scalar.value);
      // libfyaml marks a quoted scalar at its first character; the place a reader
      // looks for is the opening quote.
      const enum fy_scalar_style style = fy_token_scalar_style(e->scalar.value);
      if ((style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) && mark.column > 1 &&
          MarkOf(e).known()) {
        data->mark.column = mark.column - 1;
      }
      if (data->scalar.size() > limits_.max_scalar_bytes) {
        return Fail(mark,
                    absl::StrCat("a scalar longer than ", limits_.max_scalar_bytes, " bytes"));
      }
      const bool plain = style == FYSS_PLAIN;
      data->type = plain && e->scalar.tag == nullptr && IsNullText(data->scalar)
                       ? Node::Type::kNull
                       : Node::Type::kScalar;
      return Attach(Node(std::move(data)), 1, TokenText(e->scalar.anchor));
    }
    case FYET_ALIAS: {
      const std::string name = TokenText(e->alias.anchor);
      auto it = anchors_.find(name);
      if (it == anchors_.end()) {
        return Fail(mark, absl::StrCat("alias '*", name, "' names no finished anchor"));
      }
      if (!Count(it->second.nodes, mark)) return false;
      return Attach(it->second.node, it->second.nodes, "");
    }
    case FYET_MAPPING_START:
    case FYET_SEQUENCE_START: {
      if (!Count(1, mark)) return false;
      if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
        return Fail(mark, absl::StrCat("nested deeper than ", limits_.max_depth, " levels"));
      }
      const bool map = e->type == FYET_MAPPING_START;
      Frame f;
      f.data = std::make_shared<Node::Data>();
      f.data->type = map ? Node::Type::kMap : Node::Type::kSequence;
      f.data->mark = mark;
      f.anchor = TokenText(map ? e->mapping_start.anchor : e->sequence_start.anchor);
      stack_.push_back(std::move(f));
      return true;
    }
    case FYET_MAPPING_END:
    case FYET_SEQUENCE_END: {
      if (stack_.empty()) return Fail(mark, "unbalanced end of a map or list");
      Frame f = std::move(stack_.back());
      stack_.pop_back();
      return Attach(Node(std::move(f.data)), f.nodes, f.anchor);
    }
    default:
      return true;
  }
}

ParseResult Parse(std::string_view text, const Limits& limits) {
  ParseResult result;
  if (text.size() > limits.max_bytes) {
    result.error = ParseError{
        Mark{}, absl::StrCat("larger than ", limits.max_bytes, " bytes (", text.size(), ")")};
    return result;
  }
  DiagSink sink;
  struct fy_diag_cfg diag_cfg;
  fy_diag_cfg_default(&diag_cfg);
  diag_cfg.fp = nullptr;
  diag_cfg.output_fn = &DiagSink::Output;
  diag_cfg.user = &sink;
  diag_cfg.colorize = false;
  diag_cfg.show_source = false;
  diag_cfg.show_position = true;
  diag_cfg.show_type = false;
  diag_cfg.show_module = false;
  std::unique_ptr<struct fy_diag, void (*)(struct fy_diag*)> diag(fy_diag_create(&diag_cfg),
                                                                  &fy_diag_destroy);
  struct fy_parse_cfg cfg = {};
  cfg.flags = static_cast<enum fy_parse_cfg_flags>(FYPCF_DEFAULT_VERSION_AUTO);
  cfg.diag = diag.get();
  std::unique_ptr<struct fy_parser, void (*)(struct fy_parser*)> parser(fy_parser_create(&cfg),
                                                                        &fy_parser_destroy);
  if (diag == nullptr || parser == nullptr ||
      fy_parser_set_string(parser.get(), text.data(), text.size()) != 0) {
    result.error = ParseError{Mark{}, "cannot start the YAML parser (out of memory?)"};
    return result;
  }
  TreeBuilder builder(limits);
  const absl::Time deadline = absl::Now() + limits.max_time;
  size_t events = 0;
  while (struct fy_event* e = fy_parser_parse(parser.get())) {
    const bool ok = builder.Add(e);
    fy_parser_event_free(parser.get(), e);
    if (!ok) {
      result.error = builder.error();
      return result;
    }
    if (++events % kEventsPerClockCheck == 0 && absl::Now() > deadline) {
      result.error = ParseError{
          Mark{}, absl::StrCat("took longer than ", absl::FormatDuration(limits.max_time))};
      return result;
    }
  }
  if (fy_parser_get_stream_error(parser.get()) || !builder.done()) {
    result.error = ErrorFromDiag(sink.first);
    return result;
  }
  result.root = builder.root();
  if (!result.root) result.root = TreeBuilder::NullNode();
  return result;
}

absl::StatusOr<Node> ParseOrStatus(std::string_view text, std::string_view source,
                                   const Limits& limits) {
  ParseResult r = Parse(text, limits);
  if (r.ok()) return r.root;
  const std::string name(source);  // (Debian's absl::string_view is not std::string_view)
  const std::string where = r.error->mark.known() ? absl::StrCat(name, ":", r.error->mark.line, ":",
                                                                 r.error->mark.column, ": ")
                                                  : absl::StrCat(name, ": ");
  return absl::InvalidArgumentError(absl::StrCat(where, r.error->message));
}

}  // namespace blkbench::yaml

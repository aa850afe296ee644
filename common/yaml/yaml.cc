// Bounded YAML (yaml.h): libfyaml's event parser feeding a tree builder that counts what
// it builds and stops at the first limit hit.
#include "common/yaml/yaml.h"

#include <libfyaml.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
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

// The value of a single-quoted scalar whose source (between the quotes) is `raw`, as
// YAML 1.2 section 7.3.2 reads it: `''` is one quote; a line break and the blanks around
// it fold into one space, or into n-1 newlines when n breaks follow each other.
// Why not fy_token_get_text: libfyaml 0.7.12 leaks its output buffer for such a scalar
// with five `''` or more (512 bytes to 64 KiB a parse, found by yaml_fuzz under
// LeakSanitizer), which a submitter could repeat until the controller runs out of memory.
std::string SingleQuotedValue(std::string_view raw) {
  std::string out;
  size_t i = 0;
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  const auto line_break = [](char c) { return c == '\n' || c == '\r'; };
  while (i < raw.size()) {
    if (raw[i] == '\'' && i + 1 < raw.size() && raw[i + 1] == '\'') {
      out += '\'';
      i += 2;
    } else if (line_break(raw[i])) {
      while (!out.empty() && blank(out.back())) out.pop_back();
      int breaks = 0;
      while (i < raw.size() && line_break(raw[i])) {
        i += raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n' ? 2 : 1;
        ++breaks;
        while (i < raw.size() && blank(raw[i])) ++i;
      }
      if (breaks == 1) {
        out += ' ';
      } else {
        out.append(breaks - 1, '\n');
      }
    } else {
      out += raw[i++];
    }
  }
  return out;
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

// The first error libfyaml collected on `diag`, if any.
std::optional<ParseError> FirstCollectedError(struct fy_diag* diag) {
  if (diag == nullptr) return std::nullopt;
  void* iter = nullptr;
  while (struct fy_diag_error* err = fy_diag_errors_iterate(diag, &iter)) {
    if (err->type != FYET_ERROR || err->msg == nullptr) continue;
    const Mark mark = err->line > 0 && err->column > 0 ? Mark{err->line, err->column} : Mark{};
    return ParseError{mark, absl::StrCat("YAML syntax error: ", err->msg)};
  }
  return std::nullopt;
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
  // `text` is the parser's input (scalars are cut from it), and must outlive this.
  TreeBuilder(std::string_view text, const Limits& limits) : text_(text), limits_(limits) {}

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

  // The source bytes of token `t` (a quoted scalar's: between its quotes).
  std::string_view SourceOf(struct fy_token* t) const {
    const struct fy_mark* start = fy_token_start_mark(t);
    const struct fy_mark* end = fy_token_end_mark(t);
    if (start == nullptr || end == nullptr || start->input_pos > end->input_pos ||
        end->input_pos > text_.size()) {
      return {};
    }
    return text_.substr(start->input_pos, end->input_pos - start->input_pos);
  }

  const std::string_view text_;
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
      // libfyaml marks a quoted scalar at its first character; the place a reader
      // looks for is the opening quote.
      const enum fy_scalar_style style = fy_token_scalar_style(e->scalar.value);
      data->scalar = style == FYSS_SINGLE_QUOTED ? SingleQuotedValue(SourceOf(e->scalar.value))
                                                 : TokenText(e->scalar.value);
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

namespace {

// The position of the first byte of `text` that does not start a well-formed UTF-8
// sequence (overlong forms, surrogates and code points past U+10FFFF included), or
// nullopt. YAML text is Unicode; and libfyaml 0.7.12 does not end on some malformed
// sequences (`%\xa1`, found by yaml_fuzz, loops forever inside fy_parser_parse, where no
// deadline of ours can reach), so nothing malformed is handed to it.
std::optional<Mark> FirstMalformedUtf8(std::string_view text) {
  Mark mark{1, 1};
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    // Sequence length, smallest code point it may encode, and the lead byte's bits.
    struct Lead {
      unsigned char mask, value;
      size_t len;
      uint32_t min;
    };
    static constexpr Lead kLeads[] = {{0x80, 0x00, 1, 0},
                                      {0xE0, 0xC0, 2, 0x80},
                                      {0xF0, 0xE0, 3, 0x800},
                                      {0xF8, 0xF0, 4, 0x10000}};
    const Lead* lead = nullptr;
    for (const Lead& l : kLeads) {
      if ((c & l.mask) == l.value) lead = &l;
    }
    if (lead == nullptr) return mark;
    const size_t len = lead->len;
    uint32_t cp = c & static_cast<unsigned char>(~lead->mask);
    if (i + len > text.size()) return mark;
    for (size_t k = 1; k < len; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return mark;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (len > 1 && (cp < lead->min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) return mark;
    if (c == '\n') {
      ++mark.line;
      mark.column = 1;
    } else {
      ++mark.column;
    }
    i += len;
  }
  return std::nullopt;
}

}  // namespace

ParseResult Parse(std::string_view text, const Limits& limits) {
  ParseResult result;
  if (text.size() > limits.max_bytes) {
    result.error = ParseError{
        Mark{}, absl::StrCat("larger than ", limits.max_bytes, " bytes (", text.size(), ")")};
    return result;
  }
  if (std::optional<Mark> bad = FirstMalformedUtf8(text)) {
    result.error = ParseError{*bad, "not UTF-8 text (a malformed byte sequence starts here)"};
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
  // Errors are collected, never displayed: libfyaml 0.7.12's display of an error's source
  // lines (fy_diag_error_atom_display) reads out of bounds and can crash on long lines
  // around an unclosed flow scalar (found by machine_profile_fuzz).
  if (diag != nullptr) fy_diag_set_collect_errors(diag.get(), true);
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
  TreeBuilder builder(text, limits);
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
    result.error = FirstCollectedError(diag.get());
    if (!result.error) result.error = ErrorFromDiag(sink.first);
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

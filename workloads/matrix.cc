// ParseMatrix: walks the matrix YAML into bindings (key, values, positions), checks
// them, and hands them to ExpandCells. Every problem is collected, none thrown.
#include "workloads/matrix.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sim_vocabulary.h"
#include "common/suggest.h"
#include "common/units.h"
#include "common/yaml/yaml.h"
#include "workloads/absl_compat.h"
#include "workloads/bindings.h"
#include "workloads/errors.h"
#include "workloads/expand.h"
#include "workloads/fio_import.h"
#include "workloads/job_options.h"
#include "workloads/labels.h"
#include "workloads/machine_files.h"
#include "workloads/named_jobs.h"
#include "workloads/sim_checks.h"

namespace blkbench::workloads {
namespace {

constexpr std::string_view kTopLevelKeys[] = {"name", "description", "repeats", "job",
                                              "jobs", "matrix",      "target",  "device"};
constexpr std::string_view kNullBlkPrefix = "null_blk.";
// Matrix files are hand-written; anything bigger is a mistake (or /dev/zero).
constexpr size_t kMaxFileBytes = 4 << 20;

Position PosOf(const yaml::Mark& m) {
  if (!m.known()) return Position{};
  return Position{m.line, m.column};
}
Position PosOf(const yaml::Node& n) { return PosOf(n.mark()); }

std::string_view Kind(const yaml::Node& n) { return n.Kind(); }

// Where a value's error points: a missing value has no place of its own.
Position ValuePos(const yaml::Node& key, const yaml::Node& value) {
  return value.IsNull() ? PosOf(key) : PosOf(value);
}

struct Entry {
  std::string key;
  yaml::Node key_node;
  yaml::Node value;
};

// Reads one document into matrix fields and bindings, reporting into `errors`.
class Reader {
 public:
  explicit Reader(ErrorList& errors) : errors_(errors) {}

  void ReadDocument(const yaml::Node& root);

  Matrix& matrix() { return matrix_; }
  std::vector<Binding>& bindings() { return bindings_; }
  bool has_name() const { return has_name_; }
  std::optional<Position> target_pos() const { return target_pos_; }
  std::optional<Position> matrix_pos() const { return matrix_pos_; }
  std::vector<NamedJobDef>& named_jobs() { return named_jobs_; }
  // Engine device-model parameters ("ssd.queue_depth" -> "1023"), the same for every cell.
  const std::map<std::string, std::string>& model_params() const { return model_params_; }

 private:
  // The entries of a map, minus (and reporting) non-scalar and repeated keys.
  std::vector<Entry> Entries(const yaml::Node& map, std::string_view where);
  // Reads every key of the `section` map as an option allowed in `scopes`.
  void ReadSection(const Entry& e, std::initializer_list<Scope> scopes);
  void ReadOption(const Entry& e, std::string_view section, std::initializer_list<Scope> scopes);
  void ReadDevice(const Entry& e);
  void ReadJobs(const Entry& e);
  void ReadNamedJob(const Entry& j);
  void ReadModelParams(const Entry& kind);
  void ReportMisplaced(const Entry& e, const OptionDef& def);
  std::optional<std::string> ReadScalar(const Entry& e, std::string_view expected);

  ErrorList& errors_;
  Matrix matrix_;
  std::vector<Binding> bindings_;
  bool has_name_ = false;
  std::optional<Position> target_pos_;
  std::optional<Position> matrix_pos_;
  std::map<std::string, std::string> model_params_;
  std::vector<NamedJobDef> named_jobs_;
};

std::vector<Entry> Reader::Entries(const yaml::Node& map, std::string_view where) {
  std::vector<Entry> entries;
  for (const auto& [key, value] : map.entries()) {
    if (!key.IsScalar()) {
      errors_.Add(PosOf(key), absl::StrCat("keys ", ToAbsl(where), " must be plain names, got ",
                                           ToAbsl(Kind(key))));
      continue;
    }
    bool repeated = false;
    for (const Entry& e : entries) {
      if (e.key != key.Scalar()) continue;
      errors_.Add(PosOf(key), absl::StrCat("key '", e.key, "' appears twice ", ToAbsl(where),
                                           " (first at line ", PosOf(e.key_node).line, ")"));
      repeated = true;
    }
    if (!repeated) entries.push_back({key.Scalar(), key, value});
  }
  return entries;
}

std::optional<std::string> Reader::ReadScalar(const Entry& e, std::string_view expected) {
  if (e.value.IsScalar()) return e.value.Scalar();
  errors_.Add(ValuePos(e.key_node, e.value),
              absl::StrCat("key '", e.key, "': expected ", ToAbsl(expected), ", got ",
                           ToAbsl(Kind(e.value))));
  return std::nullopt;
}

void Reader::ReadDocument(const yaml::Node& root) {
  if (!root.IsMap()) {
    errors_.Add(PosOf(root),
                absl::StrCat("expected a map of matrix keys (name, job, matrix, ",
                             "target, ...) at the top level, got ", ToAbsl(Kind(root))));
    return;
  }
  for (const Entry& e : Entries(root, "at the top level")) {
    if (e.key == "name") {
      std::optional<std::string> name = ReadScalar(e, "a non-empty name");
      if (name && name->empty()) {
        errors_.Add(PosOf(e.value), "key 'name': expected a non-empty name, got ''");
      } else if (name && !LabelProblem(*name).empty()) {
        errors_.Add(PosOf(e.value),
                    absl::StrCat("key 'name': expected up to 128 printable characters, got ",
                                 ToAbsl(LabelProblem(*name))));
      }
      has_name_ = true;  // reported above if bad; do not also call it missing
      if (name) matrix_.name = *name;
    } else if (e.key == "description") {
      if (std::optional<std::string> text = ReadScalar(e, "a string")) matrix_.description = *text;
    } else if (e.key == "repeats") {
      constexpr std::string_view kExpected = "an integer from 1 to 1000";
      if (std::optional<std::string> text = ReadScalar(e, kExpected)) {
        absl::StatusOr<uint64_t> n = ParseUint(*text);
        if (!n.ok() || *n < 1 || *n > kMaxRepeats) {
          errors_.Add(PosOf(e.value), absl::StrCat("key 'repeats': expected ", ToAbsl(kExpected),
                                                   ", got '", *text, "'"));
        } else {
          matrix_.repeats = static_cast<uint32_t>(*n);
        }
      }
    } else if (e.key == "job") {
      ReadSection(e, {Scope::kJob});
    } else if (e.key == "jobs") {
      ReadJobs(e);
    } else if (e.key == "matrix") {
      matrix_pos_ = PosOf(e.key_node);
      ReadSection(e, {Scope::kJob, Scope::kTarget});
    } else if (e.key == "target") {
      target_pos_ = PosOf(e.key_node);
      ReadSection(e, {Scope::kTarget});
    } else if (e.key == "device") {
      ReadDevice(e);
    } else if (const OptionDef* def = FindOption(e.key)) {
      ReportMisplaced(e, *def);
    } else if (const OptionDef* param = FindOption(absl::StrCat(ToAbsl(kNullBlkPrefix), e.key))) {
      ReportMisplaced(e, *param);
    } else {
      errors_.Add(PosOf(e.key_node),
                  absl::StrCat("unknown key '", e.key, "'", DidYouMean(e.key, kTopLevelKeys)));
    }
  }
}

void Reader::ReadSection(const Entry& e, std::initializer_list<Scope> scopes) {
  if (e.value.IsNull()) return;  // "matrix:" with nothing under it: no axes
  if (!e.value.IsMap()) {
    errors_.Add(PosOf(e.value), absl::StrCat("key '", e.key, "': expected a map of keys, got ",
                                             ToAbsl(Kind(e.value))));
    return;
  }
  for (const Entry& option : Entries(e.value, absl::StrCat("in ", e.key, ":"))) {
    ReadOption(option, e.key, scopes);
  }
}

void Reader::ReportMisplaced(const Entry& e, const OptionDef& def) {
  std::string_view where;
  switch (def.scope) {
    case Scope::kJob:
      where = "is a job option; put it under job: or matrix:";
      break;
    case Scope::kTarget:
      where = "selects where cells run; put it under target: or matrix:";
      break;
    case Scope::kNullBlk:
      where = "is a null_blk parameter; put it under device: null_blk:";
      break;
  }
  errors_.Add(PosOf(e.key_node), absl::StrCat("key '", e.key, "' ", ToAbsl(where)));
}

void Reader::ReadOption(const Entry& e, std::string_view section,
                        std::initializer_list<Scope> scopes) {
  const bool in_device = section == "device: null_blk";
  const std::string name = in_device ? absl::StrCat(ToAbsl(kNullBlkPrefix), e.key) : e.key;
  const OptionDef* def = FindOption(name);
  if (def == nullptr && !in_device) {
    if (const OptionDef* param = FindOption(absl::StrCat(ToAbsl(kNullBlkPrefix), e.key))) {
      ReportMisplaced(e, *param);
      return;
    }
  }
  if (def == nullptr) {
    std::vector<std::string_view> candidates;
    for (Scope scope : scopes) {
      for (std::string_view n : OptionNames(scope)) {
        if (in_device) n.remove_prefix(kNullBlkPrefix.size());
        candidates.push_back(n);
      }
    }
    errors_.Add(PosOf(e.key_node),
                absl::StrCat("unknown key '", e.key, "'", DidYouMean(e.key, candidates)));
    return;
  }
  if (std::find(scopes.begin(), scopes.end(), def->scope) == scopes.end()) {
    ReportMisplaced(e, *def);
    return;
  }

  Binding b{
      name, def, std::string(section), PosOf(e.key_node), {}, /*is_axis=*/section == "matrix"};
  if (e.value.IsSequence()) {
    b.is_axis = true;
    for (const yaml::Node& item : e.value.items()) {
      if (item.IsScalar()) {
        b.values.push_back({item.Scalar(), PosOf(item)});
        continue;
      }
      errors_.Add(item.IsNull() ? PosOf(e.value) : PosOf(item),
                  absl::StrCat("key '", name, "': expected ", ToAbsl(def->expected),
                               " in the list, got ", ToAbsl(Kind(item))));
      b.valid = false;
    }
    if (e.value.size() == 0) {
      errors_.Add(PosOf(e.value),
                  absl::StrCat("key '", name, "': empty axis (a list needs at least one value)"));
      b.valid = false;
    }
  } else if (e.value.IsScalar()) {
    b.values.push_back({e.value.Scalar(), PosOf(e.value)});
  } else {
    errors_.Add(ValuePos(e.key_node, e.value),
                absl::StrCat("key '", name, "': expected ", ToAbsl(def->expected), ", got ",
                             ToAbsl(Kind(e.value))));
    b.valid = false;
  }
  bindings_.push_back(std::move(b));
}

// jobs: {NAME: {option: value, ..., group: G}, ...} — fio's sections, run concurrently.
void Reader::ReadJobs(const Entry& e) {
  if (e.value.IsNull()) return;
  if (!e.value.IsMap()) {
    errors_.Add(PosOf(e.value),
                absl::StrCat("key 'jobs': expected a map of named jobs like {reader: {rw: ",
                             "randread}, writer: {rw: write}}, got ", ToAbsl(Kind(e.value))));
    return;
  }
  for (const Entry& j : Entries(e.value, "in jobs: (job names must be unique)")) {
    if (named_jobs_.size() == kMaxNamedJobs) {
      errors_.Add(PosOf(j.key_node),
                  absl::StrCat("key 'jobs': more than ", kMaxNamedJobs, " named jobs"));
      return;
    }
    ReadNamedJob(j);
  }
}

void Reader::ReadNamedJob(const Entry& j) {
  NamedJobDef def{j.key, PosOf(j.key_node), "", {}, {}};
  if (j.key.empty() || !LabelProblem(j.key).empty()) {
    errors_.Add(
        PosOf(j.key_node),
        absl::StrCat("job name '", j.key, "': expected up to 128 printable characters",
                     j.key.empty() ? "" : absl::StrCat(", got ", ToAbsl(LabelProblem(j.key)))));
  }
  const std::string where = absl::StrCat("job '", j.key, "': ");
  if (!j.value.IsNull() && !j.value.IsMap()) {
    errors_.Add(PosOf(j.value),
                absl::StrCat(where, "expected a map of job options, got ", ToAbsl(Kind(j.value))));
    return;
  }
  if (j.value.IsMap()) {
    for (const Entry& o : Entries(j.value, absl::StrCat("in job '", j.key, "'"))) {
      if (o.key == "group") {
        if (std::optional<std::string> g = ReadScalar(o, "a cgroup layout group name")) {
          def.group = *g;
          def.group_pos = PosOf(o.value);
        }
        continue;
      }
      const OptionDef* option = FindOption(o.key);
      if (option == nullptr) {
        std::vector<std::string_view> candidates = {"group"};
        for (std::string_view n : OptionNames(Scope::kJob)) {
          if (IsPerJobOption(*FindOption(n))) candidates.push_back(n);
        }
        errors_.Add(PosOf(o.key_node), absl::StrCat(where, "unknown key '", o.key, "'",
                                                    DidYouMean(o.key, candidates)));
        continue;
      }
      if (!IsPerJobOption(*option)) {
        errors_.Add(PosOf(o.key_node),
                    absl::StrCat(where, "key '", o.key,
                                 "' is the cell's, not a job's; put it under job: or matrix:"));
        continue;
      }
      if (!o.value.IsScalar()) {
        errors_.Add(ValuePos(o.key_node, o.value),
                    absl::StrCat(where, "key '", o.key, "': expected ", ToAbsl(option->expected),
                                 ", got ", ToAbsl(Kind(o.value)),
                                 o.value.IsSequence() ? " (axes go under matrix:)" : ""));
        continue;
      }
      const auto same = std::find_if(def.options.begin(), def.options.end(), [&](const Binding& b) {
        return b.def->canonical == option->canonical;
      });
      if (same != def.options.end()) {
        errors_.Add(PosOf(o.key_node),
                    absl::StrCat(where, "key '", o.key, "' sets the same option as '", same->key,
                                 "' (line ", same->key_pos.line, "); give only one of them"));
        continue;
      }
      Binding b{o.key,
                option,
                absl::StrCat("jobs: ", j.key),
                PosOf(o.key_node),
                {{o.value.Scalar(), PosOf(o.value)}},
                false};
      v1::CellSpec scratch = DefaultCell();
      if (!option->Apply(o.value.Scalar(), scratch)) {
        errors_.Add(PosOf(o.value),
                    absl::StrCat(where, "key '", o.key, "': expected ", ToAbsl(option->expected),
                                 ", got '", o.value.Scalar(), "'"));
        b.valid = false;
      }
      def.options.push_back(std::move(b));
    }
  }
  named_jobs_.push_back(std::move(def));
}

void Reader::ReadDevice(const Entry& e) {
  if (e.value.IsNull()) return;
  if (!e.value.IsMap()) {
    errors_.Add(PosOf(e.value),
                absl::StrCat("key 'device': expected a map like {null_blk: {...}}, got ",
                             ToAbsl(Kind(e.value))));
    return;
  }
  std::vector<std::string_view> families;
  for (const DeviceFamilyDef& f : DeviceFamilies()) families.push_back(f.name);
  for (const Entry& kind : Entries(e.value, "in device:")) {
    if (kind.key != "null_blk" && FindDeviceFamily(kind.key) != nullptr) {
      ReadModelParams(kind);
      continue;
    }
    if (kind.key != "null_blk") {
      std::vector<absl::string_view> names;
      names.reserve(families.size());
      for (std::string_view f : families) names.push_back(ToAbsl(f));
      errors_.Add(PosOf(kind.key_node),
                  absl::StrCat("unknown device '", kind.key, "'", DidYouMean(kind.key, families),
                               "; devices with parameters: ", absl::StrJoin(names, ", ")));
      continue;
    }
    if (kind.value.IsNull()) continue;
    if (!kind.value.IsMap()) {
      errors_.Add(PosOf(kind.value),
                  absl::StrCat("key 'null_blk': expected a map of null_blk parameters, got ",
                               ToAbsl(Kind(kind.value))));
      continue;
    }
    for (const Entry& param : Entries(kind.value, "in null_blk:")) {
      ReadOption(param, "device: null_blk", {Scope::kNullBlk});
    }
  }
}

// Parameters of the engine's hdd/ssd/optane models and its simulated host (engine:):
// scalars only, checked against the tables the engine builds them from
// (common/sim_vocabulary.h), so the two never disagree.
void Reader::ReadModelParams(const Entry& kind) {
  if (kind.value.IsNull()) return;
  if (!kind.value.IsMap()) {
    errors_.Add(PosOf(kind.value),
                absl::StrCat("key '", kind.key, "': expected a map of ", kind.key,
                             " model parameters, got ", ToAbsl(Kind(kind.value))));
    return;
  }
  for (const Entry& param : Entries(kind.value, "in device:")) {
    if (!param.value.IsScalar()) {
      errors_.Add(PosOf(param.value),
                  absl::StrCat("key '", kind.key, ".", param.key,
                               "': expected a single value (model parameters are not axes)"));
      continue;
    }
    const std::string value = param.value.Scalar();
    if (std::string problem = DeviceParamProblem(kind.key, param.key, value); !problem.empty()) {
      errors_.Add(PosOf(param.key_node), std::move(problem));
      continue;
    }
    model_params_[absl::StrCat(kind.key, ".", param.key)] = value;
  }
}

absl::StatusOr<Matrix> ParseDocument(const yaml::Node& root, const ParseOptions& options,
                                     ErrorList& errors) {
  if (root.IsNull()) {
    errors.Add(Position{}, "the file is empty; a matrix needs at least name: and target:");
    return errors.ToStatus();
  }
  Reader reader(errors);
  reader.ReadDocument(root);
  if (!root.IsMap()) return errors.ToStatus();

  std::vector<std::string_view> broken;
  if (!reader.has_name()) errors.Add(Position{}, "missing required key 'name'");
  std::vector<Binding>& bindings = reader.bindings();
  const bool has_class = std::any_of(bindings.begin(), bindings.end(), [](const Binding& b) {
    return b.def->canonical == "device_class";
  });
  if (!has_class) {
    broken.emplace_back("device_class");
    if (reader.target_pos()) {
      errors.Add(*reader.target_pos(), "key 'target': missing required key 'device_class'");
    } else {
      errors.Add(Position{},
                 "missing required key 'target' (with device_class, e.g. "
                 "target: {device_class: null_blk})");
    }
  }
  RemoveConflicts(bindings, errors);
  v1::CellSpec base = CheckValues(bindings, errors);
  // The model parameters already in every cell's checks (engine.devices with the cell's
  // scheduler); applied again below, over the axes, as they always were.
  for (const auto& [key, value] : reader.model_params())
    (*base.mutable_device_params())[key] = value;
  Expansion expansion = ExpandCells(bindings, reader.named_jobs(), base, broken,
                                    reader.matrix_pos().value_or(Position{}), errors);
  if (!errors.empty()) return errors.ToStatus();
  WarnPatchesOutsideTheirScheduler(bindings, expansion.cells, errors);

  Matrix matrix = std::move(reader.matrix());
  matrix.warnings = errors.Warnings();
  matrix.axes = std::move(expansion.axes);
  matrix.cells = std::move(expansion.cells);
  for (v1::CellSpec& cell : matrix.cells) {
    for (const auto& [key, value] : reader.model_params()) {
      (*cell.mutable_device_params())[key] = value;
    }
  }
  AttachMachineFiles(bindings, options.read_machine_file, matrix, errors);
  if (!errors.empty()) return errors.ToStatus();
  return matrix;
}

}  // namespace

absl::StatusOr<Matrix> ParseMatrix(std::string_view text, std::string_view file_name,
                                   const ParseOptions& options) {
  if (text.size() > kMaxFileBytes) {  // e.g. sent over gRPC, not read by ParseMatrixFile
    return absl::InvalidArgumentError(absl::StrCat("matrix '", ToAbsl(file_name), "' is ",
                                                   text.size(), " bytes; at most ", kMaxFileBytes,
                                                   " are accepted"));
  }
  // A .fio job file given where a matrix belongs: say what to do instead of YAML errors.
  if (int line = 0; LooksLikeFioJobFile(text, &line)) {
    const absl::string_view name = file_name.empty() ? "<matrix>" : ToAbsl(file_name);
    return absl::InvalidArgumentError(
        absl::StrCat(name, ":", line,
                     ":1: this looks like a fio job file, not a matrix; "
                     "convert it with 'blkbench import ",
                     name, "'"));
  }
  ErrorList errors(file_name.empty() ? std::string("<matrix>") : std::string(file_name));
  // Bounded in size, depth, nodes and time (common/yaml/yaml.h): a matrix arrives from
  // any submitter, so no text may make this allocate or run without bound.
  const yaml::ParseResult doc = yaml::Parse(text, yaml::Limits{.max_bytes = kMaxFileBytes});
  if (!doc.ok()) {
    errors.Add(PosOf(doc.error->mark), doc.error->message);
    return errors.ToStatus();
  }
  absl::StatusOr<Matrix> matrix = ParseDocument(doc.root, options, errors);
  if (matrix.ok()) matrix->file_name = std::string(file_name);
  return matrix;
}

absl::StatusOr<std::string> ReadMatrixFile(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (file == nullptr) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("matrix file '", path, "' does not exist"));
    }
    return absl::ErrnoToStatus(err, absl::StrCat("cannot open matrix file '", path, "'"));
  }
  std::string text;
  char buffer[8192];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxFileBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("matrix file '", path, "' is larger than ", kMaxFileBytes, " bytes"));
    }
  }
  if (std::ferror(file.get())) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot read matrix file '", path, "'"));
  }
  return text;
}

absl::StatusOr<Matrix> ParseMatrixFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadMatrixFile(path);
  if (!text.ok()) return text.status();
  return ParseMatrix(*text, path, ParseOptions{.read_machine_file = &ReadLocalMachineFile});
}

}  // namespace blkbench::workloads

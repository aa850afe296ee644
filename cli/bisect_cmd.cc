// `blkbench bisect`: flags, the kernels (a list, or git revisions and a build hook), each
// step run on the engine or in a guest and kept in --db, and the outcome rendered.
#include "cli/bisect_cmd.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/bisect.h"
#include "cli/command_registry.h"
#include "cli/local_matrix.h"
#include "cli/run_cmd.h"
#include "cli/run_vm.h"
#include "cli/sim.h"
#include "common/cell_label.h"
#include "common/sim_vocabulary.h"
#include "common/vm/files.h"
#include "common/vm/process.h"
#include "controller/gate/gate_metrics.h"
#include "controller/store/store.h"
#include "controller/store/store_factory.h"
#include "google/protobuf/util/message_differencer.h"
#include "workloads/job_options.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

constexpr char kWho[] = "blkbench bisect: ";

bool IsSim(const std::string& kernel) { return kernel.starts_with(kSimPrefix); }

// The kernels of --kernels, or the revisions --git gives (good first, bad last), as the
// values steps are named by; with --git, the hook turns each into a kernel spec later.
absl::StatusOr<std::vector<std::string>> Kernels(const Args& a) {
  if (a.flags.count("kernels")) {
    std::vector<std::string> out;
    for (absl::string_view k : absl::StrSplit(a.flags.at("kernels"), ',')) {
      out.emplace_back(absl::StripAsciiWhitespace(k));
    }
    return out;
  }
  const std::string dir = a.flags.at("git");
  const std::string good = a.flags.at("good"), bad = a.flags.at("bad");
  absl::StatusOr<std::string> list = vm::RunChecked(
      {"git", "-C", dir, "rev-list", "--reverse", "--ancestry-path", good + ".." + bad});
  if (!list.ok()) return list.status();
  absl::StatusOr<std::string> first = vm::RunChecked({"git", "-C", dir, "rev-parse", good});
  if (!first.ok()) return first.status();
  std::vector<std::string> out = {std::string(absl::StripAsciiWhitespace(*first))};
  for (absl::string_view rev : absl::StrSplit(*list, '\n', absl::SkipWhitespace())) {
    out.emplace_back(absl::StripAsciiWhitespace(rev));
  }
  for (std::string& rev : out) rev = rev.substr(0, 12);
  return out;
}

// Why `kernels` cannot be bisected with these flags and matrix, or "".
std::string KernelProblem(const Args& a, const std::vector<std::string>& kernels) {
  if (kernels.size() < 2) {
    return "--kernels: expected at least two kernels, K1,...,Kn (the first good, the last bad)";
  }
  std::set<std::string> seen;
  size_t sim = 0;
  for (const std::string& k : kernels) {
    if (k.empty()) return "--kernels: an empty kernel between commas";
    if (!seen.insert(k).second) return absl::StrCat("--kernels: '", k, "' is listed twice");
    if (IsSim(k)) {
      if (absl::StatusOr<SimKernel> s = ParseSimKernel(k); !s.ok()) {
        return absl::StrCat("--kernels: ", s.status().message());
      }
      ++sim;
    }
  }
  if (sim != 0 && sim != kernels.size()) {
    return "--kernels: either every kernel is a sim: kernel (the engine) or none is (guests)";
  }
  const bool guests = sim == 0;
  if (guests && a.All("vm").empty()) {
    return "kernels that are not sim: run in qemu guests: give the device with --vm KIND "
           "(e.g. --vm null_blk)";
  }
  if (!guests && !a.All("vm").empty()) return "--vm: sim: kernels run on the engine, not in guests";
  if (guests && !a.flags.count("git")) {
    // Each spec must parse as `blkbench run --kernel` takes it (the image readable).
    RunVmFlags flags{.vms = a.All("vm"), .kernels = kernels, .vcpus = "", .memory = ""};
    if (auto hosts = VmHostsFromFlags(flags); !hosts.ok())
      return std::string(hosts.status().message());
  }
  return "";
}

// Cells with kernel axis `value` and, on the engine, target.kernel `sim` (in guests the
// guest's kernel is the only one, so the cell takes any). Named so a resumed bisect finds
// its steps: "<matrix name> @ <value>".
workloads::Matrix StepMatrix(const workloads::Matrix& m, const std::string& value,
                             const std::string& kernel) {
  workloads::Matrix out = m;
  out.name = absl::StrCat(m.name, " @ ", value);
  for (v1::CellSpec& cell : out.cells) {
    if (IsSim(kernel)) {
      workloads::FindOption(kBisectAxis)->Apply(kernel, cell);
    } else {
      cell.mutable_target()->clear_kernel();
    }
  }
  return out;
}

// Results as Bisect takes them: every cell with kBisectAxis = value.
void TagKernel(const std::string& value, v1::GetResultsResponse& r) {
  auto tag = [&value](v1::CellSpec& cell) {
    v1::CellSpec tagged = cell;
    tagged.clear_axes();
    v1::AxisValue* a = tagged.add_axes();
    a->set_key(kBisectAxis);
    a->set_value(value);
    for (const v1::AxisValue& x : cell.axes()) *tagged.add_axes() = x;
    cell = std::move(tagged);
  };
  for (v1::CellSpec& c : *r.mutable_experiment()->mutable_cells()) tag(c);
  for (v1::ResultRow& row : *r.mutable_rows()) tag(*row.mutable_cell());
}

bool SameCells(const v1::Experiment& stored, const workloads::Matrix& m) {
  if (stored.cells_size() != static_cast<int>(m.cells.size())) return false;
  for (size_t i = 0; i < m.cells.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(stored.cells(static_cast<int>(i)),
                                                            m.cells[i])) {
      return false;
    }
  }
  return true;
}

class Steps {
 public:
  Steps(const Args& a, std::vector<std::string> kernels, std::ostream& err)
      : a_(a), kernels_(std::move(kernels)), err_(err), db_(a.Get("db", kDefaultRunDb)) {}

  // The done experiments already in --db per step name, oldest first.
  absl::Status LoadStored() {
    if (access(db_.c_str(), F_OK) != 0 && !IsPostgresUri(db_)) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<Store>> store = OpenStore(db_);
    if (!store.ok()) return store.status();
    absl::StatusOr<std::vector<v1::Experiment>> list = (*store)->ListExperiments(0);
    if (!list.ok()) return list.status();
    const std::string prefix = absl::StrCat(a_.matrix->name, " @ ");
    std::reverse(list->begin(), list->end());  // oldest first: rounds in order
    for (const v1::Experiment& listed : *list) {
      if (!absl::StartsWith(listed.name(), prefix) || listed.state() != v1::EXPERIMENT_DONE) {
        continue;
      }
      absl::StatusOr<v1::Experiment> e = (*store)->GetExperiment(listed.id(), true);
      if (!e.ok()) return e.status();
      stored_[listed.name()].push_back(*std::move(e));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<v1::GetResultsResponse> Measure(size_t index, int round) {
    const std::string& value = kernels_[index];
    std::string kernel = value;
    if (a_.flags.count("git")) {
      absl::StatusOr<std::string> built = Build(value);
      if (!built.ok()) return built.status();
      kernel = *built;
    }
    const workloads::Matrix step = StepMatrix(*a_.matrix, value, kernel);
    const std::vector<v1::Experiment>& done = stored_[step.name];
    int matching = 0;
    for (const v1::Experiment& e : done) {
      if (!SameCells(e, step) || matching++ != round) continue;
      err_ << kWho << value << ": round " << round + 1 << " is experiment " << e.id() << " in "
           << db_ << " (reused)\n";
      v1::GetResultsResponse r = ResultsOf(e);
      TagKernel(value, r);
      return r;
    }
    err_ << kWho << value << ": round " << round + 1 << ", " << step.cells.size() << " cell(s) x "
         << step.repeats << " repeat(s)" << (IsSim(kernel) ? " on the engine" : " in a guest")
         << "\n";
    v1::GetResultsResponse results;
    std::ostringstream table;  // the step's own results table: the bisect prints its own
    auto keep = [&results](const v1::GetResultsResponse& r) { results = r; };
    const auto matrix = std::make_shared<const workloads::Matrix>(step);
    const bool quiet = a_.flags.count("quiet") > 0;
    int rc;
    const SessionOptions session = {.path = a_.positional[1],
                                    .db_path = db_,
                                    .quiet = quiet,
                                    .matrix = matrix,
                                    .on_results = keep};
    if (IsSim(kernel)) {
      rc = RunSim(session, table, err_);
    } else {
      rc = RunOnDevices({.session = session,
                         .vm = {.vms = a_.All("vm"),
                                .kernels = {kernel},
                                .vcpus = a_.Get("vcpus", ""),
                                .memory = a_.Get("memory", "")},
                         .state_dir = a_.Get("state-dir", kDefaultRunStateDir)},
                        table, err_);
    }
    if (rc != 0) {
      return absl::AbortedError(absl::StrCat("the runs on ", value, " did not all succeed"));
    }
    TagKernel(value, results);
    return results;
  }

 private:
  // The kernel spec the build hook prints (its last line on stdout) for a revision.
  absl::StatusOr<std::string> Build(const std::string& rev) {
    if (auto it = built_.find(rev); it != built_.end()) return it->second;
    absl::StatusOr<std::string> dir = vm::MakeTempDir("/tmp", "blkbench-bisect-");
    if (!dir.ok()) return dir.status();
    const std::string out_path = *dir + "/stdout";
    vm::RunOptions run;
    run.timeout = absl::Hours(6);
    run.stdout_path = out_path;
    run.cwd = a_.flags.at("git");
    err_ << kWho << rev << ": building with " << a_.flags.at("build") << "\n";
    absl::StatusOr<vm::ProcessResult> r = vm::RunProcess({a_.flags.at("build"), rev}, run);
    std::ifstream in(out_path);
    const std::string printed((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    unlink(out_path.c_str());
    rmdir(dir->c_str());
    if (!r.ok()) return r.status();
    if (!r->ok()) {
      return absl::AbortedError(absl::StrCat("build hook ", a_.flags.at("build"), " ", rev, ": ",
                                             vm::DescribeWaitStatus(r->status), ": ", r->output));
    }
    std::vector<std::string> lines = absl::StrSplit(printed, '\n', absl::SkipWhitespace());
    if (lines.empty()) {
      return absl::AbortedError(absl::StrCat("build hook ", a_.flags.at("build"), " ", rev,
                                             " printed no kernel (its last line on stdout: "
                                             "sim:..., deb:... or PATH/bzImage[:MODULES_DIR])"));
    }
    std::string kernel(absl::StripAsciiWhitespace(lines.back()));
    if (!IsSim(kernel) && a_.All("vm").empty()) {
      return absl::AbortedError(absl::StrCat("build hook: ", rev, " built ", kernel,
                                             ", which runs in a guest: give --vm KIND"));
    }
    if (IsSim(kernel) && !ParseSimKernel(kernel).ok()) {
      return absl::AbortedError(absl::StrCat("build hook: ", rev, ": ", kernel,
                                             " is not a sim: kernel the engine knows"));
    }
    err_ << kWho << rev << ": built " << kernel << "\n";
    built_[rev] = kernel;
    return kernel;
  }

  const Args& a_;
  std::vector<std::string> kernels_;
  std::ostream& err_;
  std::string db_;
  std::map<std::string, std::vector<v1::Experiment>> stored_;
  std::map<std::string, std::string> built_;
};

bool WriteTo(const std::string& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path);
  f << text;
  if (f.flush()) return true;
  err << kWho << "cannot write '" << path << "'\n";
  return false;
}

}  // namespace

int CheckBisect(Args& a, std::ostream& err) {
  const bool git = a.flags.count("git") > 0;
  if (git == (a.flags.count("kernels") > 0)) {
    err << kWho
        << "give either --kernels K1,...,Kn or --git DIR --good REV --bad REV --build HOOK\n";
    return kBisectCouldNotRun;
  }
  if (git) {
    for (const char* f : {"good", "bad", "build"}) {
      if (!a.flags.count(f)) {
        err << kWho << "--git needs --" << f << "\n";
        return kBisectCouldNotRun;
      }
    }
  }
  if (absl::StatusOr<gate::MetricDef> m = gate::ParseMetric(a.Get("metric", "iops")); !m.ok()) {
    err << kWho << "--metric: " << m.status().message() << "\n";
    return kBisectCouldNotRun;
  }
  int rounds = 0;
  if (!absl::SimpleAtoi(a.Get("max-rounds", "3"), &rounds) || rounds < 1 || rounds > 10) {
    err << kWho << "--max-rounds: expected 1 to 10\n";
    return kBisectCouldNotRun;
  }
  const std::string format = a.Get("format", "text");
  if (format != "text" && format != "markdown" && format != "json") {
    err << kWho << "--format: expected text, markdown or json\n";
    return kBisectCouldNotRun;
  }
  absl::StatusOr<std::string> text = workloads::ReadMatrixFile(a.positional[1]);
  if (!text.ok()) {
    err << text.status().message() << "\n";
    return kBisectCouldNotRun;
  }
  absl::StatusOr<workloads::Matrix> m = ParseLocalMatrix(*text, a.positional[1]);
  if (!m.ok()) {
    err << m.status().message() << "\n";
    return kBisectCouldNotRun;
  }
  if (std::find(m->axes.begin(), m->axes.end(), kBisectAxis) != m->axes.end()) {
    err << a.positional[1] << ": the matrix has a kernel axis; bisect sets the kernel of every "
        << "step itself: remove it\n";
    return kBisectCouldNotRun;
  }
  a.matrix_text = std::move(*text);
  a.matrix = std::make_shared<const workloads::Matrix>(std::move(*m));
  if (!git) {
    absl::StatusOr<std::vector<std::string>> kernels = Kernels(a);
    const std::string problem = KernelProblem(a, *kernels);
    if (!problem.empty()) {
      err << kWho << problem << "\n";
      return kBisectCouldNotRun;
    }
    bool sim = IsSim(kernels->front());
    for (const v1::CellSpec& cell : a.matrix->cells) {
      if (sim != cell.target().device_class().starts_with(kSimPrefix)) {
        err << a.positional[1] << ": cell '" << CellLabel(cell) << "' targets "
            << cell.target().device_class() << ", "
            << (sim ? "but sim: kernels run on the engine's sim: devices"
                    : "but guests offer the --vm devices, not the engine's")
            << "\n";
        return kBisectCouldNotRun;
      }
    }
  }
  return 0;
}

int CmdBisect(const Args& a, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<std::string>> kernels = Kernels(a);
  if (!kernels.ok()) {
    err << kWho << kernels.status().message() << "\n";
    return kBisectCouldNotRun;
  }
  if (a.flags.count("git")) {
    if (kernels->size() < 2) {
      err << kWho << "--good " << a.flags.at("good") << " is not an ancestor of --bad "
          << a.flags.at("bad") << " in " << a.flags.at("git") << "\n";
      return kBisectCouldNotRun;
    }
    err << kWho << kernels->size() << " revisions from " << kernels->front() << " (good) to "
        << kernels->back() << " (bad)\n";
  }
  Steps steps(a, *kernels, err);
  if (absl::Status s = steps.LoadStored(); !s.ok()) {
    err << kWho << s.message() << "\n";
    return kBisectCouldNotRun;
  }
  BisectOptions options;
  options.kernels = *kernels;
  options.metric = a.Get("metric", "iops");
  (void)absl::SimpleAtoi(a.Get("max-rounds", "3"), &options.max_rounds);  // CheckBisect
  absl::StatusOr<BisectOutcome> outcome =
      Bisect(options, [&steps](size_t i, int round) { return steps.Measure(i, round); });
  if (!outcome.ok()) {
    err << kWho << outcome.status().message() << "\n";
    return kBisectCouldNotRun;
  }
  const std::string format = a.Get("format", "text");
  out << (format == "json"       ? RenderBisectJson(*outcome)
          : format == "markdown" ? RenderBisectMarkdown(*outcome)
                                 : RenderBisectText(*outcome));
  if (a.flags.count("markdown") &&
      !WriteTo(a.flags.at("markdown"), RenderBisectMarkdown(*outcome), err)) {
    return kBisectCouldNotRun;
  }
  if (a.flags.count("json") && !WriteTo(a.flags.at("json"), RenderBisectJson(*outcome), err)) {
    return kBisectCouldNotRun;
  }
  return BisectExitStatus(*outcome);
}

CommandSpec BisectCommand() {
  return {
      .name = "bisect",
      .args = {"FILE"},
      .summary = "find the first kernel of a list where the matrix's metric regresses",
      .description =
          "Given kernels in order, the first good and the last bad (--kernels, or --git with "
          "--good, --bad and a --build hook that prints the kernel a revision builds), runs "
          "the matrix on both ends, then on midpoints, and classifies each with the gate's "
          "statistics against both ends: like good, like bad, or undecided (another round of "
          "runs, up to --max-rounds, then inconclusive). sim: kernels run on the engine; deb: "
          "packages and PATH/bzImage[:MODULES_DIR] in qemu guests with the --vm devices. "
          "Every step is an experiment in --db; a stopped bisect reuses the steps it finished. "
          "Exit 0 first bad kernel found, 1 no regression between the ends, 2 inconclusive, 3 "
          "could not run (docs/bisect.md).",
      .flags =
          {{"kernels", "K1,...,Kn", "the kernels in order: sim:..., deb:GLOB or PATH/bzImage"},
           {"git", "DIR", "bisect the revisions of this git tree from --good to --bad"},
           {"good", "REV", "with --git: the last revision known good"},
           {"bad", "REV", "with --git: the first revision known bad"},
           {"build", "HOOK", "with --git: run as HOOK REV in DIR; its last line is the kernel"},
           {"metric", "METRIC", "the metric bisected (default iops; bw, mean_lat, p99, ...)"},
           {"max-rounds", "N", "rounds of runs per kernel before it is inconclusive (default 3)"},
           {"vm", "KIND[:SPEC]", "a guest device, as blkbench run --vm; repeat for more"},
           {"vcpus", "N", "each guest's vCPUs (default 2)"},
           {"memory", "SIZE", "each guest's memory (default 2g)"},
           {"db", "FILE", "the store of the steps (default ./blkbench.db; or a postgresql:// URI)"},
           {"state-dir", "DIR", "journal of original settings (default /var/lib/blkbench-run)"},
           {"format", "FORMAT", "output format", {"text", "markdown", "json"}},
           {"markdown", "FILE", "also write the summary as Markdown"},
           {"json", "FILE", "also write the summary as JSON"},
           {"quiet", "", "no per-run progress lines", {}, 'q'}},
      .check = CheckBisect,
      .run = [](const Args& a, Client*, std::ostream& out,
                std::ostream& err) { return CmdBisect(a, out, err); },
      .usage_exit = kBisectCouldNotRun};
}

}  // namespace blkbench

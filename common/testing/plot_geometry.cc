// MeasurePlots: see plot_geometry.h. The script writes its findings as lines into a
// <pre id="plot-check">, which `chromium --dump-dom` prints with the rest of the page.
#include "common/testing/plot_geometry.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/testing/command.h"
#include "gtest/gtest.h"

namespace blkbench::testing {
namespace {

// Runs at the end of the page's body, after layout.
constexpr char kScript[] = R"JS(
(function () {
  const lines = [], problems = [];
  const vw = document.documentElement.clientWidth;
  const tol = 1.0;
  const nice = v => {
    if (!(v > 0)) return false;
    const f = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
    return [1, 2, 5, 10].some(m => Math.abs(f - m) < 1e-6 * m);
  };
  const inside = (r, a) => r.left >= a.left - tol && r.right <= a.right + tol &&
                           r.top >= a.top - tol && r.bottom <= a.bottom + tol;
  const fmt = r => `[${r.left.toFixed(1)},${r.top.toFixed(1)} ${r.width.toFixed(1)}x${r.height.toFixed(1)}]`;
  let ticks = 0, marks = 0, series = 0, logAxes = 0, minShare = 1;
  const plots = [...document.querySelectorAll('svg.plot')];
  for (const svg of plots) {
    const id = svg.getAttribute('data-plot') || '?';
    svg.scrollIntoView({block: 'center'});
    const sr = svg.getBoundingClientRect();
    // The row this plot sits in (plots of one .plots grid at the same height).
    const grid = svg.closest('.plots');
    let left = sr.left, right = sr.right;
    if (grid) {
      for (const o of grid.querySelectorAll('svg.plot')) {
        const r = o.getBoundingClientRect();
        if (Math.abs(r.top - sr.top) < 2 || Math.abs(r.bottom - sr.bottom) < 2 ||
            (r.top < sr.bottom && r.bottom > sr.top)) {
          left = Math.min(left, r.left); right = Math.max(right, r.right);
        }
      }
    }
    const share = (right - left) / vw;
    minShare = Math.min(minShare, share);
    if (share < 0.9) problems.push(`${id}: its row of plots is ${(100 * share).toFixed(1)} % of the window`);
    // Axes: round ticks, labels inside the svg and the page, log axes said to be log.
    for (const axis of svg.querySelectorAll('g.axis')) {
      const scale = axis.getAttribute('data-scale');
      const step = parseFloat(axis.getAttribute('data-step'));
      if (scale === 'linear' && !nice(step)) problems.push(`${id}: ${axis.dataset.axis} step ${step} is not 1, 2 or 5 x 10^k`);
      if (scale === 'log') {
        ++logAxes;
        const titles = [...svg.querySelectorAll('text.title')].map(t => t.textContent);
        if (!titles.some(t => /log scale/.test(t))) problems.push(`${id}: log ${axis.dataset.axis} axis not labelled as log (${titles.join(' | ')})`);
      }
      const seen = new Set();
      const boxes = [];
      for (const t of axis.querySelectorAll('text.tick')) {
        ++ticks;
        const r = t.getBoundingClientRect();
        boxes.push(r);
        const label = t.textContent;
        if (!inside(r, sr)) problems.push(`${id}: tick '${label}' ${fmt(r)} outside the svg ${fmt(sr)}`);
        if (r.left < -tol || r.right > vw + tol) problems.push(`${id}: tick '${label}' outside the page`);
        if (seen.has(label)) problems.push(`${id}: tick label '${label}' twice`);
        seen.add(label);
        if (scale === 'category') continue;
        const v = parseFloat(t.getAttribute('data-value'));
        if (scale === 'log' && !nice(v)) problems.push(`${id}: log tick ${v} is not 1, 2 or 5 x 10^k`);
        if (scale === 'linear' && Math.abs(v / step - Math.round(v / step)) > 1e-6)
          problems.push(`${id}: tick ${v} is not a multiple of its step ${step}`);
      }
      if (axis.dataset.axis === 'x') {
        boxes.sort((a, b) => a.left - b.left);
        for (let i = 1; i < boxes.length; ++i)
          if (boxes[i].left < boxes[i - 1].right - tol) problems.push(`${id}: x tick labels overlap`);
      }
    }
    // Everything drawn from data stays inside the plot area.
    const area = svg.querySelector('rect.area');
    if (!area) { problems.push(`${id}: no plot area`); continue; }
    const ar = area.getBoundingClientRect();
    for (const m of svg.querySelectorAll('.mark, .line')) {
      ++marks;
      const r = m.getBoundingClientRect();
      if (!inside(r, ar)) problems.push(`${id}: ${m.getAttribute('class')} of series ${m.dataset.series} ${fmt(r)} outside the plot area ${fmt(ar)}`);
    }
    // Every series visible: a marker of its own on top somewhere (or a legend saying it
    // equals another), or else a line that no other series draws the same way; and one
    // legend key per series.
    const ids = [...new Set([...svg.querySelectorAll('[data-series]')].map(e => e.dataset.series))];
    series += ids.length;
    const ys = [];
    for (const s of ids) {
      const points = [...svg.querySelectorAll(`.point[data-series="${s}"]`)];
      ys.push(points.filter(p => p.tagName !== 'rect').map(p => {
        const r = p.getBoundingClientRect();
        return r.top + r.height / 2 - ar.top;
      }));
      // Visible: a marker of its own on top somewhere; or a legend saying it equals
      // another series; or a line that no other line with the same dash hides (one
      // vertex at least 3 px away from it).
      const seenOnTop = points.some(p => {
        const r = p.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return hit && hit.closest('svg') === svg && hit.dataset.series === s;
      });
      if (seenOnTop) continue;
      const fig = svg.closest('figure');
      const key = fig && fig.querySelector(`.legend .key[data-series="${s}"]`);
      if (key && /same values as/.test(key.textContent)) continue;
      const line = svg.querySelector(`.line[data-series="${s}"]`);
      const vertices = l => (l.getAttribute('points') || '').trim().split(/\s+/).map(p => p.split(',').map(Number));
      const hides = o => {
        if ((o.getAttribute('stroke-dasharray') || '') !== (line.getAttribute('stroke-dasharray') || '')) return false;
        const a = vertices(line), b = vertices(o);
        return a.length === b.length && a.every((p, i) => Math.abs(p[0] - b[i][0]) < 3 && Math.abs(p[1] - b[i][1]) < 3);
      };
      const hider = line && [...svg.querySelectorAll('.line')].find(o => o.dataset.series !== s && hides(o));
      if (!line || hider)
        problems.push(`${id}: series ${s} is hidden` + (hider ? ` under series ${hider.dataset.series}` : ''));
    }
    if (/^(timeseries|device-)/.test(id)) lines.push(`points ${id} ${JSON.stringify(ys)}`);
    const fig = svg.closest('figure');
    const keys = fig ? fig.querySelectorAll('.legend .key') : [];
    if (keys.length > 0 && keys.length !== ids.length)
      problems.push(`${id}: ${keys.length} legend entries for ${ids.length} drawn series`);
  }
  lines.push(`plots ${plots.length}`, `ticks ${ticks}`, `marks ${marks}`, `series ${series}`,
             `log_axes ${logAxes}`, `min_row_share ${minShare}`);
  for (const p of problems) lines.push(`problem ${p}`);
  const pre = document.createElement('pre');
  pre.id = 'plot-check';
  pre.textContent = '\n' + lines.join('\n') + '\n';
  document.body.appendChild(pre);
})();
)JS";

std::string Unescape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}});
}

}  // namespace

bool HaveChromium() { return RunCommand("chromium --version >/dev/null 2>&1") == 0; }

absl::StatusOr<PlotGeometry> MeasurePlots(const std::string& html_path, int width,
                                          const std::string& scratch) {
  std::ifstream in(html_path);
  if (!in) return absl::NotFoundError(html_path);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t body = html.rfind("</body>");
  if (body == std::string::npos) return absl::InvalidArgumentError("no </body> in " + html_path);
  html.insert(body, absl::StrCat("<script>", kScript, "</script>"));
  const std::string page = scratch + "/measured.html";
  std::ofstream(page) << html;
  std::string dom;
  const int rc = RunCommand(absl::StrCat("chromium --headless --no-sandbox --disable-gpu "
                                         "--hide-scrollbars --user-data-dir=",
                                         scratch, "/chromium --window-size=", width,
                                         ",1000 --dump-dom file://", page, " 2>/dev/null"),
                            &dom);
  if (rc != 0) return absl::InternalError(absl::StrCat("chromium exited ", rc));
  const std::string open = "<pre id=\"plot-check\">";
  const size_t a = dom.find(open);
  const size_t b = a == std::string::npos ? a : dom.find("</pre>", a);
  if (b == std::string::npos) return absl::InternalError("the measuring script left no result");
  if (const char* shots = std::getenv("BLKBENCH_PLOT_SCREENSHOTS"); shots && *shots) {
    // For looking at: the page (not the instrumented copy) as a reader's window shows it.
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string base = absl::StrCat(shots, "/", test ? test->name() : "page");
    const std::string png = base + ".png";
    if (RunCommand(absl::StrCat("cp ", html_path, " ", base, ".html")) != 0) {
      return absl::InternalError("could not copy the page to " + base + ".html");
    }
    if (RunCommand(absl::StrCat("chromium --headless --no-sandbox --disable-gpu "
                                "--hide-scrollbars --user-data-dir=",
                                scratch, "/chromium --window-size=", width, ",5000 --screenshot=",
                                png, " file://", html_path, " >/dev/null 2>&1")) != 0) {
      return absl::InternalError("chromium could not take " + png);
    }
  }
  PlotGeometry g;
  for (absl::string_view line :
       absl::StrSplit(Unescape(dom.substr(a + open.size(), b - a - open.size())), '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (f.size() != 2) continue;
    double v = 0;
    if (f[0] == "problem") {
      g.problems.push_back(f[1]);
    } else if (f[0] == "points") {
      std::vector<std::string> p = absl::StrSplit(f[1], absl::MaxSplits(' ', 1));
      std::vector<std::vector<double>>& per_series = g.point_ys[p[0]];
      // [[y, y, ...], [...]]: numbers, commas and brackets only.
      for (absl::string_view s : absl::StrSplit(p.size() > 1 ? p[1] : "", "],")) {
        per_series.emplace_back();
        for (absl::string_view n : absl::StrSplit(s, ',')) {
          const std::string bare = absl::StrReplaceAll(n, {{"[", ""}, {"]", ""}});
          if (absl::SimpleAtod(bare, &v)) per_series.back().push_back(v);
        }
      }
    } else if (absl::SimpleAtod(f[1], &v)) {
      if (f[0] == "plots") g.plots = static_cast<int>(v);
      if (f[0] == "ticks") g.ticks = static_cast<int>(v);
      if (f[0] == "marks") g.marks = static_cast<int>(v);
      if (f[0] == "series") g.series = static_cast<int>(v);
      if (f[0] == "log_axes") g.log_axes = static_cast<int>(v);
      if (f[0] == "min_row_share") g.min_row_share = v;
    }
  }
  return g;
}

}  // namespace blkbench::testing

// Outlier flagging for the gate: which repeats of a cell side are set aside before the
// robust Welch test (robust_welch.h), by a stated MAD rule. Every flagged repeat is
// reported with its value and reason (CellVerdict::outliers), never silently dropped.
#ifndef BLKBENCH_CONTROLLER_GATE_OUTLIERS_H_
#define BLKBENCH_CONTROLLER_GATE_OUTLIERS_H_

#include <string>
#include <vector>

namespace blkbench::gate {

// The rule. On log values of one side, with m the side's median and m' the other side's:
//   flag x  when  |log x - m| > T  and  |log x - m'| > T,  T = kOutlierK * max(sigma_cell,
//   sigma_group)
// i.e. a repeat unlike the typical repeat of either side. Why both: when 3 of 5 repeats
// are slow, the side's median is itself slow and the two normal repeats look wild; they
// sit at the other side's median, so they are kept (and the side's large variance makes
// the cell inconclusive) instead of being dropped to manufacture a -30 % "regression".
// where sigma_cell = 1.4826 * the median absolute deviation of both sides' log values,
// each from its own side's median (a side's own MAD at n = 5 is the spread of its clean
// repeats once two are slow, and hid them), and sigma_group the median of
// sigma_side = 1.4826 * MAD of a side's log values
// of sigma_side over every side of the same kind (all baselines, or all candidates) of
// the cell's metric (see OutlierScale), so one cell's lucky tight repeats cannot make
// an ordinary repeat look wild. At most floor((n - 1) / 2) repeats of a side can be
// flagged (they are measured from the median); no side with fewer than 4 repeats is
// flagged (its MAD is meaningless).
//
// Why k = 6: 1.4826 MAD of 5 normal values averages ~0.8 sigma and the median over cells
// ~0.75 sigma, so the threshold is >= ~4.5 sigma around a median whose own sd is ~0.5
// sigma: an ordinary normal repeat is flagged ~1 in 10^4 times, a Student t3 repeat (sd
// scaled) ~1 in 500, while a 30 % slow repeat at 2 % CV sits ~18 sigma out. Flagging is
// symmetric, on both sides alike, so under "no change" it does not move the estimate.
inline constexpr double kOutlierK = 6.0;
inline constexpr int kOutlierMinRepeats = 4;

struct OutlierFlag {
  bool candidate = false;  // which side
  int index = 0;           // position in that side's samples
  double value = 0.0;      // the repeat's value
  double deviation = 0.0;  // x / side median - 1
  double threshold = 0.0;  // |log deviation| allowed, kOutlierK * scale
  std::string reason;      // "31.2% below the side median 1.02e+05; > 6 x 1.9% robust sd"
};

// 1.4826 * MAD of log values (0 when fewer than kOutlierMinRepeats or a value <= 0).
double RobustLogScale(const std::vector<double>& x);

// sigma_group: the median of the non-zero RobustLogScale over `sides` (0 if none).
double OutlierScale(const std::vector<const std::vector<double>*>& sides);

// The flagged repeats of side `x` (sorted by index), under the rule above with `other`
// the other side's repeats (empty: the own side's median only) and `group_scale` as
// sigma_group.
std::vector<OutlierFlag> FlagOutliers(const std::vector<double>& x,
                                      const std::vector<double>& other, bool candidate,
                                      double group_scale);

// `x` without the flagged indices.
std::vector<double> WithoutFlagged(const std::vector<double>& x,
                                   const std::vector<OutlierFlag>& flags);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_OUTLIERS_H_

// Location and spread of a handful of benchmark repeats: mean, median, quantiles,
// trimmed mean (LKP's n>>5 trim), MAD and coefficient of variation.
#ifndef BLKBENCH_CONTROLLER_GATE_ROBUST_H_
#define BLKBENCH_CONTROLLER_GATE_ROBUST_H_

#include <cstddef>
#include <vector>

namespace blkbench::gate {

// Why robust estimators: a benchmark repeat occasionally hits a cron job, a thermal
// throttle or a cold cache, producing one wild value among 5-10. The mean and standard
// deviation follow that value (breakdown point 0); the median and MAD ignore up to half
// of the sample (breakdown 50 %), and the Hodges-Lehmann shift (hodges_lehmann.h) keeps
// ~29 % breakdown with 95 % of the mean's efficiency on normal data. The gate reports
// medians as centres, and uses sd/mean only to describe noise (like LKP's %stddev).
//
// All functions take the sample by const reference and never modify it. On an empty
// sample every function returns NaN.

double Mean(const std::vector<double>& x);

// Sample standard deviation (n-1 denominator); 0 for a single value.
double StdDev(const std::vector<double>& x);

// Coefficient of variation, StdDev / |Mean|; NaN when the mean is 0.
double Cv(const std::vector<double>& x);

double Median(const std::vector<double>& x);

// Quantile q in [0, 1] with linear interpolation between order statistics
// (Hyndman & Fan type 7, R's and numpy's default).
double Quantile(const std::vector<double>& x, double q);

// Mean after dropping `trim_each_side` smallest and largest values. When that would
// drop everything, returns the median.
double TrimmedMean(const std::vector<double>& x, size_t trim_each_side);

// LKP's trim (lib/stats.rb): n >> 5 values from each end, i.e. none below 32 samples.
inline size_t LkpTrim(size_t n) { return n >> 5; }

// Median absolute deviation from the median, unscaled.
double Mad(const std::vector<double>& x);

// Multiply a MAD by this to estimate sigma for normal data (1 / Phi^-1(3/4)).
inline constexpr double kMadToSigma = 1.482602218505602;

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_ROBUST_H_

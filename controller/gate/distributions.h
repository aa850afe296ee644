// Null distributions the gate needs: the standard normal (CDF, quantile) and the exact
// distribution of the Mann-Whitney U statistic for small, tie-free samples.
#ifndef BLKBENCH_CONTROLLER_GATE_DISTRIBUTIONS_H_
#define BLKBENCH_CONTROLLER_GATE_DISTRIBUTIONS_H_

#include <vector>

namespace blkbench::gate {

// P(Z <= z) and P(Z > z) for a standard normal Z (via erfc, accurate in both tails).
double NormalCdf(double z);
double NormalUpperTail(double z);

// z such that NormalCdf(z) == p. REQUIRES: 0 < p < 1 (returns -inf / +inf at 0 / 1).
// Why bisection: it needs no coefficient tables, is accurate to ~1e-15 in 100 steps of
// erfc, and the gate calls it a few times per decision, never in an inner loop.
double NormalQuantile(double p);

// Exact null distribution of U = #{(i, j) : x_i > y_j} for |x| = m, |y| = n and no ties:
// element u is P(U = u), u = 0 .. m*n.
// Why this recurrence: the largest of the m+n values belongs to x with probability
// m/(m+n) and then beats all n y's, so P_{m,n}(u) = m/(m+n) P_{m-1,n}(u-n)
// + n/(m+n) P_{m,n-1}(u) (Mann & Whitney 1947). Working in probabilities, with only
// additions of non-negative terms, keeps full relative precision even in the far tail
// where counting arrangements would need C(m+n, m) > 2^64. Cost O(m * n * m * n):
// 6e6 steps at m = n = 50, which is why larger samples use the normal approximation.
std::vector<double> MannWhitneyNullPmf(int m, int n);

// Samples up to this size per side use the exact U distribution.
inline constexpr int kExactMaxPerSide = 50;

// Lower critical value of U for sizes m, n: the largest c with P(U <= c) <= tail, or -1
// when even P(U = 0) exceeds `tail` (samples too small for that tail). Exact up to
// kExactMaxPerSide per side; beyond, the normal approximation with continuity correction.
// If `achieved` is non-null it receives P(U <= c) (0 when c == -1; approximate beyond the
// exact range).
int MannWhitneyLowerCritical(int m, int n, double tail, double* achieved = nullptr);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_DISTRIBUTIONS_H_

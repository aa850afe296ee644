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

// Student's t with `df` degrees of freedom (df > 0, non-integer allowed; +inf gives the
// normal): P(T > t), and the t with P(T <= t) == p.
// Why the incomplete beta: P(|T| > t) = I_x(df/2, 1/2) with x = df / (df + t^2), and
// I_x(a, b) has a continued fraction (Lentz's method) that converges fast for
// x < (a + 1) / (a + b + 2), with the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) otherwise.
// Accurate to ~1e-13 relative; the quantile is found by bisection on the tail.
double StudentTUpperTail(double t, double df);
double StudentTQuantile(double p, double df);

// Regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1.
double RegularizedIncompleteBeta(double x, double a, double b);

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

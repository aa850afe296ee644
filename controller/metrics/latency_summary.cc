// SummaryFamily: exact-quantile summaries exposed through prometheus-cpp's Collectable.
#include "controller/metrics/latency_summary.h"

#include <utility>

namespace blkbench {

SummaryFamily::SummaryFamily(std::string name, std::string help, std::vector<double> quantiles)
    : name_(std::move(name)), help_(std::move(help)), quantiles_(std::move(quantiles)) {}

void SummaryFamily::Update(const prometheus::Labels& labels, const std::vector<double>& values,
                           uint64_t count, double sum) {
  absl::MutexLock lock(&mu_);
  Series& s = series_[labels];
  s.values = values;
  s.values.resize(quantiles_.size());
  s.count += count;
  s.sum += sum;
}

void SummaryFamily::Remove(const prometheus::Labels& labels) {
  absl::MutexLock lock(&mu_);
  series_.erase(labels);
}

size_t SummaryFamily::size() const {
  absl::MutexLock lock(&mu_);
  return series_.size();
}

std::vector<prometheus::MetricFamily> SummaryFamily::Collect() const {
  prometheus::MetricFamily family;
  family.name = name_;
  family.help = help_;
  family.type = prometheus::MetricType::Summary;
  absl::MutexLock lock(&mu_);
  for (const auto& [labels, s] : series_) {
    prometheus::ClientMetric m;
    for (const auto& [key, value] : labels) m.label.push_back({key, value});
    m.summary.sample_count = s.count;
    m.summary.sample_sum = s.sum;
    for (size_t i = 0; i < quantiles_.size(); ++i) {
      m.summary.quantile.push_back({quantiles_[i], s.values[i]});
    }
    family.metric.push_back(std::move(m));
  }
  return {std::move(family)};
}

}  // namespace blkbench

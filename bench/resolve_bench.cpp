// Times the resolver in-process: loading the compiled-in database, then each query of a fixed
// set, many times over. Prints medians and maxima and each against the 10 ms budget.
// Run through bench/run, never as part of the test suite. Usage: bench_resolve [RUNS] (200).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "manifest/load.hpp"
#include "resolve/resolver.hpp"

namespace {

using namespace cudaenv;
using Clock = std::chrono::steady_clock;

struct Query {
  const char* label;
  resolve::Target target;
  resolve::Request request;
};

std::optional<VersionSpec> spec(const char* text) { return VersionSpec::parse(text).value(); }
Version v(const char* text) { return *Version::parse(text); }

resolve::Target machine(const char* driver, std::vector<Version> gpus, const char* gcc = nullptr) {
  resolve::Target target;
  target.driver = v(driver);
  target.gpus = std::move(gpus);
  if (gcc != nullptr) target.gcc = v(gcc);
  return target;
}

resolve::Request frameworks(const char* torch, const char* tensorflow = nullptr,
                            const char* jax = nullptr) {
  resolve::Request request;
  request.torch = spec(torch);
  if (tensorflow != nullptr) request.tensorflow = spec(tensorflow);
  if (jax != nullptr) request.jax = spec(jax);
  return request;
}

resolve::Request cuda(const char* text) {
  resolve::Request request;
  request.cuda = spec(text);
  return request;
}

std::vector<Query> queries() {
  return {
      {"latest, no constraints", {}, {}},
      {"driver 535 + sm_86", machine("535.104.05", {v("8.6")}, "12.2.0"), {}},
      {"torch 2.8 on sm_61", machine("535.104.05", {v("6.1")}), frameworks("2.8")},
      {"torch latest + tensorflow latest", {}, frameworks("latest", "latest")},
      {"torch + tensorflow + jax, 8 GPUs", machine("580.95.05", std::vector<Version>(8, v("9.0"))),
       frameworks("latest", "latest", "latest")},
      {"impossible: driver 470 + CUDA 12 (suggestions)", machine("470.82.01", {}), cuda("12")},
      {"impossible: torch 2.4 + tensorflow 2.15 (suggestions)", {}, frameworks("2.4", "2.15")},
  };
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

template <typename Fn>
std::vector<double> time_runs(int runs, Fn&& fn) {
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    fn();
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return samples;
}

void report(const char* label, const std::vector<double>& samples) {
  const double med = median(samples);
  const double max = *std::max_element(samples.begin(), samples.end());
  std::printf("%-55s median %8.3f ms  max %8.3f ms  budget ratio %.3f\n", label, med, max,
              max / 10.0);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  const auto load =
      time_runs(runs, [] { (void)manifest::load_database(manifest::embedded_manifests()); });
  report("load the compiled-in database", load);
  const auto db = manifest::load_database(manifest::embedded_manifests()).value();
  size_t sink = 0;
  for (const auto& query : queries()) {
    const auto samples = time_runs(
        runs, [&] { sink += resolve::resolve(db, query.target, query.request).rejected.size(); });
    report(query.label, samples);
  }
  std::printf("(%zu rejections seen)\n", sink);
  return 0;
}

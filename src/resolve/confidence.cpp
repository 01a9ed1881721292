#include "resolve/confidence.hpp"

namespace cudaenv::resolve {

namespace {

void add_if_unconfirmed(std::vector<UnconfirmedFact>& facts, const manifest::Provenance& record,
                        std::string fact) {
  if (!record.unconfirmed()) return;
  facts.push_back(
      {std::move(fact), record.confidence, record.basis.empty() ? record.note : record.basis});
}

}  // namespace

std::vector<UnconfirmedFact> unconfirmed_facts(const manifest::Database& db,
                                               const Solution& solution,
                                               const std::vector<const FrameworkBuild*>& combo) {
  std::vector<UnconfirmedFact> facts;
  const auto& cuda = *solution.cuda;
  add_if_unconfirmed(facts, cuda.provenance,
                     "CUDA " + cuda.version.str() + " driver floor " +
                         (cuda.min_driver ? cuda.min_driver->str() : std::string("(unknown)")));
  if (solution.cudnn) {
    add_if_unconfirmed(facts, solution.cudnn->provenance,
                       "cuDNN " + solution.cudnn->full_version.str() + " CUDA support");
    for (const auto& row : db.cudnn_support) {
      if (row.cudnn != solution.cudnn->version || row.cuda_major != cuda.version.major()) continue;
      add_if_unconfirmed(facts, row.provenance,
                         "cuDNN " + row.cudnn.str() + " support for CUDA " + row.cuda_min.str() +
                             " to " + row.cuda_max.str());
    }
  }
  for (const auto* build : combo) {
    const auto who = build->choice.name + " " + build->choice.version;
    if (build->provenance) add_if_unconfirmed(facts, *build->provenance, who + " series record");
    if (build->torch_variant) {
      add_if_unconfirmed(facts, build->torch_variant->provenance,
                         who + " " + build->choice.variant + " build");
    }
  }
  return facts;
}

}  // namespace cudaenv::resolve

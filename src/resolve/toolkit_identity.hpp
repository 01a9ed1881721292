#pragma once
// One toolkit, two names: its release (13.0.2, what `cudaenv install` and the database speak of)
// and its compiler's version (nvcc 13.0.88, what `nvcc --version` prints). A toolkit that records
// no release (assembled from NVIDIA's pip wheels, or only an nvcc to ask) is named here, from the
// compatibility database's list of each release's nvcc and cudart versions. Every command that
// shows, sorts, matches or suggests a system toolkit goes through these functions.

#include <optional>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "manifest/database.hpp"
#include "probe/facts.hpp"

namespace cudaenv::resolve {

// The releases that ship this nvcc, oldest first. Several can (13.0.1 and 13.0.2 both ship nvcc
// 13.0.88); a known cudart version keeps only those that ship it too (13.0.96: 13.0.2). Empty
// when the database knows no release with this nvcc.
std::vector<Version> releases_shipping(const manifest::Database& db, const Version& nvcc,
                                       const std::optional<Version>& cudart);

// Names each toolkit that records no release by the release the database gives (or, when nvcc
// alone cannot tell, the candidates), then orders the list newest release first.
void name_toolkits(const manifest::Database& db, std::vector<probe::ToolkitFacts>& toolkits);

// The releases a toolkit may be: its release, or the database's candidates; empty when unknown.
std::vector<Version> possible_releases(const probe::ToolkitFacts& toolkit);

// For people: "13.0.2 (nvcc 13.0.88)", "13.0.1 or 13.0.2 (nvcc 13.0.88)", "11.0.3", and for a
// compiler the database does not know, "nvcc 13.9.20 (release unknown)".
std::string toolkit_name(const probe::ToolkitFacts& toolkit);

// What to give `cudaenv install` for `spec`: a spec that names an nvcc version exactly
// ("13.0.88") becomes the newest release shipping it ("13.0.2"); any other spec is kept.
std::string install_spec(const manifest::Database& db, const VersionSpec& spec);

// Whether `spec` names a CUDA release the database knows, by release ("12.4", "12.4.1") or by
// the exact nvcc version one ships ("12.4.131"): `cudaenv use` refuses others without --force.
bool database_knows(const manifest::Database& db, const VersionSpec& spec);

}  // namespace cudaenv::resolve

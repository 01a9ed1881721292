// Which store each toolkit comes from (the user's or a system store an admin filled), and
// whether this node's driver serves it: on a cluster the store is shared, the driver is not.

#include "doctor/checks.hpp"
#include "project/stores.hpp"
#include "resolve/rules.hpp"

namespace cudaenv::doctor {

namespace {

std::string verdict(const resolve::DriverCheck& check) {
  switch (check.mode) {
    case resolve::DriverMode::full: return "this driver serves it";
    case resolve::DriverMode::minor_compat:
      return "served under minor-version compatibility (full support from " +
             (check.full_minimum ? check.full_minimum->str() : std::string("?")) + ")";
    case resolve::DriverMode::too_old:
      return "the driver is too old: it needs >= " + (check.compat_floor ? check.compat_floor->str()
                                                      : check.full_minimum
                                                          ? check.full_minimum->str()
                                                          : "?");
    case resolve::DriverMode::forward_compat:
      return "served through forward compatibility (" +
             (check.forward_compat ? check.forward_compat->package : std::string("cuda-compat")) +
             ")";
    case resolve::DriverMode::unchecked: break;
  }
  return "no driver on this node to check against";
}

}  // namespace

std::vector<StoredToolkit> stored_toolkits(const Environment& env) {
  const auto store = project::store_for(env);
  std::vector<StoredToolkit> found;
  for (const auto& toolkit : install::installed_toolkits(store, install::Receipts::skip)) {
    const bool own = toolkit.path.parent_path().parent_path() == store.root;
    const auto root = toolkit.path.parent_path().parent_path().string();
    found.push_back(
        {toolkit.version, toolkit.path.string(), (own ? "user store " : "system store ") + root});
  }
  return found;
}

Finding check_stores(const CheckInput& in) {
  auto f = finding("stores", "Toolkits in the stores, and this node's driver");
  if (in.facts.stored.empty()) {
    conclude(f, CheckStatus::skip, "no toolkit in the user's store or a system store");
    return f;
  }
  std::optional<Version> driver;
  if (in.facts.machine.driver) driver = Version::parse(in.facts.machine.driver->version);
  std::vector<std::string> unserved;
  std::optional<std::string> newest_served;
  for (const auto& toolkit : in.facts.stored) {
    const auto* release = release_for(in.db, toolkit.version);
    const auto check =
        release ? resolve::check_driver(in.db, *release, driver) : resolve::DriverCheck{};
    f.evidence.push_back("cuda " + toolkit.version.str() + " (" + toolkit.store +
                         "): " + (release ? verdict(check) : "not in the database"));
    if (check.mode == resolve::DriverMode::too_old)
      unserved.push_back(toolkit.version.str());
    else if (!newest_served && driver)
      newest_served = toolkit.version.str();
  }
  if (unserved.empty()) {
    conclude(
        f, CheckStatus::ok,
        std::to_string(in.facts.stored.size()) + " toolkits; " +
            (driver ? "the driver serves each" : "no driver here to run them (a login node?)"));
    return f;
  }
  conclude(
      f, CheckStatus::warn,
      "driver " + in.facts.machine.driver->version + " cannot run CUDA " + unserved.front() +
          (unserved.size() > 1 ? " and " + std::to_string(unserved.size() - 1) + " more" : ""));
  f.fix.push_back(newest_served
                      ? "# on this node, use CUDA " + *newest_served + " (the newest it serves)"
                      : "# no stored toolkit runs on this driver");
  f.fix.emplace_back("# or upgrade the driver: see the driver-toolkit finding");
  return f;
}

}  // namespace cudaenv::doctor

#include "lock/lock_compare.hpp"

#include <set>

#include "core/text.hpp"

namespace cudaenv::lock {

namespace {

std::string shown(const std::string& value) {
  return value.empty() ? "nothing" : "\"" + text::printable(value) + "\"";
}

class DiffList {
 public:
  void field(const std::string& name, const std::string& locked, const std::string& now) {
    if (locked != now)
      lines_.push_back(name + ": the lock has " + shown(locked) + ", now " + shown(now));
  }
  void add(std::string line) { lines_.push_back(std::move(line)); }
  std::vector<std::string> take() { return std::move(lines_); }

 private:
  std::vector<std::string> lines_;
};

template <typename Locked, typename Now, typename Compare>
void keyed(DiffList& diff, const std::string& prefix, const Locked& locked, const Now& now,
           Compare compare) {
  for (const auto& [name, value] : locked) {
    const auto it = now.find(name);
    if (it == now.end()) {
      diff.add(prefix + "." + text::printable(name) + ": in the lock, no longer wanted");
    } else {
      compare(prefix + "." + text::printable(name), value, it->second);
    }
  }
  for (const auto& [name, value] : now) {
    if (locked.find(name) == locked.end())
      diff.add(prefix + "." + text::printable(name) + ": wanted now, not in the lock");
  }
}

std::map<std::string, LockedArchive> by_name(const std::vector<LockedArchive>& archives) {
  std::map<std::string, LockedArchive> out;
  for (const auto& a : archives) out[a.name] = a;
  return out;
}

void archives(DiffList& diff, const std::string& prefix, const std::vector<LockedArchive>& locked,
              const std::vector<LockedArchive>& now) {
  keyed(diff, prefix, by_name(locked), by_name(now),
        [&diff](const std::string& at, const LockedArchive& a, const LockedArchive& b) {
          diff.field(at + ".version", a.version, b.version);
          diff.field(at + ".relative_path", a.relative_path, b.relative_path);
          diff.field(at + ".sha256", a.sha256, b.sha256);
          diff.field(at + ".size", std::to_string(a.size), std::to_string(b.size));
        });
}

void targets(DiffList& diff, const LockFile& stored, const LockFile& fresh) {
  keyed(diff, "targets", stored.targets, fresh.targets,
        [&diff](const std::string& at, const LockedTarget& a, const LockedTarget& b) {
          diff.field(at + ".driver", a.driver, b.driver);
          diff.field(at + ".mode", a.mode, b.mode);
          diff.field(at + ".arch", text::join(a.archs, ", "), text::join(b.archs, ", "));
          diff.field(at + ".gpu", text::join(a.gpus, ", "), text::join(b.gpus, ", "));
          diff.field(at + ".TORCH_CUDA_ARCH_LIST", a.torch_cuda_arch_list, b.torch_cuda_arch_list);
          diff.field(at + ".CMAKE_CUDA_ARCHITECTURES", a.cmake_cuda_architectures,
                     b.cmake_cuda_architectures);
          diff.field(at + ".CUDAHOSTCXX", a.cudahostcxx, b.cudahostcxx);
        });
}

}  // namespace

std::vector<std::string> differences(const LockFile& stored, const LockFile& fresh) {
  DiffList diff;
  diff.field("database.revision", stored.database_revision, fresh.database_revision);
  diff.field("database.sha256", stored.database_sha256, fresh.database_sha256);
  keyed(diff, "request", stored.request, fresh.request,
        [&diff](const std::string& at, const std::string& a, const std::string& b) {
          diff.field(at, a, b);
        });
  diff.field("source", stored.source, fresh.source);
  diff.field("toolkit.version", stored.toolkit.version, fresh.toolkit.version);
  archives(diff, "toolkit.components", stored.toolkit.components, fresh.toolkit.components);
  const LockedCudnn none;
  const auto& a = stored.cudnn ? *stored.cudnn : none;
  const auto& b = fresh.cudnn ? *fresh.cudnn : none;
  diff.field("cudnn.version", a.version, b.version);
  diff.field("cudnn.cuda_variant", a.cuda_variant, b.cuda_variant);
  archives(diff, "cudnn.components", a.components, b.components);
  keyed(diff, "frameworks", stored.frameworks, fresh.frameworks,
        [&diff](const std::string& at, const LockedFramework& x, const LockedFramework& y) {
          diff.field(at + ".version", x.version, y.version);
          diff.field(at + ".index_url", x.index_url, y.index_url);
          diff.field(at + ".pip", x.pip, y.pip);
        });
  targets(diff, stored, fresh);
  return diff.take();
}

std::vector<std::string> stale_receipts(const LockFile& stored, const std::string& digest) {
  std::vector<std::string> out;
  for (const auto& [name, target] : stored.targets) {
    for (const auto& receipt : target.verified) {
      if (receipt.locked_set == digest) continue;
      out.push_back("targets." + text::printable(name) + ".verified: the receipt of " +
                    text::printable(receipt.date) + " (" + text::printable(receipt.gpu) +
                    ") was recorded for another locked set");
    }
  }
  return out;
}

std::vector<std::string> project_differences(const LockFile& stored,
                                             const std::map<std::string, std::string>& request,
                                             const std::vector<project::DeclaredTarget>& declared) {
  DiffList diff;
  keyed(diff, "request", stored.request, request,
        [&diff](const std::string& at, const std::string& a, const std::string& b) {
          diff.field(at, a, b);
        });
  if (declared.empty()) return diff.take();
  std::map<std::string, const project::DeclaredTarget*> wanted;
  for (const auto& target : declared) wanted[target.name] = &target;
  keyed(diff, "targets", stored.targets, wanted,
        [&diff](const std::string& at, const LockedTarget& a, const project::DeclaredTarget* b) {
          std::vector<std::string> archs;
          for (const auto& arch : b->archs) archs.push_back(arch.str());
          diff.field(at + ".driver", a.driver, b->driver.str());
          diff.field(at + ".gpu", text::join(a.gpus, ", "), text::join(b->gpus, ", "));
          if (b->archs_known())
            diff.field(at + ".arch", text::join(a.archs, ", "), text::join(archs, ", "));
        });
  return diff.take();
}

void keep_valid_receipts(const LockFile& old, LockFile& fresh) {
  const auto digest = set_digest(fresh);
  for (const auto& [name, target] : old.targets) {
    const auto it = fresh.targets.find(name);
    if (it == fresh.targets.end()) continue;
    for (const auto& receipt : target.verified) {
      if (receipt.locked_set == digest) it->second.verified.push_back(receipt);
    }
  }
}

}  // namespace cudaenv::lock

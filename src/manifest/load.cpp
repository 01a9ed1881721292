#include "manifest/load.hpp"

#include <algorithm>

#include <toml++/toml.h>

#include "core/parallel.hpp"
#include "core/text.hpp"
#include "core/toml_guard.hpp"
#include "core/untrusted.hpp"
#include "manifest/db_index.hpp"

namespace cudaenv::manifest {

namespace {

using untrusted::Field;

// Reads fields of one file, keeping the first problem found; callers check `failed()` once.
class FieldReader {
 public:
  explicit FieldReader(std::string file) : file_(std::move(file)) {}

  bool failed() const { return error_.has_value(); }
  Error error() const { return *error_; }

  std::string text(const toml::table& table, const char* key, bool required = true) {
    if (const auto* node = table.get(key)) {
      if (auto value = node->value<std::string>()) return *value;
      fail(table, key, "must be a string");
    } else if (required) {
      fail(table, key, "is missing");
    }
    return {};
  }

  bool boolean(const toml::table& table, const char* key) {
    if (const auto* node = table.get(key)) {
      if (auto value = node->value<bool>()) return *value;
      fail(table, key, "must be true or false");
    }
    return false;
  }

  // A string that forms a path, a shell word, a URL or a modulefile string somewhere: it must pass
  // its grammar (core/untrusted.hpp) here, at the reader, or the whole database is refused.
  std::string checked(const toml::table& table, const char* key, Field grammar,
                      bool required = true) {
    auto value = text(table, key, required);
    if (value.empty() && !required) return value;
    return check(table, key, grammar, std::move(value));
  }

  std::string check(const toml::table& where, const std::string& key, Field grammar,
                    std::string value) {
    if (failed() || untrusted::is_valid(grammar, value)) return value;
    const auto* node = where.get(key);
    const auto line = (node != nullptr ? node->source() : where.source()).begin.line;
    auto status = untrusted::check(grammar, value, file_ + ":" + std::to_string(line) + ": " + key);
    error_ = make_error(ErrorKind::integrity, status.error().message,
                        "the database file is corrupt or hostile: remove it from the data root "
                        "(or run cudaenv db update from a mirror you trust)");
    return {};
  }

  std::optional<Version> version(const toml::table& table, const char* key, bool required = true) {
    const auto raw = text(table, key, required);
    if (raw.empty()) {
      if (table.contains(key)) fail(table, key, "is empty");
      return std::nullopt;
    }
    auto parsed = Version::parse(raw);
    if (!parsed) fail(table, key, "\"" + raw + "\" is not a version");
    return parsed;
  }

  Version required_version(const toml::table& table, const char* key) {
    return version(table, key).value_or(Version::from_cuda_int(0));
  }

  VersionSpec spec(const toml::table& table, const char* key) {
    const auto raw = text(table, key);
    auto parsed = VersionSpec::parse(raw);
    if (!parsed) {
      fail(table, key, "\"" + raw + "\" is not a version spec");
      return *VersionSpec::parse("latest");
    }
    return *parsed;
  }

  int integer(const toml::table& table, const char* key, bool required = true) {
    if (const auto* node = table.get(key)) {
      if (auto value = node->value<int64_t>()) return static_cast<int>(*value);
      fail(table, key, "must be an integer");
    } else if (required) {
      fail(table, key, "is missing");
    }
    return 0;
  }

  // An inline table of component names and versions, both through their grammars.
  std::vector<std::pair<std::string, std::string>> component_versions(const toml::table& table,
                                                                      const char* key) {
    std::vector<std::pair<std::string, std::string>> values;
    const auto* inner = table.get_as<toml::table>(key);
    if (inner == nullptr) {
      if (table.contains(key)) fail(table, key, "must be a table of component versions");
      return values;
    }
    for (const auto& [name, node] : *inner) {
      const auto version = node.value<std::string>();
      const auto where = std::string(key) + "." + std::string(name.str());
      if (!version) {
        fail(table, where, "must be a string");
        return {};
      }
      auto component = check(table, where, Field::component_name, std::string(name.str()));
      auto checked_version = check(table, where, Field::component_version, *version);
      if (failed()) return {};
      values.emplace_back(std::move(component), std::move(checked_version));
    }
    return values;
  }

  std::vector<std::string> strings(const toml::table& table, const char* key) {
    std::vector<std::string> values;
    const auto* array = table.get_as<toml::array>(key);
    if (array == nullptr) {
      if (table.contains(key)) fail(table, key, "must be an array");
      return values;
    }
    for (const auto& element : *array) {
      if (auto value = element.value<std::string>())
        values.push_back(*value);
      else
        fail(table, key, "must hold strings only");
    }
    return values;
  }

  std::vector<int> integers(const toml::table& table, const char* key) {
    std::vector<int> values;
    const auto* array = table.get_as<toml::array>(key);
    if (array == nullptr) {
      fail(table, key, table.contains(key) ? "must be an array" : "is missing");
      return values;
    }
    for (const auto& element : *array) {
      if (auto value = element.value<int64_t>(); value && *value > 0 && *value < 100000)
        values.push_back(static_cast<int>(*value));
      else
        fail(table, key, "must hold driver branches (integers) only");
    }
    return values;
  }

  std::vector<Version> versions(const toml::table& table, const char* key) {
    std::vector<Version> values;
    for (const auto& raw : strings(table, key)) {
      if (auto parsed = Version::parse(raw))
        values.push_back(*parsed);
      else
        fail(table, key, "\"" + raw + "\" is not a version");
    }
    return values;
  }

  // A CUDA major written as a string ("12").
  int major(const toml::table& table, const std::string& raw) {
    const auto value = text::parse_integer(raw);
    if (!value) fail(table, "cuda major", "\"" + raw + "\" is not a number");
    return static_cast<int>(value.value_or(0));
  }

  Provenance provenance(const toml::table& table) {
    return Provenance{strings(table, "sources"), text(table, "confidence", false),
                      text(table, "note", false), text(table, "basis", false)};
  }

  void fail(const toml::table& where, const std::string& key, const std::string& problem) {
    if (error_) return;
    // Point at the key's own line when it exists, else at the table's header.
    const auto* node = where.get(key);
    const auto line = (node != nullptr ? node->source() : where.source()).begin.line;
    error_ = make_error(ErrorKind::usage,
                        file_ + ":" + std::to_string(line) + ": " + key + " " + problem,
                        "fix the manifest file or remove the copy in the data root");
  }

 private:
  std::string file_;
  std::optional<Error> error_;
};

template <typename Fn>
void for_each_table(const toml::table& root, const char* key, Fn&& read_one) {
  if (const auto* array = root.get_as<toml::array>(key)) {
    for (const auto& element : *array) {
      if (const auto* table = element.as_table()) read_one(*table);
    }
  }
}

// The generated `[[redist]]` rows (scripts/update-db) complete the hand-written releases: a
// release NVIDIA lists but nobody has sourced a driver floor for is kept, without one.
void merge_cuda_redist(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "redist", [&](const toml::table& t) {
    const auto version = r.required_version(t, "version");
    const auto nvcc = r.version(t, "nvcc", false);
    const auto cudart = r.version(t, "cudart", false);
    const auto it = std::find_if(db.cuda_releases.begin(), db.cuda_releases.end(),
                                 [&](const CudaRelease& c) { return c.version == version; });
    auto components = r.component_versions(t, "components");
    if (it != db.cuda_releases.end()) {
      if (!it->nvcc) it->nvcc = nvcc;
      if (!it->cudart) it->cudart = cudart;
      if (it->components.empty()) it->components = std::move(components);
      return;
    }
    db.cuda_releases.push_back(
        {version, r.text(t, "release_label", false), std::nullopt, nvcc,
         Provenance{{"MAN"}, "unconfirmed", "", "listed in NVIDIA's redist index only"}, cudart,
         std::move(components)});
  });
}

void merge_cudnn_redist(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "redist", [&](const toml::table& t) {
    CudnnRelease release{r.required_version(t, "version"),
                         r.required_version(t, "full_version"),
                         {},
                         Provenance{{"MAN"}, "high", "", ""}};
    for (const auto& major : r.strings(t, "cuda_variants"))
      release.cuda_majors.push_back(r.major(t, major));
    const auto it =
        std::find_if(db.cudnn_releases.begin(), db.cudnn_releases.end(),
                     [&](const CudnnRelease& c) { return c.version == release.version; });
    if (it == db.cudnn_releases.end()) {
      db.cudnn_releases.push_back(std::move(release));
    } else if (it->cuda_majors.empty()) {
      it->cuda_majors = release.cuda_majors;
    }
  });
}

// The generated `[[pypi_toolkit]]` rows (scripts/update-db --pypi): the nvcc and runtime each
// cuda-toolkit release on PyPI pins, where neither a hand-written release nor the redist index
// said. They add no release: a PyPI metapackage has no driver floor to go with it.
void merge_cuda_pypi(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "pypi_toolkit", [&](const toml::table& t) {
    const auto version = r.required_version(t, "version");
    const auto nvcc = r.version(t, "nvcc", false);
    const auto cudart = r.version(t, "cudart", false);
    for (auto& release : db.cuda_releases) {
      if (release.version != version) continue;
      if (!release.nvcc) release.nvcc = nvcc;
      if (!release.cudart) release.cudart = cudart;
    }
  });
}

bool add_source(Provenance& provenance, const std::string& key) {
  if (std::find(provenance.sources.begin(), provenance.sources.end(), key) !=
      provenance.sources.end())
    return false;
  provenance.sources.push_back(key);
  return true;
}

// The generated `[[pypi]]` rows (scripts/update-db --pypi): the CUDA majors NVIDIA publishes an
// nvidia-cudnn-cuNN wheel of each cuDNN for. A wheel is a fact with a source, so a hand-written
// release of that version gains every major its wheels show, and a version only PyPI lists
// becomes a release: the database cannot miss a build `pip install` would get.
void merge_cudnn_pypi(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "pypi", [&](const toml::table& t) {
    CudnnRelease wheels{r.required_version(t, "version"),
                        r.required_version(t, "full_version"),
                        {},
                        Provenance{{"PYPI_CUDNN"}, "high", "", ""}};
    for (const auto& major : r.strings(t, "cuda_majors"))
      wheels.cuda_majors.push_back(r.major(t, major));
    const auto it =
        std::find_if(db.cudnn_releases.begin(), db.cudnn_releases.end(),
                     [&](const CudnnRelease& c) { return c.version == wheels.version; });
    if (it == db.cudnn_releases.end()) {
      db.cudnn_releases.push_back(std::move(wheels));
      return;
    }
    bool gained = false;
    for (const int major : wheels.cuda_majors) {
      if (std::find(it->cuda_majors.begin(), it->cuda_majors.end(), major) != it->cuda_majors.end())
        continue;
      it->cuda_majors.push_back(major);
      gained = true;
    }
    if (!gained) return;
    std::sort(it->cuda_majors.begin(), it->cuda_majors.end());
    add_source(it->provenance, "PYPI_CUDNN");
  });
}

void read_cuda(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "release", [&](const toml::table& t) {
    db.cuda_releases.push_back({r.required_version(t, "version"),
                                r.text(t, "label", false),
                                r.version(t, "min_driver", false),
                                r.version(t, "nvcc", false),
                                r.provenance(t),
                                r.version(t, "cudart", false),
                                {}});
  });
  merge_cuda_redist(root, r, db);
  merge_cuda_pypi(root, r, db);
  for_each_table(root, "family", [&](const toml::table& t) {
    db.cuda_families.push_back(
        {r.integer(t, "major"), r.required_version(t, "minor_compat_floor"), r.provenance(t)});
  });
  for_each_table(root, "arch", [&](const toml::table& t) {
    db.gpu_archs.push_back({r.required_version(t, "compute_capability"),
                            r.checked(t, "sm", Field::gpu_arch), r.text(t, "name"),
                            r.required_version(t, "first_cuda"), r.version(t, "last_cuda", false),
                            r.version(t, "min_driver", false), r.text(t, "examples", false),
                            r.provenance(t), r.boolean(t, "tegra")});
  });
  for_each_table(root, "gpu", [&](const toml::table& t) {
    db.gpu_models.push_back({r.checked(t, "name", Field::gpu_model),
                             r.required_version(t, "compute_capability"), r.provenance(t),
                             r.boolean(t, "datacenter")});
  });
  for_each_table(root, "host_compiler", [&](const toml::table& t) {
    db.host_compilers.push_back(
        {r.spec(t, "cuda"), r.integer(t, "gcc_max"), r.integer(t, "clang_max"), r.provenance(t)});
  });
  for_each_table(root, "glibc", [&](const toml::table& t) {
    db.glibc_limits.push_back({r.spec(t, "cuda"), r.required_version(t, "glibc_max"),
                               r.text(t, "clash"), r.version(t, "fixed_in", false),
                               r.provenance(t)});
  });
}

void read_cudnn(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "release", [&](const toml::table& t) {
    std::vector<int> majors;
    for (const auto& major : r.strings(t, "cuda_majors")) majors.push_back(r.major(t, major));
    db.cudnn_releases.push_back({r.required_version(t, "version"),
                                 r.required_version(t, "full_version"), majors, r.provenance(t)});
  });
  merge_cudnn_redist(root, r, db);
  merge_cudnn_pypi(root, r, db);
  for_each_table(root, "support", [&](const toml::table& t) {
    db.cudnn_support.push_back({r.required_version(t, "cudnn"), r.major(t, r.text(t, "cuda_major")),
                                r.required_version(t, "cuda_min"),
                                r.required_version(t, "cuda_max"), r.provenance(t)});
  });
}

PytorchVariant read_variant(const toml::table& t, FieldReader& r) {
  PytorchVariant variant{r.checked(t, "tag", Field::component_name),
                         r.required_version(t, "cuda"),
                         r.required_version(t, "cudnn"),
                         r.text(t, "status") == "experimental",
                         std::nullopt,
                         r.versions(t, "ptx"),
                         r.text(t, "arch_source", false),
                         r.provenance(t)};
  if (t.contains("sass")) variant.sass = r.versions(t, "sass");
  return variant;
}

// PyTorch's index for a release, "https://download.pytorch.org/whl/{tag}": a URL once the tag
// (itself checked) is put in.
std::string index_template(const toml::table& t, FieldReader& r) {
  auto value = r.text(t, "index_url");
  auto filled = value;
  if (const auto at = filled.find("{tag}"); at != std::string::npos) filled.replace(at, 5, "cu");
  if (r.check(t, "index_url", Field::url, filled).empty()) return {};
  return value;
}

// The generated `[[pypi_wheel]]` rows of torch (scripts/update-db --pypi): the cuDNN each
// release's PyPI wheel pins. That wheel is its series' PyPI-default build, so the build bundles
// the cuDNN the newest release of the series pins (rows come oldest first: the last one wins) --
// when the wheel's CUDA is the build's. A wheel of another CUDA contradicts the hand-written
// default; `scripts/update-db --check` names it, and the build is left as written.
void merge_torch_wheels(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "pypi_wheel", [&](const toml::table& t) {
    if (r.text(t, "project") != "torch" || !t.contains("cudnn") || !t.contains("cuda")) return;
    const auto version = r.required_version(t, "version");
    const auto cuda = r.required_version(t, "cuda");
    const auto cudnn = r.required_version(t, "cudnn");
    for (auto& release : db.pytorch) {
      if (release.version != version.major_minor()) continue;
      for (auto& variant : release.variants) {
        if (variant.tag != release.pypi_default || variant.cuda != cuda.major_minor()) continue;
        variant.cudnn = cudnn;
        add_source(variant.provenance, "PYPI_TORCH");
      }
    }
  });
}

void read_frameworks(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "pytorch", [&](const toml::table& t) {
    PytorchRelease release{r.required_version(t, "version"),
                           r.checked(t, "pypi_default", Field::component_name),
                           index_template(t, r),
                           {},
                           r.provenance(t)};
    for_each_table(t, "variant",
                   [&](const toml::table& v) { release.variants.push_back(read_variant(v, r)); });
    db.pytorch.push_back(std::move(release));
  });
  merge_torch_wheels(root, r, db);
  for_each_table(root, "tensorflow", [&](const toml::table& t) {
    db.tensorflow.push_back({r.required_version(t, "version"), r.required_version(t, "cuda"),
                             r.required_version(t, "cudnn"), r.provenance(t)});
  });
  for_each_table(root, "jax", [&](const toml::table& t) {
    db.jax.push_back({r.integer(t, "cuda_major"), r.checked(t, "pip_extra", Field::python_package),
                      r.spec(t, "cuda"), r.spec(t, "cudnn"), r.integer(t, "min_driver_branch"),
                      r.required_version(t, "min_compute_capability"), r.provenance(t)});
  });
}

void read_drivers(const toml::table& root, FieldReader& r, Database& db) {
  for_each_table(root, "branch", [&](const toml::table& t) {
    db.driver_branches.push_back({r.integer(t, "branch"),
                                  r.checked(t, "package", Field::component_name),
                                  r.required_version(t, "max_cuda"), r.provenance(t)});
  });
  for_each_table(root, "forward_compat", [&](const toml::table& t) {
    db.forward_compat.push_back(
        {r.required_version(t, "cuda"), r.checked(t, "package", Field::component_name),
         r.required_version(t, "driver"), r.integers(t, "host_branches"), r.provenance(t)});
  });
}

void read_sources(const toml::table& root, Database& db) {
  if (const auto* table = root.get_as<toml::table>("sources")) {
    for (const auto& [key, value] : *table) {
      db.sources.push_back({std::string(key.str()), value.value_or(std::string{})});
    }
  }
}

Error manifest_error(const std::string& origin, std::size_t line, std::size_t column,
                     const std::string& problem) {
  return make_error(
      ErrorKind::usage,
      origin + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + problem,
      "fix the manifest file or remove the copy in the data root");
}

Result<toml::table> parse_toml(const ManifestFile& file) {
  const auto& origin = file.origin.empty() ? file.name : file.origin;
  if (const auto bad = toml_text_problem(file.text))
    return manifest_error(origin, bad->line, 1, bad->problem);
  try {
    return toml::parse(file.text, origin);
  } catch (const toml::parse_error& e) {
    return manifest_error(origin, e.source().begin.line, e.source().begin.column,
                          std::string(e.description()));
  }
}

std::string revision_of(const toml::table& root) {
  return root["meta"]["revision"].value_or(std::string{});
}

template <typename T>
void sort_by_version(std::vector<T>& items) {
  std::stable_sort(items.begin(), items.end(),
                   [](const T& a, const T& b) { return a.version < b.version; });
}

// Every file parsed at once, one thread each: parsing is most of a database load, and the files
// do not depend on each other. In the files' order, so the error reported is the first file's.
Result<std::vector<toml::table>> parse_all(const std::vector<ManifestFile>& files) {
  std::vector<std::optional<Result<toml::table>>> parsed(files.size());
  auto done = for_each_in_parallel(files.size(), static_cast<int>(files.size()),
                                   "reading the database", [&](size_t index, const FirstError&) {
                                     parsed[index].emplace(parse_toml(files[index]));
                                     return Status{Ok{}};
                                   });
  if (!done) return done.error();
  std::vector<toml::table> roots;
  roots.reserve(files.size());
  for (auto& root : parsed) {
    if (!*root) return root->error();
    roots.push_back(std::move(**root));
  }
  return roots;
}

}  // namespace

Result<Database> load_database(const std::vector<ManifestFile>& files) {
  auto roots = parse_all(files);
  if (!roots) return roots.error();
  Database db;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& file = files[i];
    const auto& root = (*roots)[i];
    FieldReader reader(file.origin.empty() ? file.name : file.origin);
    if (file.name == "cuda.toml")
      read_cuda(root, reader, db);
    else if (file.name == "cudnn.toml")
      read_cudnn(root, reader, db);
    else if (file.name == "frameworks.toml")
      read_frameworks(root, reader, db);
    else if (file.name == "drivers.toml")
      read_drivers(root, reader, db);
    else if (file.name == "sources.toml")
      read_sources(root, db);
    const auto revision = revision_of(root);
    if (!revision.empty()) {
      const auto* meta = root.get_as<toml::table>("meta");
      if (meta != nullptr) reader.check(*meta, "revision", Field::revision, revision);
    }
    if (reader.failed()) return reader.error();
    if (db.revision.empty() || compare_revisions(revision, db.revision) < 0) db.revision = revision;
  }
  sort_by_version(db.cuda_releases);
  sort_by_version(db.pytorch);
  sort_by_version(db.tensorflow);
  std::stable_sort(db.forward_compat.begin(), db.forward_compat.end(),
                   [](const auto& a, const auto& b) { return a.cuda < b.cuda; });
  std::stable_sort(db.cudnn_releases.begin(), db.cudnn_releases.end(),
                   [](const auto& a, const auto& b) { return a.full_version < b.full_version; });
  return db;
}

Result<std::string> manifest_revision(const ManifestFile& file) {
  auto root = parse_toml(file);
  if (!root) return root.error();
  return revision_of(*root);
}

}  // namespace cudaenv::manifest

#include "resolve/pinned_request.hpp"

#include "core/text.hpp"
#include "resolve/pip_lines.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::resolve {

Result<PinnedRequest> request_for_pins(const manifest::Database& db, const Pins& pins,
                                       const std::string& origin) {
  PinnedRequest out;
  auto& request = out.request;
  request.cuda = pins.cuda;
  request.cudnn = pins.cudnn;
  request.torch = pins.torch;
  request.tensorflow = pins.tensorflow;
  request.jax = pins.jax;
  if (request.cuda) {
    const auto release = install_spec(db, *request.cuda);
    if (release != request.cuda->str()) {
      out.notes.push_back(request.cuda->str() + " is nvcc's version: resolving CUDA " + release);
      request.cuda = VersionSpec::parse(release).value();
    }
  }
  if (!origin.empty() && request.torch && request.cuda) {
    if (auto mismatch = torch_cuda_mismatch(db, *request.torch, *request.cuda))
      return mismatch->with_context(origin);
  }
  if (const auto unknown = unknown_versions(db, request); !unknown.empty()) {
    auto error = make_error(ErrorKind::not_found, "unknown version: " + text::join(unknown, ", "),
                            "the compatibility database (revision " + db.revision +
                                ") does not know it; cudaenv db update fetches a newer one");
    return origin.empty() ? error : error.with_context(origin);  // a .cudaenv's pin: name it
  }
  return out;
}

}  // namespace cudaenv::resolve

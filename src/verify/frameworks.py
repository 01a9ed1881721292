# Run by `cudaenv verify --torch|--tensorflow|--jax` as `python3 -c <this file> FRAMEWORK`, in
# the toolkit's environment. Compiled into cudaenv's binary as text.
#
# Prints one fact per line in the device-query program's form ("<kind> key=value ...", a
# "message" key last): the Python it runs in, whether the framework imports, its version, the
# CUDA it was built with and the cuDNN it loads (what `cudaenv sync` compares with the lock), the
# GPUs it sees, the architectures it was compiled for, and the result of one small operation
# on the first GPU checked against Python's own arithmetic. Standard library only; never raises.

import sys

COUNT = 1 << 20
# sum(i * 3 + 1 for i in range(COUNT)), in closed form.
EXPECTED = 3 * COUNT * (COUNT - 1) // 2 + COUNT


def one_line(text):
    return " ".join(str(text).split())


def emit(kind, message=None, **fields):
    parts = [kind] + ["%s=%s" % (k, "-" if v is None else v) for k, v in fields.items()]
    if message is not None:
        parts.append("message=" + one_line(message))
    print(" ".join(parts), flush=True)


def run_op(name, operation):
    try:
        value = int(operation())
    except Exception as error:  # the framework's own words are the evidence
        emit("op", message="%s: %s" % (type(error).__name__, error), framework=name,
             status="failed")
        return
    emit("op", framework=name, status="ok" if value == EXPECTED else "wrong",
         value=value, expected=EXPECTED)


def cudnn_text(encoded):
    # cuDNN's version number: major * 10000 + minor * 100 + patch from 9 on, major * 1000 before.
    try:
        encoded = int(encoded)
    except (TypeError, ValueError):
        return None
    if encoded <= 0:
        return None
    major = encoded // 10000 if encoded >= 90000 else encoded // 1000
    rest = encoded - major * (10000 if encoded >= 90000 else 1000)
    return "%d.%d.%d" % (major, rest // 100, rest % 100)


def torch_cudnn(torch):
    try:
        return cudnn_text(torch.backends.cudnn.version())  # loads libcudnn; needs no GPU
    except Exception:
        return None


def check_torch():
    import torch

    available = torch.cuda.is_available()
    archs = torch.cuda.get_arch_list() if available else []
    emit("framework", framework="torch", status="imported", version=torch.__version__,
         cuda=torch.version.cuda, cudnn=torch_cudnn(torch),
         gpus=torch.cuda.device_count() if available else 0, archs=",".join(archs) or None)
    if available:
        run_op("torch", lambda: (torch.arange(COUNT, device="cuda", dtype=torch.int64) * 3 + 1)
               .sum().item())


def check_tensorflow():
    import tensorflow as tf

    info = tf.sysconfig.get_build_info()
    gpus = tf.config.list_physical_devices("GPU")
    archs = info.get("cuda_compute_capabilities") or []
    emit("framework", framework="tensorflow", status="imported", version=tf.__version__,
         cuda=info.get("cuda_version"), cudnn=info.get("cudnn_version"), gpus=len(gpus),
         archs=",".join(archs) or None)
    if gpus:
        def operation():
            with tf.device("/GPU:0"):
                return tf.reduce_sum(tf.range(COUNT, dtype=tf.int64) * 3 + 1).numpy()
        run_op("tensorflow", operation)


def jax_cuda_version():
    try:
        from jax._src.lib import cuda_versions  # private; absent in CPU-only jaxlib
        encoded = cuda_versions.cuda_runtime_get_version()
        return "%d.%d" % (encoded // 1000, encoded % 1000 // 10)
    except Exception:
        return None


def jax_cudnn_version():
    try:
        from jax._src.lib import cuda_versions
        return cudnn_text(cuda_versions.cudnn_get_version())
    except Exception:
        return None


def check_jax():
    import jax

    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    # XLA compiles for the GPU it finds at run time: there is no fixed architecture list.
    emit("framework", framework="jax", status="imported", version=jax.__version__,
         cuda=jax_cuda_version(), cudnn=jax_cudnn_version(), gpus=len(gpus), archs="jit")
    if gpus:
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        run_op("jax", lambda: jax.device_put(jnp.arange(COUNT, dtype=jnp.int64) * 3 + 1,
                                             gpus[0]).sum())


CHECKS = {"torch": check_torch, "tensorflow": check_tensorflow, "jax": check_jax}


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else ""
    emit("python", version="%d.%d" % sys.version_info[:2])
    if name not in CHECKS:
        emit("framework", message="unknown framework " + repr(name), framework=name,
             status="error")
        return
    try:
        CHECKS[name]()
    except ImportError as error:
        emit("framework", message=error, framework=name, status="missing")
    except Exception as error:
        emit("framework", message="%s: %s" % (type(error).__name__, error), framework=name,
             status="error")


main()

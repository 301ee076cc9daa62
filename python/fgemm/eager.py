"""When a call may skip the dispatcher: the public functions run the extension directly for an eager call on
ordinary tensors, the case where the dispatcher would only hand the tensors on to the same kernel. That saves
the dispatcher's round trip: about 9 us a call on a 2-core CPU, where a whole small GEMM on an H100 costs the
host about 8 us. Everything else goes through torch.ops.fgemm (_ops.py): torch.compile's tracing, FakeTensor and other
tensor subclasses, meta tensors, and any active TorchDispatchMode (functionalization, proxy tracing, a
profiler's or a debugger's mode).
"""

import torch

# The tensor types the extension reads directly; nn.Parameter is a torch.Tensor to it, with nothing added.
_PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)
# Bound once: this check runs on every call. torch.compile recognises is_compiling by identity, under any name.
_is_compiling = torch.compiler.is_compiling
_dispatch_mode_count = torch._C._len_torch_dispatch_stack


def runs_eagerly(tensor) -> bool:
    """True where a call whose output (or input) is `tensor` may run the extension directly.

    Not a tensor at all is also True: the extension then raises the error that names the argument."""
    if _is_compiling() or _dispatch_mode_count() > 0:
        return False
    if type(tensor) in _PLAIN_TENSOR_TYPES:
        return not tensor.is_meta
    return not isinstance(tensor, torch.Tensor)


# What an op that declares a mutated tensor does to it (ADInplaceOrView), done by hand on the direct path: a
# write into d bumps its version counter, so that autograd detects a tensor changed after it was saved.
increment_version = torch.autograd.graph.increment_version

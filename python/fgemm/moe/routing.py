"""The router's output, checked and counted: which expert each (token, k) pair goes to, how many pairs each
expert gets, and each pair's place among its expert's pairs. Nothing here reads a tensor on the host except
the checks of values, which are skipped while a CUDA graph is captured."""

import torch


def is_capturing(tensor: torch.Tensor) -> bool:
    """Whether a CUDA graph is being captured on the current stream of `tensor`'s device."""
    return tensor.is_cuda and torch.cuda.is_current_stream_capturing()


def check_routing(tokens, topk_ids, topk_weights, hidden: int, num_experts: int, op: str) -> None:
    """Raises TypeError or ValueError unless tokens is [T, hidden] floating point, topk_ids [T, k] int32 or
    int64 with values in [0, num_experts), and topk_weights [T, k] floating point, all on one device."""
    for name, tensor in (("tokens", tokens), ("topk_ids", topk_ids), ("topk_weights", topk_weights)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{op}: argument '{name}' expected a torch.Tensor, got {type(tensor).__name__}")
        if tensor.dim() != 2:
            raise ValueError(f"{op}: argument '{name}' expected 2 dimensions, got shape {list(tensor.shape)}")
        if tensor.device != tokens.device:
            raise ValueError(f"{op}: argument '{name}' expected device {tokens.device}, got {tensor.device}")
    if not tokens.is_floating_point():
        raise TypeError(f"{op}: argument 'tokens' expected a floating-point dtype, got {tokens.dtype}")
    if tokens.shape[1] != hidden:
        raise ValueError(f"{op}: argument 'tokens' expected shape [T, {hidden}] ([T, hidden]), got "
                         f"{list(tokens.shape)}")
    if topk_ids.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"{op}: argument 'topk_ids' expected dtype int32 or int64, got {topk_ids.dtype}")
    if topk_ids.shape[0] != tokens.shape[0]:
        raise ValueError(f"{op}: argument 'topk_ids' expected shape [{tokens.shape[0]}, k] ([T, k]), got "
                         f"{list(topk_ids.shape)}")
    if not topk_weights.is_floating_point():
        raise TypeError(f"{op}: argument 'topk_weights' expected a floating-point dtype, got {topk_weights.dtype}")
    if topk_weights.shape != topk_ids.shape:
        raise ValueError(f"{op}: argument 'topk_weights' expected shape {list(topk_ids.shape)} (that of "
                         f"topk_ids), got {list(topk_weights.shape)}")
    if topk_ids.numel() and not is_capturing(topk_ids):
        low, high = int(topk_ids.min()), int(topk_ids.max())
        if low < 0 or high >= num_experts:
            raise ValueError(f"{op}: argument 'topk_ids' expected values in [0, {num_experts}), got values in "
                             f"[{low}, {high}]")


def count_per_expert(expert_of_pair: torch.Tensor, num_experts: int) -> torch.Tensor:
    """int64 [num_experts]: the pairs each expert gets. (A scatter-add, not torch.bincount, which reads the
    largest value on the host.)"""
    counts = torch.zeros(num_experts, dtype=torch.int64, device=expert_of_pair.device)
    return counts.scatter_add_(0, expert_of_pair, torch.ones_like(expert_of_pair))


def position_within_expert(expert_of_pair: torch.Tensor, num_experts: int) -> torch.Tensor:
    """int64 [P]: how many earlier pairs go to the same expert as each pair, from a running count per expert
    (P x num_experts integers: meant for decode's few pairs; it reads nothing on the host)."""
    pairs = expert_of_pair.numel()
    one_hot = torch.zeros(pairs, num_experts, dtype=torch.int64, device=expert_of_pair.device)
    one_hot.scatter_(1, expert_of_pair.unsqueeze(1), 1)
    return one_hot.cumsum(0).gather(1, expert_of_pair.unsqueeze(1)).squeeze(1) - 1

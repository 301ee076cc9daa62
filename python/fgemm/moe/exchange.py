"""The layer's one communication primitive: torch.distributed.all_to_all_single along the first dimension,
with a failure reported as an error that says which exchange failed and why it may have."""

from typing import List, Optional

import torch
import torch.distributed as dist


def all_to_all_rows(output: torch.Tensor, tensor: torch.Tensor, output_splits: Optional[List[int]],
                    input_splits: Optional[List[int]], group, what: str) -> None:
    """Sends input_splits[r] rows of `tensor` to rank r and receives output_splits[r] rows from it into `output`
    (None: equal splits). Raises RuntimeError naming `what` when a peer failed or the group's timeout expired,
    instead of the backend's bare message."""
    try:
        dist.all_to_all_single(output, tensor, output_splits, input_splits, group=group)
    except RuntimeError as error:  # torch.distributed's DistBackendError among them
        raise RuntimeError(
            f"fgemm.moe: the all_to_all of {what} failed on rank {dist.get_rank(group)} of "
            f"{dist.get_world_size(group)}: a peer rank failed, or the process group's timeout expired "
            f"({error})") from error

"""Stand-in for the grouped_gemm package (github.com/fanshiqing/grouped_gemm) that Megatron-Core's legacy
GroupedMLP calls: `ops.gmm(a, b, batch_sizes, trans_b=False)`, one GEMM per expert over consecutive row blocks of
`a` (`batch_sizes`, on the host, rows per expert) with the expert's weight `b[e]`, run here as torch's grouped GEMM
(torch._grouped_mm, bf16, Hopper), which has a backward. Only the kernel provider changes: Megatron-Core's router,
token dispatcher, permutation and its host synchronisation run as shipped (validation/megatron/mcore_moe_host.py).
"""
import torch


class _Ops:
    @staticmethod
    def gmm(a, b, batch_sizes, trans_b=False):
        if trans_b:
            b = b.transpose(-1, -2)
        offs = torch.cumsum(batch_sizes.to(torch.int64), 0).to(torch.int32).to(a.device, non_blocking=True)
        return torch._grouped_mm(a, b, offs=offs)


ops = _Ops()

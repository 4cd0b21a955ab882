"""FP8 linear layers for the blind checks (program gpt-ln-fp8): torch._scaled_mm with tensorwise dynamic scaling.

Every call of a Float8Linear (a drop-in nn.Linear: same weight and bias parameters, so DDP, FSDP2 and DTensor TP
see ordinary bf16 parameters):
  forward   x (bf16) and the weight are cast to float8_e4m3fn with one scale each, scale = 448 / amax(|t|)
            (amax of the current tensor: dynamic, no history), y = _scaled_mm(x8, w8^T) * (1/sx)(1/sw) + bias,
            output bf16; x8 and w8 are saved for the backward (not the bf16 x).
  backward  the output gradient is cast to float8_e5m2 (scale = 57344 / amax), dgrad = _scaled_mm(g8, w8) and
            wgrad = _scaled_mm(g8^T, x8), both bf16 out; the bias gradient is the bf16 sum of g.
cuBLASLt takes the first operand row-major and the second column-major, so w8 (dgrad), g8^T and x8 (wgrad) are
transposed into contiguous copies (what Transformer Engine's cast-transpose kernels produce).
Casting: amax by torch.linalg.vector_norm(ord=inf) (one reduction), then multiply, clamp to the format's range
and convert (eager PyTorch kernels; no fusion). torch 2.11 runs _scaled_mm on the CPU too (functional checks).
"""
import torch
import torch.nn as nn

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
MAX = {E4M3: 448.0, E5M2: 57344.0}
RECIPE = "tensorwise dynamic scaling, e4m3 activations/weights, e5m2 gradients, torch._scaled_mm"


def to_fp8(t, dtype):
    """(t cast to dtype with one scale, the inverse scale as a 0-dim fp32 tensor)."""
    fmax = MAX[dtype]
    amax = torch.linalg.vector_norm(t, ord=float("inf")).float().clamp(min=1e-12)
    scale = fmax / amax
    t8 = (t * scale).clamp(-fmax, fmax).to(dtype)
    return t8, scale.reciprocal()


def scaled_mm(a, b, sa, sb, bias=None):
    """a (M, K) row-major fp8, b (K, N) column-major fp8 -> bf16 a @ b * sa * sb (+ bias)."""
    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bias, out_dtype=torch.bfloat16)


class _Fp8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        x8, sx = to_fp8(x2, E4M3)
        w8, sw = to_fp8(weight, E4M3)
        y = scaled_mm(x8, w8.t(), sx, sw, bias)
        ctx.save_for_backward(x8, sx, w8, sw)
        ctx.has_bias, ctx.shape = bias is not None, shape
        return y.view(*shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad):
        x8, sx, w8, sw = ctx.saved_tensors
        g2 = grad.reshape(-1, grad.shape[-1])
        g8, sg = to_fp8(g2, E5M2)
        dx = scaled_mm(g8, w8.t().contiguous().t(), sg, sw)  # (T, out) @ (out, in)
        dw = scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(), sg, sx)  # (out, T) @ (T, in)
        db = g2.sum(0) if ctx.has_bias else None
        return dx.view(ctx.shape), dw, db


class Float8Linear(nn.Linear):
    def forward(self, x):
        return _Fp8Linear.apply(x, self.weight, self.bias)


def convert_blocks(blocks, names=("qkv", "proj", "fc", "fc2")):
    """Turns the named nn.Linear of every block into a Float8Linear in place (same parameters). Returns how many."""
    n = 0
    for blk in blocks:
        for name in names:
            lin = getattr(blk, name)
            if type(lin) is nn.Linear:
                lin.__class__ = Float8Linear
                n += 1
    return n

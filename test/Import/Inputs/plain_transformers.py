"""A GPT-2 block and a BERT encoder written in plain torch, as users write
them (nn.Linear projections, a causal or padding mask, GELU, dropout,
layer norm), built as `plain_transformers.py:Class` by dlc-import's tests.
Inputs are feature vectors [N, T, C]; the heads mean-pool over positions."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    """GPT-2's attention (nanoGPT's): one fused qkv projection, heads split
    by view, a lower-triangular mask registered as a buffer, softmax,
    dropout."""

    def __init__(self, d, heads, t, dropout, fill=float("-inf")):
        super().__init__()
        self.heads, self.fill = heads, fill
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("bias", torch.tril(torch.ones(t, t)).view(1, 1, t, t))

    def forward(self, x):
        n, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(n, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(n, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(n, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        # nanoGPT slices the buffer to t (self.bias[:, :, :t, :t]), which
        # torch.fx cannot trace (a traced size as a slice index): the
        # buffer here is made for the sequence length.
        att = att.masked_fill(self.bias == 0, self.fill)
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(n, t, c)
        return self.resid_dropout(self.c_proj(y))


class Gpt2Block(nn.Module):
    """Pre-norm block: x + attn(ln_1(x)), then x + mlp(ln_2(x)), GELU (tanh).
    `fill` other than -inf is a masked fill dlc-import refuses."""

    def __init__(self, d=32, heads=4, t=6, classes=5, dropout=0.1, fill=float("-inf")):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, t, dropout, fill)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.dropout(self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")))
        return self.head(x.mean(dim=1))


class BertLayer(nn.Module):
    """Post-norm layer: separate q, k, v projections, an additive padding
    mask, softmax, dropout, GELU (erf)."""

    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_norm = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, 4 * d)
        self.output = nn.Linear(4 * d, d)
        self.out_norm = nn.LayerNorm(d, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def split(self, x):
        n, t, c = x.shape
        return x.view(n, t, self.heads, c // self.heads).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.shape[0], ctx.shape[1], -1)
        x = self.attn_norm(x + self.dropout(self.attn_out(ctx)))
        return self.out_norm(x + self.dropout(self.output(F.gelu(self.intermediate(x)))))


class BertEncoder(nn.Module):
    """Two BERT layers; the additive mask hides the last `pad` positions."""

    def __init__(self, d=32, heads=4, layers=2, t=6, pad=2, classes=5, dropout=0.1):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer(d, heads, dropout) for _ in range(layers))
        keep = torch.ones(t)
        keep[t - pad:] = 0
        self.register_buffer("mask", ((1.0 - keep) * -10000.0).view(1, 1, 1, t))
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, self.mask)
        return self.head(x.mean(dim=1))

"""Is the PyTorch peer's model dlc's model? One training step of each, from
the same parameters and batch, must agree.

  peers_same.py init MODEL DIR       writes the peer's initial parameters and
                                     buffers under dlc's names, and its
                                     synthetic batch, as DIR/<name>.npy
  peers_same.py check MODEL DIR OUT  runs one step of the peer (its model,
                                     its loss, its optimizer from the model
                                     file) and compares the loss, every
                                     gradient, every updated parameter and
                                     running statistic with dlc's --dump-out

The name maps below are the only thing written for the test: the model,
the batch and the optimizer are bench/peers' own. Dropout is off on both
sides (the test runs dlc on a copy of the model with rate 0, and the peer's
transformer in eval mode, which has no batch norm to change).
"""

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench", "peers"))
import common  # noqa: E402
import torch_models  # noqa: E402
import torch_peer  # noqa: E402

TOLERANCE = 1e-4  # relative, per tensor, as torch_step.py
BATCH = int(os.environ.get("PEERS_SAME_BATCH", "4"))


def conv_bn(dlc, peer):
    return {dlc + "_w": peer + ".0.weight", dlc + "_g": peer + ".1.weight",
            dlc + "_b": peer + ".1.bias", dlc + "_rm": peer + ".1.running_mean",
            dlc + "_rv": peer + ".1.running_var"}


def names(model):
    """dlc's train.name -> the peer's state_dict name."""
    if model == "mlp":
        return {"w1": "fc1.weight", "b1": "fc1.bias", "w2": "fc2.weight", "b2": "fc2.bias"}
    if model == "small_convnet":
        out = {"fc_w": "fc.weight", "fc_b": "fc.bias"}
        for n in ("stem", "c1", "c2", "c3"):
            out.update(conv_bn(n, n))
        return out
    if model == "tiny_transformer":
        out = {"wte": "wte", "wpe": "wpe", "lm_head.weight": "lm_head.weight"}
        for dlc, peer in [("ln1", "block.ln1"), ("ln2", "block.ln2"), ("ln_f", "ln_f"),
                          ("attn.q", "block.q"), ("attn.k", "block.k"), ("attn.v", "block.v"),
                          ("attn.proj", "block.proj"), ("mlp.fc", "block.fc"),
                          ("mlp.proj", "block.fc_proj")]:
            out.update({dlc + ".weight": peer + ".weight", dlc + ".bias": peer + ".bias"})
        return out
    if model == "resnet50":
        out = {"conv1.weight": "stem.0.weight", "fc.weight": "fc.weight", "fc.bias": "fc.bias"}
        out.update(bn("bn1", "stem.1"))
        index = 0
        for layer, blocks in enumerate([3, 4, 6, 3], 1):
            for i in range(blocks):
                d, p = "layer%d.%d." % (layer, i), "layers.%d." % index
                for k in (1, 2, 3):
                    out[d + "conv%d.weight" % k] = p + "conv%d.0.weight" % k
                    out.update(bn(d + "bn%d" % k, p + "conv%d.1" % k))
                if i == 0:
                    out[d + "downsample.0.weight"] = p + "downsample.0.weight"
                    out.update(bn(d + "downsample.1", p + "downsample.1"))
                index += 1
        return out
    if model == "bert_base":
        e = "bert.embeddings."
        out = {e + "word_embeddings.weight": "word", e + "position_embeddings.weight": "position",
               e + "token_type_embeddings.weight": "token_type",
               "cls.predictions.bias": "decoder_bias"}
        pairs = [(e + "LayerNorm", "ln"), ("bert.pooler.dense", "pooler"),
                 ("cls.seq_relationship", "nsp"), ("cls.predictions.transform.dense", "transform"),
                 ("cls.predictions.transform.LayerNorm", "transform_ln")]
        for i in range(12):
            d, p = "bert.encoder.layer.%d." % i, "layers.%d." % i
            pairs += [(d + "attention.self.query", p + "q"), (d + "attention.self.key", p + "k"),
                      (d + "attention.self.value", p + "v"),
                      (d + "attention.output.dense", p + "proj"),
                      (d + "attention.output.LayerNorm", p + "ln1"),
                      (d + "intermediate.dense", p + "fc"), (d + "output.dense", p + "fc_proj"),
                      (d + "output.LayerNorm", p + "ln2")]
        for dlc, peer in pairs:
            out.update({dlc + ".weight": peer + ".weight", dlc + ".bias": peer + ".bias"})
        return out
    sys.exit("peers_same.py: no name map for %s" % model)


def bn(dlc, peer):
    return {dlc + "." + k: peer + "." + k
            for k in ("weight", "bias", "running_mean", "running_var")}


# A key bias's gradient is mathematically zero (softmax ignores a constant
# per query); both sides compute rounding noise, which AdamW scales to full
# steps: bounded instead, as in torch_step.py.
ZERO_GRADIENT = {"tiny_transformer": {"attn.k.bias"},
                 "bert_base": {"bert.encoder.layer.%d.attention.self.key.bias" % i
                               for i in range(12)}}


def peer_model(model):
    m = torch_models.build(model, 0)
    if model in ("tiny_transformer", "bert_base"):  # no batch norm
        m.eval()
    else:
        m.train()
    return m


def init(model, out):
    os.makedirs(out, exist_ok=True)
    state = peer_model(model).state_dict()
    for dlc, peer in names(model).items():
        np.save(os.path.join(out, dlc + ".npy"), state[peer].numpy())
    batch = torch_models.make_batch(model, BATCH, 1, "cpu")
    for (name, _, _), t in zip(common.inputs_of(model, BATCH), batch):
        np.save(os.path.join(out, name + ".npy"), t.numpy())


def peer_step(model, src, dtype):
    """One step of the peer from DIR: (loss, gradients, state after, lr)."""
    m = peer_model(model).to(dtype)
    state = m.state_dict()
    with torch.no_grad():
        for dlc, peer in names(model).items():
            state[peer].copy_(torch.from_numpy(np.load(os.path.join(src, dlc + ".npy"))))
    batch = [torch.from_numpy(np.load(os.path.join(src, n + ".npy")))
             for n, _, _ in common.inputs_of(model, BATCH)]
    batch = [t.to(dtype) if t.is_floating_point() else t for t in batch]
    params = dict(m.named_parameters())
    opt = torch_peer.make_optimizer(torch, m, common.optimizer_of(model))
    loss = m(*batch)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in params.items()}
    opt.step()
    return loss, grads, m.state_dict(), opt.param_groups[0]["lr"], params


def check(model, src, dump):
    """Against the peer in float32; with PEERS_SAME_REFERENCE=float64, against
    the peer in float64, allowing each tensor twice the float32 peer's own
    distance from it (deep batch-norm nets at tiny batches have gradients
    that float32 cannot pin down to 1e-4)."""
    reference = os.environ.get("PEERS_SAME_REFERENCE", "float32")
    step = peer_step(model, src, getattr(torch, reference))
    base = peer_step(model, src, torch.float32) if reference != "float32" else None
    return judge(model, dump, names(model), step, base, ZERO_GRADIENT.get(model, ()))


def distance(mine, theirs):
    """Relative distance of a tensor from a reference: max |mine - theirs|
    over max |theirs|."""
    return (mine.detach().double() - theirs).abs().max().item() / \
        max(theirs.abs().max().item(), 1e-12)


def judge(model, dump, mapping, step, base=None, zero=(), distance_from=None):
    """Compares dlc's --dump-out with a PyTorch step (loss, gradients, state
    after, lr, parameters), as returned by peer_step; mapping: dlc's name ->
    the peer's. With `base`, the same step in float32 while `step` ran in
    float64, each tensor may be twice base's distance from step (and 1e-4).
    `base` may be a list of float32 steps (valid float32 steps that differ
    only in their kernels' summation order): then twice the farthest one's
    distance, float32's own spread sampled more than once. `distance_from`:
    for each float32 step, the float64 step its distance is measured from,
    where it is not `step` (test/Import/kinks.py: the float64 step with
    that float32 step's kink decisions, `step` having dlc's)."""
    loss, grads, state, lr, params = step
    failures, worst, compared = [], 0.0, 0
    bases = [] if base is None else base if isinstance(base, list) else [base]

    def allowed(label):
        if not bases:
            return TOLERANCE
        kind, name = label.split(" ", 1)
        pick = {"loss": lambda s: s[0], "grad": lambda s: s[1][mapping[name]],
                "updated": lambda s: s[2][mapping[name]],
                "running": lambda s: s[2][mapping[name]]}[kind]
        origins = distance_from or [step] * len(bases)
        return max(TOLERANCE, 2 * max(distance(pick(b), pick(o).detach().double())
                                      for b, o in zip(bases, origins)))

    def load(name):
        return torch.from_numpy(np.load(os.path.join(dump, name))).double()

    def compare(label, ours, theirs):
        nonlocal worst, compared
        compared += 1
        theirs = theirs.detach().double()
        if ours.shape != theirs.shape:
            failures.append("%s: shape %s vs peer %s" % (label, tuple(ours.shape), tuple(theirs.shape)))
            return
        err = (ours - theirs).abs().max().item() / max(theirs.abs().max().item(), 1e-12)
        worst = max(worst, err)
        bound = allowed(label)
        if not err <= bound:
            failures.append("%s: relative error %.3g > %.3g" % (label, err, bound))

    compare("loss loss", load("loss.npy"), loss)
    for dlc, peer in mapping.items():
        if peer not in params:  # a buffer: the running statistics
            compare("running " + dlc, load(dlc + ".npy"), state[peer])
            continue
        if dlc in zero:
            compared += 2
            if not load(dlc + ".grad.npy").abs().max().item() <= 1e-6:
                failures.append("grad %s: not noise-sized" % dlc)
            if not (load(dlc + ".npy") - state[peer].double()).abs().max().item() <= 2 * lr:
                failures.append("updated %s: moved more than 2 lr apart" % dlc)
            continue
        compare("grad " + dlc, load(dlc + ".grad.npy"), grads[peer])
        compare("updated " + dlc, load(dlc + ".npy"), state[peer])
    covered = len([p for p in mapping.values() if p in params])
    if covered != len(params):
        failures.append("the map covers %d of the peer's %d parameters" % (covered, len(params)))
    print("%s: %d tensors of the peer's step compared with dlc's, worst relative error %.3g "
          "(tolerance %s)" % (model, compared, worst, TOLERANCE if not bases else
                              "twice the float32 peer's distance from the float64 peer" if len(bases) == 1
                              else "twice the farther float32 peer's distance from the float64 peer"))
    for f in failures:
        print("MISMATCH " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "init":
        init(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)

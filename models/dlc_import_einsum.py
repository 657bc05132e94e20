"""torch.einsum as dlc-import writes it: the contractions models write,
lowered to the train dialect's transpose, reshape, reduce_sum and matmul.

Two operands: every label is a batch label (in both operands and the
output), a free label of one operand (in it and the output), or a
contracted label (in both, not in the output); a label in one operand only
and not in the output is summed first. Each operand is arranged as
[batch..., free..., contracted...] (or with its last two groups swapped, as
matmul's transpose flags read it, when that saves a transpose), its free and
contracted labels folded into one dimension each, and one batched
train.matmul multiplies them; the result is unfolded and transposed into the
output's order. With nothing contracted, the product is a broadcast
train.mul instead. One operand: a sum over the labels the output drops, then a
transpose. Refused: more than two operands, an ellipsis, a label repeated in
one operand (a diagonal), a label whose sizes differ between the operands
(broadcasting).

MaxViT's attention, "B G H I D, B G H J D -> B G H I J" and "B G H I J,
B G H J D -> B G H I D", becomes two matmuls and nothing else.
"""


def _tensor(imp, node, v):
    from dlc_import_ops import _tensor as tensor
    return tensor(imp, node, v)


def _product(sizes):
    out = 1
    for s in sizes:
        if s is None:
            return None
        out *= s
    return out


def _arrange(imp, x, labels, order):
    """x (labels in its dimension order) transposed so its labels read `order`."""
    if labels == order:
        return x
    return imp.b.transpose(x, [labels.index(lab) for lab in order])


def _reshape(imp, x, shape):
    return x if list(x.shape) == list(shape) else imp.b.reshape(x, shape)


def _sum_out(imp, x, labels, keep):
    """Sums the labels of x that `keep` does not hold."""
    drop = [i for i, lab in enumerate(labels) if lab not in keep]
    if not drop:
        return x, labels
    return imp.b.reduce("reduce_sum", x, drop), [lab for lab in labels if lab in keep]


def _parse(imp, node, equation, count):
    eq = equation.replace(" ", "")
    if "." in eq:
        imp.refuse(node, "einsum %r" % equation, "an ellipsis is not supported")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != count:
        imp.refuse(node, "einsum %r" % equation, "the equation names %d operands, %d given"
                   % (len(ins), count))
    if not arrow:  # implicit output: the labels that appear once, sorted
        every = "".join(ins)
        out = "".join(sorted(lab for lab in set(every) if every.count(lab) == 1))
    for labels in ins + [out]:
        if len(set(labels)) != len(labels):
            imp.refuse(node, "einsum %r" % equation, "a label repeated in one operand (a diagonal)")
    return [list(s) for s in ins], list(out)


def fn_einsum(imp, node, args, kwargs):
    operands = list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    if len(operands) not in (1, 2):
        imp.refuse(node, "einsum of %d operands" % len(operands), "two at most")
    xs = [_tensor(imp, node, x) for x in operands]
    ins, out = _parse(imp, node, args[0], len(xs))
    size = {}
    for x, labels in zip(xs, ins):
        if len(labels) != len(x.shape):
            imp.refuse(node, "einsum %r" % args[0], "operand of rank %d for %d labels"
                       % (len(x.shape), len(labels)))
        for lab, s in zip(labels, x.shape):
            if size.setdefault(lab, s) != s:
                imp.refuse(node, "einsum %r" % args[0], "label %s has sizes %s and %s (broadcasting)"
                           % (lab, size[lab], s))
    missing = [lab for lab in out if lab not in size]
    if missing:
        imp.refuse(node, "einsum %r" % args[0], "output label %s is in no operand" % missing[0])

    if len(xs) == 1:
        x, labels = _sum_out(imp, xs[0], ins[0], out)
        return _arrange(imp, x, labels, out)

    (a, b), (la, lb) = xs, ins
    a, la = _sum_out(imp, a, la, set(lb) | set(out))
    b, lb = _sum_out(imp, b, lb, set(la) | set(out))
    if not any(lab in lb and lab not in out for lab in la):
        # Nothing contracted: a broadcast product, each operand spread over
        # the output's order with 1 for the labels it lacks.
        def spread(x, labels):
            x = _arrange(imp, x, labels, [lab for lab in out if lab in labels])
            return _reshape(imp, x, [size[lab] if lab in labels else 1 for lab in out])
        return imp.b.binary("mul", spread(a, la), spread(b, lb))
    batch = [lab for lab in out if lab in la and lab in lb]
    free_a = [lab for lab in la if lab not in lb]
    free_b = [lab for lab in lb if lab not in la]
    contracted = [lab for lab in la if lab in lb and lab not in out]
    m, k, n = (_product([size[lab] for lab in g]) for g in (free_a, contracted, free_b))
    lead = [size[lab] for lab in batch]

    # Whichever of matmul's two readings of each operand needs no transpose.
    ta = la == batch + contracted + free_a and la != batch + free_a + contracted
    a = _arrange(imp, a, la, batch + (contracted + free_a if ta else free_a + contracted))
    a = _reshape(imp, a, lead + ([k, m] if ta else [m, k]))
    tb = lb == batch + free_b + contracted and lb != batch + contracted + free_b
    b = _arrange(imp, b, lb, batch + (free_b + contracted if tb else contracted + free_b))
    b = _reshape(imp, b, lead + ([n, k] if tb else [k, n]))

    c = imp.b.matmul(a, b, ta=ta, tb=tb)
    c = _reshape(imp, c, lead + [size[lab] for lab in free_a + free_b])
    return _arrange(imp, c, batch + free_a + free_b, out)

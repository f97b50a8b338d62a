"""%graph marks where a graph is cut: frozen parameters of the learner's modules, and which input
each saved constant was. Torch is the oracle for what gets a gradient."""
import torch
import torch.nn.functional as F

import autograd_lab as al
from autograd_lab.graph import snapshot
from autograd_lab.stepper.cuts import frozen_in, frozen_parameters, input_names


def reached(loss, params):
    """Which parameters a real backward reaches (torch's answer), on a graph we may keep."""
    wanted = [p for p in params if p.requires_grad]
    grads = torch.autograd.grad(loss, wanted, retain_graph=True, allow_unused=True)
    return {id(p) for p, g in zip(wanted, grads, strict=True) if g is not None}


def gan():
    torch.manual_seed(0)
    G, D = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    noise, ones = torch.randn(4, 2), torch.ones(4, 1)
    return G, D, noise, ones


def test_frozen_discriminator_is_named_at_its_stop_and_listed():
    G, D, noise, ones = gan()
    D.requires_grad_(False)
    fake = G(noise)
    g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
    names = {"G": G, "D": D, "noise": noise, "ones": ones, "fake": fake, "g_loss": g_loss}
    text = repr(al.show_graph(g_loss, names=names))
    assert "D.weight, a frozen parameter (requires_grad=False)" in text
    assert "frozen (requires_grad=False, so no node and no .grad): D.weight, D.bias" in text
    # the oracle: the backward reaches G's parameters and nothing of D's
    assert reached(g_loss, [*G.parameters(), *D.parameters()]) == {id(p) for p in G.parameters()}
    assert all(p.grad is None for p in [*G.parameters(), *D.parameters()])


def test_fine_tuning_lists_the_frozen_layer_that_left_no_node():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model[0].requires_grad_(False)
    loss = model(torch.randn(5, 3)).pow(2).mean()
    view = al.show_graph(loss, names={"model": model, "loss": loss})
    leaves = [n.label for n in view.graph.leaves()]
    assert leaves == ["model.2.bias", "model.2.weight"]
    assert reached(loss, list(model.parameters())) == {id(model[2].weight), id(model[2].bias)}
    assert repr(view).endswith("frozen (requires_grad=False, so no node and no .grad): "
                               "model.0.weight, model.0.bias")


def test_a_frozen_module_that_plays_no_part_is_not_listed():
    w = torch.ones(2, requires_grad=True)
    unused = torch.nn.Linear(2, 1).requires_grad_(False)
    loss = (w * 3).sum()
    names = {"w": w, "unused": unused}
    assert frozen_in(snapshot(loss, names), names) == []
    assert "frozen" not in repr(al.show_graph(loss, names=names))


def test_nothing_frozen_keeps_the_view_as_before():
    G, D, noise, _ = gan()
    fake = G(noise)
    d_loss = F.binary_cross_entropy_with_logits(D(fake.detach()), torch.zeros(4, 1))
    text = repr(al.show_graph(d_loss, names={"G": G, "D": D, "fake": fake, "d_loss": d_loss}))
    assert "frozen" not in text
    assert "a detach() of fake: same memory, cut from the graph" in text


def test_frozen_parameters_are_found_once_in_nested_modules():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    model[0].requires_grad_(False)
    found = frozen_parameters({"model": model, "first": model[0], "_": model})
    assert [label for _, label, _ in found] == ["model.0.weight", "model.0.bias"]


def test_input_names_follow_the_schema_and_refuse_when_unsure():
    x = torch.ones(2, 3, requires_grad=True)
    w = torch.ones(3, 4)
    b = torch.ones(4)
    graph = snapshot(torch.addmm(b, x, w).sum())
    addmm = graph.nodes[1]
    assert addmm.name == "AddmmBackward0"
    assert input_names(addmm) == ("self", "mat1", "mat2")
    # where(condition, self, other): the condition has no edge, so counting schema inputs is ambiguous
    where = snapshot(torch.where(x > 0, x, x * 2).sum()).nodes[1]
    assert where.name == "WhereBackward0"
    assert input_names(where) is None


def test_each_of_two_stops_gets_its_own_input():
    x = torch.ones(2, 3, requires_grad=True)
    w = torch.full((3, 4), 2.0)
    b = torch.zeros(4)
    out = torch.addmm(b, x.exp(), w).sum()
    names = {"x": x, "w": w, "b": b, "out": out}
    text = repr(al.show_graph(out, names=names))
    assert "stop at input 3 of node 1 (AddmmBackward0): w, which does not require grad" in text
    # b was not saved by addmm (its gradient needs nothing): the lab does not guess
    assert "stop at input 1 of node 1 (AddmmBackward0): an input that does not require grad" in text

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


def figure_words(view):
    """Every text drawn in the view's figure (the title and notes, node names, stop labels), and
    whether each lies inside the figure once rendered."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = view.figure()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    texts = [t for t in fig.texts + fig.axes[0].texts if t.get_text()]
    inside = [fig.bbox.x0 - 1 <= t.get_window_extent(renderer).x0 and
              t.get_window_extent(renderer).x1 <= fig.bbox.x1 + 1 for t in texts]
    return [t.get_text() for t in texts], inside, [t.get_window_extent(renderer) for t in fig.axes[0].texts
                                                    if t.get_text().startswith("stop")]


def test_the_figure_marks_frozen_parameters_and_what_cut_each_stop():
    G, D, noise, ones = gan()
    D.requires_grad_(False)
    fake = G(noise)
    g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
    names = {"G": G, "D": D, "noise": noise, "ones": ones, "fake": fake, "g_loss": g_loss}
    words, inside, stops = figure_words(al.show_graph(g_loss, names=names))
    assert words[0] == "backward graph of g_loss\nfrozen (no node, no .grad): D.weight, D.bias"
    assert {"stop: D.weight (frozen)", "stop: ones", "stop: noise"} <= set(words)
    assert all(inside)
    # two stops of one node (addmm's input and D's weight) are drawn apart, not on top of each other
    assert not any(a.overlaps(b) for i, a in enumerate(stops) for b in stops[i + 1:])
    # torch: G's parameters get a gradient and nothing of D's does
    assert reached(g_loss, [*G.parameters(), *D.parameters()]) == {id(p) for p in G.parameters()}


def test_the_figure_names_a_detach_and_keeps_plain_stops_plain():
    G, D, noise, _ = gan()
    fake = G(noise)
    d_loss = F.binary_cross_entropy_with_logits(D(fake.detach()), torch.zeros(4, 1))
    words, inside, _ = figure_words(al.show_graph(d_loss, names={"G": G, "D": D, "fake": fake, "d_loss": d_loss}))
    assert "stop: detach() of fake" in words and "stop" in words
    assert words[0] == "backward graph of d_loss" and all(inside)
    assert reached(d_loss, list(G.parameters())) == set()


def test_graph_output_is_bounded_for_a_ten_thousand_node_loop(ip):
    import re

    from IPython.utils.capture import capture_output

    ip.run_cell("import torch\nx = torch.tensor([0.5], requires_grad=True)\ny = x\n"
                "for _ in range(10_000):\n    y = y * 1.0001\n")
    with capture_output() as out:
        ip.run_line_magic("graph", "y")
    assert out.stderr == ""
    for output in out.outputs:
        data = output.data
        pictures = [len(p) for p in re.findall(r'src="data:image/png;base64,[^"]*"', data.get("text/html", ""))]
        text = len(data.get("text/plain", "")) + len(data.get("text/html", "")) - sum(pictures)
        assert text <= 100_000
        assert all(p <= 200_000 for p in pictures) and len(data.get("image/png", b"")) <= 200_000
    text = out.outputs[-1].data["text/plain"]
    assert text.startswith("backward graph of y: 10001 nodes, 1 leaf, 10000 places where backprop stops")
    assert "(9951 nodes not shown)" in text
    assert "\n0      MulBackward0 (y)" in text and "\n10000  AccumulateGrad (x)" in text
    assert "every one of the 10001 is in autograd_lab.show_graph(y).graph.nodes" in text
    assert "and 9980 more places where backprop stops" in text
    assert ip.user_ns["x"].grad is None


def test_a_node_with_many_inputs_names_the_first_few():
    x = torch.ones(1, requires_grad=True)
    out = torch.cat([x * i for i in range(30)]).sum()
    text = repr(al.show_graph(out, names={"x": x}))
    cat_row = next(line for line in text.splitlines() if "CatBackward0" in line)
    assert cat_row.endswith("and 22 more")


def test_a_node_with_thousands_of_stops_draws_three_and_counts_the_rest():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    x = torch.ones(1, requires_grad=True)
    out = torch.cat([x] + [torch.full((1,), float(i)) for i in range(5000)]).sum()
    view = al.show_graph(out, names={"x": x, "out": out})
    fig = view.figure()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    texts = fig.axes[0].texts
    stops = [t for t in texts if t.get_text().startswith(("stop", "and "))]
    assert [t.get_text() for t in stops] == ["stop", "stop", "and 4998 more stops"]
    boxes = [t.get_window_extent(renderer) for t in texts if t not in stops]
    labels = [t.get_window_extent(renderer) for t in stops]
    assert not any(a.overlaps(b) for a in labels for b in boxes)
    assert not any(a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1:])
    assert len(repr(view)) + len(view.html()) < 20_000
    assert torch.autograd.grad(out, x)[0].item() == 1.0 and x.grad is None

"""Personal variants: exercise(name, seed=N) gives every numeric exercise its own values,
deterministically, and its expected answer is still what torch computes from the code it shows."""
import pytest
import torch

from autograd_lab.practice.bank import exercise, exercises
from autograd_lab.practice.forms import FunctionForm, PartsForm, TensorForm

pytestmark = pytest.mark.usefixtures("fresh_progress")


def jacobian(ns):
    j = torch.autograd.functional.jacobian(lambda t: t**3, ns["x"].detach())
    return j.diagonal()


# An answer part that is not a tensor of the setup (x.grad, g) needs its own oracle.
SPECIAL = {("jacobian_shape", "diagonal"): jacobian}


def tensor_parts(ex) -> list[str]:
    """The labels of the parts of an exercise's answer that are tensors ("x.grad", "g", "diagonal")."""
    if isinstance(ex.form, PartsForm):
        return [label for label, f in ex.form.parts if isinstance(f, TensorForm)]
    return [ex.form.what] if isinstance(ex.form, TensorForm) else []


def oracle(name: str, label: str):
    """What torch says a part is, read off the namespace of the exercise's own setup code: a leaf's
    .grad for "x.grad", the tensor itself for a name of the setup, else its SPECIAL oracle."""
    if (name, label) in SPECIAL:
        return SPECIAL[name, label]
    if label.endswith(".grad"):
        return lambda ns: ns[label.removesuffix(".grad")].grad
    return lambda ns: ns[label]


def truths(name: str, ns) -> tuple:
    return tuple(oracle(name, label)(ns) for label in tensor_parts(exercise(name)))


# every exercise whose answer holds a tensor (symbolic_mean_square's is a formula: tested below)
TORCH = [e.name for e in exercises() if tensor_parts(exercise(e.name))]


def numeric(ex) -> bool:
    form = ex.form
    if isinstance(form, PartsForm):
        return any(isinstance(f, (TensorForm, FunctionForm)) for _, f in form.parts)
    return isinstance(form, (TensorForm, FunctionForm))


def numbers_of(expected):
    parts = expected if isinstance(expected, tuple) else (expected,)
    return tuple(p for p in parts if isinstance(p, torch.Tensor))


def test_every_numeric_exercise_is_covered():
    found = {e.name for e in exercises() if numeric(exercise(e.name))}
    assert found == set(TORCH) | {"symbolic_mean_square"}
    assert all(pair[0] in TORCH for pair in SPECIAL)  # no oracle left for an exercise that is gone


@pytest.mark.parametrize("name", sorted(TORCH))
def test_the_seed_changes_the_values_and_torch_still_gives_the_answer(name):
    seen = []
    for seed in (None, 1, 2, 3):
        ex = exercise(name, seed=seed)
        ns = {"torch": torch}
        exec(ex.setup, ns)
        truth = truths(name, ns)
        mine = numbers_of(ex.expected)
        assert len(mine) == len(truth)
        for m, t in zip(mine, truth, strict=True):
            assert torch.equal(m, t.detach()), (name, seed)
        seen.append(tuple(tuple(m.flatten().tolist()) for m in mine))
        assert exercise(name, seed=seed).setup == ex.setup  # deterministic
        if seed is not None:
            assert f"seed={seed}" in ex.make_code
    assert len(set(seen)) == len(seen), name


def test_a_seeded_variant_is_answered_by_its_own_numbers_only():
    a, b = exercise("mean_square", seed=1), exercise("mean_square", seed=2)
    xa = torch.tensor(eval(a.setup.split("torch.tensor(")[1].split(", dtype")[0]), dtype=torch.double,
                      requires_grad=True)
    (ga,) = torch.autograd.grad((xa**2).mean(), xa)
    assert torch.allclose(a.expected, ga)
    assert a.check([round(v, 4) for v in ga.tolist()]).correct
    assert not b.check([round(v, 4) for v in ga.tolist()]).correct


def test_symbolic_exercise_changes_its_samples_with_the_seed():
    one, two = exercise("symbolic_mean_square", seed=1), exercise("symbolic_mean_square", seed=2)
    assert not torch.equal(one.form.samples, two.form.samples)
    for ex in (one, two):
        rows = []
        for row in ex.form.samples:
            x = row.clone().requires_grad_()
            rows.append(torch.autograd.grad((x**2).mean(), x)[0])
        assert torch.allclose(ex.expected, torch.stack(rows))
        assert ex.check("2*x/n").correct


@pytest.mark.parametrize("name", sorted(TORCH))
def test_seeded_variants_keep_their_diagnoses_apart_from_the_answer(name):
    for seed in range(6):
        ex = exercise(name, seed=seed)
        for d in ex.diagnosers:
            if d.when is None and d.part is None:
                assert not ex.form.same(d.value, ex.expected), (name, seed, d.key)


@pytest.mark.parametrize("name", sorted(TORCH))
def test_no_two_mistakes_meet_by_accident_on_a_seeded_variant(name):
    """Two different mistakes that give the same numbers would make a diagnosis rest on a
    coincidence; the only pairs allowed are those that agree on other inputs too (the same mistake
    in two words, such as x for the sum of squares: x itself, or the power rule's factor missing)."""
    for seed in range(12):
        ex = exercise(name, seed=seed)
        plain = [d for d in ex.diagnosers if d.when is None]
        for i, a in enumerate(plain):
            for b in plain[i + 1:]:
                if a.part != b.part or a.message == b.message:
                    continue
                form = ex.form if a.part is None else ex.form.parts[a.part][1]
                if form.same(a.value, b.value):
                    assert a.variant is not None and b.variant is not None, (name, seed, a.key, b.key)
                    assert torch.allclose(a.variant, b.variant), (name, seed, a.key, b.key)

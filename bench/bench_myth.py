"""The myth check with numbers: does a shallow copy make backward slow, or does the graph?

Runs autograd_lab.compare_inputs on the two real causes the lesson teaches:
1. a batch sliced from a data tensor that requires grad (backward computes a gradient for all of
   the data, whatever the batch size);
2. a hidden state fed from step to step (backward walks every earlier step unless it is detached).
Prints the ratios measured in this run (times vary between machines; ratios hold) and ends with one
line `RESULT name=value ...`. Run: .venv/bin/python bench/bench_myth.py
"""
import torch

from autograd_lab import compare_inputs

torch.manual_seed(0)
torch.set_num_threads(1)  # a shared machine: one thread gives steadier ratios

W = torch.nn.Parameter(torch.randn(64, 64) * 0.1)
data = torch.randn(400_000, 64, requires_grad=True)  # about 98 MiB, like the smallest measured case


def batch_step(d):
    return (d[:64] @ W).pow(2).mean()


def rnn_step(h):
    nxt = torch.tanh(W @ h + 0.1)
    return nxt.pow(2).sum(), nxt


def main():
    data_cmp = compare_inputs(batch_step, data, steps=5, warmup=2)
    print("1. batch sliced from data that requires grad "
          f"({data.numel() * 4 / 2**20:.0f} MiB)")
    print(data_cmp)
    hidden = compare_inputs(rnn_step, torch.zeros(64), steps=300, warmup=0)
    print("\n2. hidden state carried across 300 steps")
    print(hidden)
    ratios = {
        "data_asis_over_detach": data_cmp.ratio("as is", "detach()"),
        "data_clone_over_detach": data_cmp.ratio("clone()", "detach()"),
        "data_clonedetach_over_detach": data_cmp.ratio("clone().detach()", "detach()"),
        "hidden_asis_over_detach_last": hidden.row("as is").last_backward_ms
        / max(hidden.row("detach()").last_backward_ms, 1e-6),
        "hidden_clone_over_detach_last": hidden.row("clone()").last_backward_ms
        / max(hidden.row("detach()").last_backward_ms, 1e-6),
    }
    print("\nratios (this run):")
    for name, value in ratios.items():
        print(f"  {name:32s} {value:8.1f}x")
    nodes = {f"hidden_{k}_nodes_last": hidden.row(v).last_nodes
             for k, v in (("asis", "as is"), ("clone", "clone()"), ("detach", "detach()"))}
    print("RESULT " + " ".join([f"{k}={v:.2f}" for k, v in ratios.items()] + [f"{k}={v}" for k, v in nodes.items()]))


if __name__ == "__main__":
    main()

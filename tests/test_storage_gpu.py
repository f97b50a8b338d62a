"""The storage lab on a GPU tensor: marked for a GPU check (skipped on machines without CUDA)."""
import pytest
import torch

import autograd_lab as al

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU check: needs a CUDA device")


def test_cuda_tensor_has_no_numpy_row_and_says_why():
    a = torch.tensor([1., 2., 3.], device="cuda", requires_grad=True)
    report = al.compare_storage(a)
    with pytest.raises(KeyError):
        report["detach().numpy()"]
    assert "numpy arrays live in CPU memory" in repr(report)
    assert report["detach()"].after_inplace == "error"
    assert report[".data"].after_inplace == "silently wrong"
    assert report["clone()"].after_inplace == "ok"

"""The error explainer: autograd's error messages explained in plain words, from the learner's code."""

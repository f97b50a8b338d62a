"""Diagnosis: autograd error messages explained, and why a backward is slow, measured."""

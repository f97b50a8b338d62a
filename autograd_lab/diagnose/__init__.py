"""Temporary: see view.py. The rooms are now autograd_lab/explain and autograd_lab/profile."""

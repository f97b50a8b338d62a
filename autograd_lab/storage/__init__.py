"""Storage lab: which copies of a tensor share memory and version, and what backward makes of an in-place edit."""

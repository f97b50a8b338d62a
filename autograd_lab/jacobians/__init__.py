"""The Jacobian room: the full matrix of derivatives of an output with respect to an input, and the
vector-Jacobian product that backward(v) computes without ever building it."""

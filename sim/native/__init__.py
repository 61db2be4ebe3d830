"""The native reference loop of ``netlock bench``: the microbenchmark as a C event loop."""

"""The CUDA backend: the optimized IR driven from the host, array ops as numba.cuda kernels.

``executor`` runs a module (kernels where ``RULES`` has one, NumPy on the host otherwise),
``kernels`` generates the kernel sources, ``scalar_code`` the per-element code of element-wise
ops, ``ptx`` lists a module's kernels and compiles them to PTX without a GPU, and ``device``
finds numba.cuda and a GPU. Nothing here is imported until a cuda target is used.
"""

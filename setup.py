"""The build of the engine's native module, ``engine.life._native`` (engine/life/_native.c:
the slot pools' Life kernel with an AVX2 copy chosen at run time, SHA-256, a board's view
text); everything else about the package is in pyproject.toml.

Optional: an install without a C compiler goes on, and the engine runs the same rules on
numpy (engine/life/bitplan.py, engine/life/rle.py; docs/architecture/ticking.md).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "engine.life._native",
            sources=["engine/life/_native.c"],
            depends=["engine/life/_strips_kernel.h", "engine/life/_sha256.h"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
